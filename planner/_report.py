"""Plain data returned by planner functions and rendered by the CLI.

Only the CLI prints; family modules return these objects.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

__all__ = ["Table", "Verification", "SimulateOptions", "SimulationReport", "counted"]


def counted(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` with the noun in the right number: ``1 report``, ``2 reports``, ``1,000 entries``."""
    return f"{int(n):,} {singular if int(n) == 1 else (plural or singular + 's')}"


@dataclasses.dataclass(frozen=True)
class Table:
    """A titled table: ``columns`` names and ``rows`` of already-rounded cells.

    Cells may be str, int or float; the CLI formats floats with ``.4g`` unless
    they are already strings. ``rows`` may be any sequence (``len`` and indexing), also one that
    computes its rows on demand. ``keep`` lists the rows a summary must show (the binding ones, most
    important first); see :func:`ldpplan.planner._summary.summary_table`.
    """

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    note: str = ""
    keep: Sequence[int] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form: list of row dicts keyed by column name."""
        return {
            "title": self.title,
            "rows": [dict(zip(self.columns, row)) for row in self.rows],  # every row, never a summary
            "note": self.note,
        }


@dataclasses.dataclass(frozen=True)
class Verification:
    """Result of an independent re-check of a plan file.

    Attributes
    ----------
    holds : bool
        True when every privacy constraint holds for the numbers in the file.
    message : str
        One line: what was checked, or which constraint fails and by how much.
    details : dict
        Machine-readable facts (worst slack in nats, the worst pair ...).
    """

    holds: bool
    message: str
    details: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class SimulateOptions:
    """Options of ``ldpplan simulate`` shared by every family.

    Attributes
    ----------
    data : str or None
        Path to the real data file (CSV); ``None`` uses the family's synthetic default.
    trials : int
        Independent repetitions (the tables report means over trials).
    seed : int
        Root seed; trial ``k`` uses ``np.random.default_rng([seed, k])``-style
        spawned generators so results reproduce.
    mode : str
        ``"aggregate"`` (exact-in-distribution count sampling, fast) or
        ``"runtime"`` (every user perturbed by the client runtime).
    extra : dict
        Family-specific options from ``-O key=value`` (strings; the family parses them).
    skip_empty : bool
        Drop ``data`` rows whose item is empty (the report's ``data["skipped_empty"]`` counts them)
        instead of refusing the file.
    """

    data: str | None = None
    trials: int = 10
    seed: int = 0
    mode: str = "aggregate"
    extra: dict[str, str] = dataclasses.field(default_factory=dict)
    skip_empty: bool = False


@dataclasses.dataclass(frozen=True)
class SimulationReport:
    """Output of a simulation: tables for people, a dict for machines, an optional figure.

    Attributes
    ----------
    tables : list of Table
    data : dict
        JSON-serialisable results (what ``--json`` prints).
    plot : callable or None
        ``plot(path)`` draws the figure to a PNG file (matplotlib, Agg backend).
    """

    tables: list[Table]
    data: dict[str, Any]
    plot: Callable[[str], None] | None = None
