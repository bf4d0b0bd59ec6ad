"""The Dask engine of ``ldpplan aggregate --engine dask`` (optional extra ``ldpplan[dask]``).

One task per Parquet row group aggregates it with the numpy runtime on a worker
(:func:`._parquet_columns.aggregate_row_groups`); the partial aggregates are tree-reduced
with ``+`` on the workers. The task functions are shipped by value (cloudpickle), so a
worker imports only numpy, pyarrow and ``ldpplan.mechanisms`` (never the planner, cvxpy or
scipy). Report files must be readable at the same path on every worker (shared storage).
Counts are integers, so the result is identical to the local engine whatever the order.

A task's error comes back as a value, not as a raised exception: a worker that raises logs
"Compute Failed" with a traceback block (on the terminal, for a LocalCluster's worker
processes), while a bad report file is bad input, reported by the CLI as one line (exit 2).
"""
from __future__ import annotations

import contextlib
import logging
import os
from typing import Any, Iterator, Mapping, Sequence
from .errors import InputDataError
from ..mechanisms import Aggregate

__all__ = ["DASK_EXTRA", "client_for", "aggregate_dask"]

DASK_EXTRA = "pip install 'ldpplan[dask]'"
#: Partial aggregates merged per reduction task.
FAN_IN = 4


def _import_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(f"--engine dask needs dask and distributed ({DASK_EXTRA}): {exc}") from None
    return distributed


@contextlib.contextmanager
def client_for(scheduler: str | None, n_workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` on ``scheduler``, or on a new process-based ``LocalCluster`` when None.

    Parameters
    ----------
    scheduler : str or None
        ``tcp://host:port`` of a running scheduler.
    n_workers : int, optional
        Workers of the LocalCluster (one thread each); default: the number of CPUs.

    Raises
    ------
    ImportError
        ``dask``/``distributed`` are not installed (the message says what to install).
    """
    distributed = _import_distributed()
    if scheduler is not None:
        with distributed.Client(scheduler, set_as_default=False) as client:
            yield client
        return
    workers = n_workers or os.cpu_count() or 1
    # dashboard on a free port: the default 8787 may be taken by another cluster
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield client


def _by_value(func):
    """``func`` wrapped in a closure returning ``("ok", result)`` or ``("error", type name, message)``.

    Plain pickle cannot import the closure, so distributed falls back to cloudpickle, which
    (with the module registered) ships the code by value, not by module name. Arguments that
    are earlier tasks' results are unwrapped; an earlier error is passed on unchanged.
    """
    def task(*args):
        for arg in args:
            if isinstance(arg, tuple) and arg[:1] == ("error",):
                return arg
        args = tuple(arg[1] if isinstance(arg, tuple) and arg[:1] == ("ok",) else arg for arg in args)
        try:
            return ("ok", func(*args))
        except Exception as exc:  # noqa: BLE001 - returned to the client, which raises it as one line
            return ("error", type(exc).__name__, str(exc))

    task.__name__ = task.__qualname__ = f"ldpplan-{func.__name__}"
    return task


def _unwrap(value: tuple) -> Any:
    """The result of a task, or the worker's error raised here: bad input (ValueError, OSError) as
    InputDataError, anything else as a RuntimeError (an internal error)."""
    if value[0] == "ok":
        return value[1]
    _, kind, message = value
    if kind in ("ValueError", "OSError", "ArrowInvalid", "ArrowException", "ArrowIOError"):
        raise InputDataError(message)
    raise RuntimeError(f"dask worker: {kind}: {message}")


def _tasks(paths: Sequence[str]) -> list[tuple[str, list[int]]]:
    import pyarrow.parquet as pq

    out: list[tuple[str, list[int]]] = []
    for path in paths:
        groups = pq.read_metadata(path).num_row_groups
        out.extend((os.path.abspath(path), [g]) for g in range(groups))
    return out


def aggregate_dask(plan: Mapping[str, Any], paths: Sequence[str], *, scheduler: str | None = None,
                   batch_rows: int = 1 << 16, n_workers: int | None = None, client: Any = None):
    """Aggregate report files (already checked against ``plan``) on a Dask cluster.

    Parameters
    ----------
    paths : sequence of str
        Parquet report files, readable by every worker at the same path.
    client : distributed.Client, optional
        Use this client instead of connecting to ``scheduler`` / starting a LocalCluster.

    Returns
    -------
    ldpplan.mechanisms.Aggregate
        Identical to the local engine's aggregate (unidentified: the caller attaches the batches).

    Raises
    ------
    InputDataError
        A report file a worker refused (its one-line message, naming the file); the worker
        logs no traceback.
    """
    if client is None:
        with client_for(scheduler, n_workers) as new_client:
            return aggregate_dask(plan, paths, batch_rows=batch_rows, client=new_client)
    import cloudpickle

    from . import _parquet_columns as columns  # deferred: pyarrow

    cloudpickle.register_pickle_by_value(columns)   # workers need ldpplan.mechanisms + pyarrow only
    aggregate, merge = _by_value(columns.aggregate_row_groups), _by_value(columns.merge_aggregate_dicts)
    plan_future = client.scatter([dict(plan)], broadcast=True, hash=False)[0]   # a fresh key per call
    level = [client.submit(aggregate, plan_future, path, groups, int(batch_rows), pure=False)
             for path, groups in _tasks(paths)]
    while len(level) > 1:
        level = [client.submit(merge, *level[i:i + FAN_IN], pure=False)
                 if len(level[i:i + FAN_IN]) > 1 else level[i] for i in range(0, len(level), FAN_IN)]
    data, _rows = _unwrap(level[0].result())
    return Aggregate.from_dict(data)
