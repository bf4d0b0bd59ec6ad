"""The chunked input reader of the family protocol (``Family.iter_inputs``), empty items, progress.

Issue 20 point 2 (inputs streamed, CSV and Parquet, memory bounded by the chunk), issue 16
finding 12 (rows with an empty item are an error unless ``--skip-empty``), issue 19 points 4
(ULDP ``simulate --data`` on the ``item`` CSV) and 6 (perturb progress by bytes on a terminal).
Every registered family goes through the one hook. Memory is measured (tracemalloc and
Arrow's allocator), never timed; the 10^7-row figure is in ``benchmarks/input_stream.py``.
"""
from __future__ import annotations

import io
import json
import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from _family_helpers import example_plan, perturb, small_example_per_family, write_inputs
from ldpplan.planner.data import DEFAULT_CHUNK_ROWS, concat_chunks, item_set_stream, item_stream, key_value_stream
from ldpplan.planner.errors import InputDataError

SMALL = small_example_per_family()
LABELS = ["no", "yes"]


def run(*args):
    from ldpplan.planner.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


def _as_lists(data):
    """A comparable form of any family's inputs (ndarray, dict, CSR tuple, KeyValueUsers)."""
    if isinstance(data, np.ndarray):
        return data.tolist()
    if isinstance(data, dict):
        return {k: np.asarray(v).tolist() for k, v in data.items()}
    if isinstance(data, tuple):
        return [np.asarray(a).tolist() for a in data]
    return [data.indptr.tolist(), data.keys.tolist(), data.values.tolist()]


def _join(fam_chunks):
    first = fam_chunks[0]
    return type(first).join(fam_chunks) if hasattr(type(first), "join") else concat_chunks(fam_chunks)


def _to_parquet(csv_path):
    header = csv_path.read_text().splitlines()[0].split(",")
    table = pacsv.read_csv(csv_path, convert_options=pacsv.ConvertOptions(column_types={c: pa.string()
                                                                                       for c in header}))
    out = csv_path.with_suffix(".parquet")
    pq.write_table(table, out, row_group_size=16)
    return out


def _readable_layout(fam, plan, tmp_path, n, rng):
    """The first pinned layout the family's chunked reader takes, with its chunks (chunk_rows = 7)."""
    errors = []
    for header, path in write_inputs(plan, tmp_path, n, rng):
        try:
            stream = fam.iter_inputs(plan, path, chunk_rows=7)
            return path, stream, list(stream)
        except InputDataError as exc:
            errors.append(f"{header}: {exc}")
    raise AssertionError(f"{fam.name}: no pinned layout was readable by iter_inputs: {errors}")


# --------------------------------------------------------------------------- every family, one hook
@pytest.mark.parametrize("fam, name", [c.values for c in SMALL], ids=[c.id for c in SMALL])
def test_every_family_streams_its_inputs_in_chunks_csv_and_parquet(fam, name, request, tmp_path):
    """Each registered family's iter_inputs yields several chunks on a file larger than the chunk,
    the chunks joined equal the whole read, each chunk is perturbed by the runtime, and the same
    rows as Parquet give the same chunks."""
    import ldpplan

    plan = example_plan(fam, name, request)
    n = 60
    path, stream, chunks = _readable_layout(fam, plan, tmp_path, n, np.random.default_rng(5))
    assert len(chunks) >= 2, f"{fam.name}: {len(chunks)} chunk(s) for {n} users at chunk_rows = 7"
    assert stream.users == n and stream.skipped_empty == 0
    assert stream.bytes_read == stream.total_bytes == path.stat().st_size
    assert _as_lists(_join(chunks)) == _as_lists(fam.read_inputs(plan, path))
    mech = ldpplan.load(plan)
    rng = np.random.default_rng(0)
    assert sum(len(perturb(mech, c, rng)) for c in chunks) == n
    parquet = list(fam.iter_inputs(plan, _to_parquet(path), chunk_rows=7))
    assert len(parquet) >= 2 and _as_lists(_join(parquet)) == _as_lists(_join(chunks))


@pytest.mark.parametrize("fam, name", [c.values for c in SMALL], ids=[c.id for c in SMALL])
def test_every_family_refuses_empty_items_unless_skip_empty(fam, name, request, tmp_path):
    """Issue 16 finding 12: a row with an empty item (pandas' NaN) is an error naming the count and
    the first lines; skip_empty drops exactly those rows and counts them."""
    plan = example_plan(fam, name, request)
    path, _, chunks = _readable_layout(fam, plan, tmp_path, 12, None)
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    item = "key" if "key" in header else "item" if "item" in header else header[0]  # records: the first attribute
    k = header.index(item)
    for i in (3, 7, 8):  # data rows 3, 7, 8 = file lines 4, 8, 9
        cells = lines[i].split(",")
        cells[k] = ""
        lines[i] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputDataError) as info:
        list(fam.iter_inputs(plan, path, chunk_rows=5))
    message = str(info.value)
    assert f"3 rows have an empty {item}" in message and "(first at line 4, line 8, line 9)" in message, message
    assert "--skip-empty" in message and "\n" not in message
    stream = fam.iter_inputs(plan, path, skip_empty=True, chunk_rows=5)
    kept = list(stream)
    assert stream.skipped_empty == 3 and stream.rows == 12
    assert stream.users == 12 - 3  # every user of the fixed layouts has one row


# --------------------------------------------------------------------------- bounded memory
def _write_items(path, n, rng):
    x = rng.integers(0, 2, size=n)
    path.write_text("item\n" + "\n".join(np.array(LABELS)[x]) + "\n")
    return x


def test_reading_is_chunked_and_memory_stays_bounded(tmp_path, monkeypatch):
    """A multi-chunk read holds a few CSV blocks and one chunk: its peak traced memory (numpy and
    Python) stays below 8 blocks + 64 bytes per chunk row, under the size of the whole-file result
    (8 bytes per row) that any whole-file read must exceed; Arrow's live allocation (the blocks
    pyarrow reads ahead, the batch) stays below 64 blocks, under the size of the file."""
    import ldpplan.planner.data.stream as stream_module

    block = 1 << 14
    monkeypatch.setattr(stream_module, "_BLOCK_BYTES", block)
    n, chunk = 600_000, 8192
    x = _write_items(tmp_path / "big.csv", n, np.random.default_rng(1))
    _write_items(tmp_path / "warm.csv", 10, np.random.default_rng(0))
    list(item_stream(tmp_path / "warm.csv", LABELS, 2))  # imports (pyarrow.compute, ...) before tracing
    stream = item_stream(tmp_path / "big.csv", LABELS, 2, chunk_rows=chunk)
    count, sizes, arrow_live, total = 0, [], 0, 0
    tracemalloc.start()
    try:
        for part in stream:
            sizes.append(part.size)
            total += int(part.sum())
            arrow_live = max(arrow_live, pa.total_allocated_bytes())
            count += 1
        _, chunked_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count >= n // chunk and max(sizes) <= chunk and sum(sizes) == n and total == int(x.sum())
    bound = 8 * block + 64 * chunk
    assert chunked_peak < bound < 8 * n, f"chunked read peaked at {chunked_peak} bytes for {n} rows"
    assert arrow_live < 64 * block < (tmp_path / "big.csv").stat().st_size, f"Arrow held {arrow_live} bytes"
    tracemalloc.start()
    try:
        whole = concat_chunks(list(item_stream(tmp_path / "big.csv", LABELS, 2, chunk_rows=chunk)))
        _, whole_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert whole.size == n and whole_peak >= 8 * n > bound


def test_grouped_inputs_spill_to_buckets_and_regroup_users(tmp_path, monkeypatch):
    """Item sets and key-value pairs whose users' rows are scattered: with a tiny spill size the
    reader routes rows into several buckets by user and still returns each user's whole set once."""
    import ldpplan.planner.data.chunked as chunked

    rng = np.random.default_rng(3)
    users = rng.integers(0, 300, size=3000)
    items = rng.integers(0, 5, size=3000)
    (tmp_path / "sets.csv").write_text("user,item\n" + "".join(f"u{u},{i}\n" for u, i in zip(users, items)))
    monkeypatch.setattr(chunked, "SPILL_BYTES", 4096)
    stream = item_set_stream(tmp_path / "sets.csv", None, 5, chunk_rows=50)
    chunks = list(stream)
    indptr, indices = concat_chunks(chunks)
    assert len(chunks) > 6 and stream.users == len(set(users.tolist()))
    got = sorted(tuple(indices[indptr[u]:indptr[u + 1]].tolist()) for u in range(len(indptr) - 1))
    want = sorted(tuple(sorted(set(items[users == u].tolist()))) for u in set(users.tolist()))
    assert got == want
    # key-value: one (user, key) once, values kept with their key
    pairs = {(int(u), int(i)) for u, i in zip(users, items)}
    rows = "".join(f"u{u},{i},{(u * 7 + i) % 11 / 10 - 0.5}\n" for u, i in sorted(pairs))
    (tmp_path / "kv.csv").write_text("user,key,value\n" + rows)
    kv = list(key_value_stream(tmp_path / "kv.csv", None, 5, chunk_rows=40))
    seen = set()
    for ids, ptr, keys, values, dropped in kv:
        for j, uid in enumerate(ids):
            u = int(uid[1:])
            for key, value in zip(keys[ptr[j]:ptr[j + 1]], values[ptr[j]:ptr[j + 1]]):
                assert value == (u * 7 + key) % 11 / 10 - 0.5
                seen.add((u, int(key)))
    assert seen == pairs and len(kv) > 6


def test_repeated_user_is_refused_in_a_later_chunk(tmp_path):
    (tmp_path / "u.csv").write_text("user,item\n" + "".join(f"u{i},yes\n" for i in range(50)) + "u3,no\n")
    with pytest.raises(InputDataError, match=r"line 52: user 'u3' appears twice"):
        list(item_stream(tmp_path / "u.csv", LABELS, 2, chunk_rows=8))


def test_blank_lines_one_column_are_empty_items_several_columns_are_not_rows(tmp_path):
    (tmp_path / "one.csv").write_text("item\nyes\n\nno\n")
    with pytest.raises(InputDataError, match=r"1 rows have an empty item \(first at line 3\)"):
        list(item_stream(tmp_path / "one.csv", LABELS, 2))
    (tmp_path / "two.csv").write_text("user,item\na,yes\n\nb,no\nc,\n")
    with pytest.raises(InputDataError, match=r"1 rows have an empty item \(first at line 5\)"):
        list(item_stream(tmp_path / "two.csv", LABELS, 2))
    assert DEFAULT_CHUNK_ROWS >= 1 << 16


# --------------------------------------------------------------------------- CLI: perturb, simulate, progress
@pytest.fixture
def health(tmp_path):
    out = tmp_path / "health.json"
    assert run("plan", "--example", "health", "-o", out).exit_code == 0
    return out


def _health_items(path, n_empty=0):
    labels = ["hiv", "anemia", "headache", "stomachache", "toothache"]
    rows = [labels[i % 5] for i in range(40)]
    for i in range(n_empty):
        rows[5 * i + 2] = ""
    path.write_text("item\n" + "\n".join(rows) + "\n")
    return path


def test_cli_perturb_empty_items_exit_2_and_skip_empty_says_how_many(health, tmp_path):
    data = _health_items(tmp_path / "users.csv", n_empty=3)
    out = tmp_path / "r.parquet"
    result = run("perturb", health, "--input", data, "-o", out, "--seed", 1)
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr.strip().splitlines() == [
        f"error: {data}: 3 rows have an empty item (first at line 4, line 9, line 14); every row needs one, "
        "or pass --skip-empty to drop them"]
    result = run("perturb", health, "--input", data, "-o", out, "--seed", 1, "--skip-empty")
    assert result.exit_code == 0, result.output
    assert f"note: skipped 3 rows of {data} with an empty item (--skip-empty)" in result.stderr
    assert "wrote 37 reports of idue" in result.stdout and pq.ParquetFile(out).metadata.num_rows == 37


def test_cli_simulate_data_empty_items_exit_2_and_skip_empty(health, tmp_path):
    data = _health_items(tmp_path / "users.csv", n_empty=2)
    result = run("simulate", health, "--data", data, "--trials", 1, "--seed", 1, "--json")
    assert result.exit_code == 2 and "2 rows have an empty item" in result.stderr
    result = run("simulate", health, "--data", data, "--trials", 1, "--seed", 1, "--json", "--skip-empty")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["n"] == 38 and payload["skipped_empty"] == 2
    assert f"note: skipped 2 rows of {data} with an empty item" in result.stderr


def test_uldp_simulate_reads_the_item_csv_perturb_takes(tmp_path):
    """Issue 19 point 4: a uRR / uRAP plan simulates the same ``item`` CSV that perturb takes."""
    plan = tmp_path / "urr.json"
    assert run("plan", "--example", "uldp-urr", "-o", plan).exit_code == 0
    spec = json.loads(plan.read_text())
    k, sens = spec["domain"]["size"], spec["params"]["sensitive"]
    labels = spec["domain"]["labels"] or [str(i) for i in range(k)]
    x = np.random.default_rng(2).integers(0, k, size=500)
    data = tmp_path / "items.csv"
    data.write_text("item\n" + "\n".join(labels[i] for i in x) + "\n")
    assert run("perturb", plan, "--input", data, "-o", tmp_path / "r.parquet", "--seed", 1).exit_code == 0
    result = run("simulate", plan, "--data", data, "--trials", 1, "--seed", 3, "--json", "-O", "epsilons=1")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["n"] == 500 and payload["domain_size"] == k and payload["n_sensitive"] == len(sens)
    assert payload["dataset"].startswith("items.csv: the plan's")


def test_perturb_progress_reports_bytes_read(health, tmp_path):
    from ldpplan.planner._runtime_io import perturb_file

    data = tmp_path / "users.csv"
    data.write_text("item\n" + "\n".join(["hiv", "anemia"] * 5000) + "\n")
    calls = []
    result = perturb_file(health, data, tmp_path / "r.parquet", seed=1, chunk_rows=1000,
                          progress=lambda advance, total: calls.append((advance, total)))
    assert result.n == 10_000 and len(calls) >= 10
    assert sum(a for a, _ in calls) == data.stat().st_size and {t for _, t in calls} == {data.stat().st_size}


def test_perturb_progress_bar_on_a_terminal_only(health, tmp_path, monkeypatch):
    """Issue 19 point 6: a rich bar (bytes read) on a terminal; nothing on piped output."""
    from rich.console import Console

    import ldpplan.planner._console as con

    data = _health_items(tmp_path / "users.csv")
    piped = run("perturb", health, "--input", data, "-o", tmp_path / "a.parquet", "--seed", 1)
    assert piped.exit_code == 0 and "perturbing" not in piped.output and piped.stderr == ""
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=100)
    monkeypatch.setattr(con, "interactive", lambda stderr=False: True)
    real_console = con.console
    monkeypatch.setattr(con, "console", lambda stderr=False: terminal if stderr else real_console(False))
    result = run("perturb", health, "--input", data, "-o", tmp_path / "b.parquet", "--seed", 1)
    assert result.exit_code == 0, result.output
    drawn = screen.getvalue()
    assert "perturbing" in drawn and "bytes" in drawn, drawn


def test_parquet_nulls_are_empty_items_and_integer_columns_are_indices(tmp_path):
    """A Parquet file written from a data frame: a missing item is a null (pandas' NaN), an
    integer column holds 0-based indices."""
    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"item": pa.array([0, 4, None, 2, None], pa.int64())}), path)
    with pytest.raises(InputDataError, match=r"2 rows have an empty item \(first at row 3, row 5\)"):
        list(item_stream(path, None, 5))
    stream = item_stream(path, None, 5, skip_empty=True)
    assert concat_chunks(list(stream)).tolist() == [0, 4, 2] and stream.skipped_empty == 2
    pq.write_table(pa.table({"item": pa.array([0, 7], pa.int64())}), path)
    with pytest.raises(InputDataError, match=r"row 2: item: must be a 0-based index in \[0, 5\) \(got 7\)"):
        list(item_stream(path, None, 5))


def test_item_set_plan_streams_users_through_the_hook(tmp_path):
    """IDUE-PS (item sets, rows ``user,item`` not adjacent) through Family.iter_inputs: CSR chunks of
    at most chunk_rows users, the same sets as the whole read, and empty items refused."""
    from ldpplan.planner import api
    from ldpplan.planner.families import family_of_plan

    plan = api.make_plan(api.example_spec("health-itemsets"))
    labels = plan["domain"]["labels"]
    rng = np.random.default_rng(4)
    rows = [(f"u{int(u)}", labels[int(i)]) for u, i in zip(rng.integers(0, 40, 200), rng.integers(0, len(labels), 200))]
    path = tmp_path / "sets.csv"
    path.write_text("user,item\n" + "".join(f"{u},{i}\n" for u, i in rows))
    fam = family_of_plan(plan)
    chunks = list(fam.iter_inputs(plan, path, chunk_rows=6))
    assert len(chunks) >= 6 and all(len(c[0]) - 1 <= 6 for c in chunks)
    indptr, indices = concat_chunks(chunks)
    whole = fam.read_inputs(plan, path)
    assert indptr.tolist() == whole[0].tolist() and indices.tolist() == whole[1].tolist()
    assert len(indptr) - 1 == len({u for u, _ in rows})
    path.write_text("user,item\n" + "".join(f"{u},{i}\n" for u, i in rows[:10]) + "u1,\n")
    with pytest.raises(InputDataError, match=r"1 rows have an empty item \(first at line 12\)"):
        list(fam.iter_inputs(plan, path))


def test_key_value_row_with_empty_key_and_value_is_an_empty_row_not_a_bad_number(tmp_path):
    path = tmp_path / "kv.csv"
    path.write_text("user,key,value\nu1,a,0.5\nu2,,\nu3,b,-1\n")
    with pytest.raises(InputDataError, match=r"1 rows have an empty key \(first at line 3\)"):
        list(key_value_stream(path, ["a", "b"], 2))
    stream = key_value_stream(path, ["a", "b"], 2, skip_empty=True)
    (ids, indptr, keys, values, dropped), = list(stream)
    assert ids.tolist() == ["u1", "u3"] and keys.tolist() == [0, 1] and values.tolist() == [0.5, -1.0]
    assert stream.skipped_empty == 1 and dropped == 0


def test_refused_file_hands_on_no_chunk_after_the_first_empty_item(tmp_path):
    """Without skip_empty, nothing after the first empty item reaches perturb; the rest is counted."""
    path = tmp_path / "in.csv"
    path.write_text("item\nyes\nno\nyes\n\nno\nyes\n\nno\n")
    got = []
    with pytest.raises(InputDataError, match=r"2 rows have an empty item \(first at line 5, line 8\)"):
        for chunk in item_stream(path, LABELS, 2, chunk_rows=2):
            got.append(chunk.tolist())
    assert got == [[1, 0]]
