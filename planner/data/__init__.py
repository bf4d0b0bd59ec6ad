"""The one data-loading layer: real data sets, users' input CSVs, key-value data.

The files themselves are not shipped with the package (see
``../shared/data/README.md`` for provenance and licences: MovieLens
"ml-latest-small" via dslabs, GroupLens conditions; GSS vocabulary via carData,
GPL >= 2). Every loader takes an explicit path; library code never hard-codes one.
"""
from __future__ import annotations

from .datasets import (GSS_NUMERIC, GSSVocab, MovieLensRatings, default_data_dir, load_gss_vocab, load_movielens_ratings,
                       movielens_item_sets, resolve_data_path)
from .chunked import InputStream, concat_chunks, item_set_stream, item_stream, key_value_stream
from .stream import DEFAULT_CHUNK_ROWS, open_table_stream
from .inputs import MAX_INPUT_BYTES, CsvTable, read_csv_table, read_item_column, read_item_sets
from .keyvalue import KeyValueData, load_key_value_data, map_key_value_data
from .pie import PIE_GSS_FIELDS, count_pie_users, max_prior_from_weights, pie_gss_items

__all__ = [
    "MovieLensRatings", "load_movielens_ratings", "movielens_item_sets", "GSSVocab", "load_gss_vocab",
    "GSS_NUMERIC", "default_data_dir", "resolve_data_path",
    "CsvTable", "read_csv_table", "read_item_column", "read_item_sets", "MAX_INPUT_BYTES",
    "KeyValueData", "load_key_value_data", "map_key_value_data",
    "InputStream", "item_stream", "item_set_stream", "key_value_stream", "concat_chunks", "open_table_stream",
    "DEFAULT_CHUNK_ROWS",
    "PIE_GSS_FIELDS", "pie_gss_items", "count_pie_users", "max_prior_from_weights",
]
