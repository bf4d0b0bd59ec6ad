"""Plain data returned by planner functions and rendered by the CLI.

Only the CLI prints; family modules return these objects.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

__all__ = ["Table", "Verification", "SimulateOptions", "SimulationReport", "counted", "Bound", "ReportFacts", "default_report_facts"]


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


#: a place in a plan: the keys (and list indices) from its root, e.g. ``("guarantee", "levels", "hiv")``
Field = tuple


@dataclasses.dataclass(frozen=True)
class Bound:
    """One privacy number of a plan for the report (``ldpplan report``): where it is, what it bounds.

    Attributes
    ----------
    quantity : str
        What it is, in words (``"epsilon of one report"``).
    field : tuple
        Its place in the plan (keys from the root); the report reads the value there, never a copy.
    unit : str
        ``"nats"``, ``"bits"`` or ``"probability"``.
    source : str
        The theorem or equation it comes from.
    lower_field : tuple or None
        The place of a lower bound on the same quantity (a pair of inputs attaining it, an attack), if the plan has one.
    lower_source : str
        Why ``lower_field`` is a lower bound.
    direction : str
        ``"at most"``: the plan promises the quantity is at most the value (epsilon); ``"at least"``: at least
        (a Bayes error).
    """

    quantity: str
    field: Field
    unit: str
    source: str
    lower_field: Field | None = None
    lower_source: str = ""
    direction: str = "at most"


@dataclasses.dataclass(frozen=True)
class ReportFacts:
    """What a family says about one of its plans in the report (the room's ``claims.report_facts``).

    One shape for every family: the report code renders these and reads every number from the plan
    at the fields named here.

    Attributes
    ----------
    notion_words : str
        The privacy notion in plain words (what is indistinguishable from what).
    unit_of_privacy : str
        What is protected and for whom (one report of one item, a user's lifetime ...).
    bounds : tuple of Bound
        The guarantee's numbers, the headline epsilon first.
    ldp_epsilon : Bound or None
        The plain-LDP epsilon of one report (None: the notion has none, e.g. ULDP).
    headline : str
        The key of ``plan["predicted"]`` the figures and what-ifs follow.
    users_field : tuple or None
        Where the plan records the number of users ``n`` (None: the plan's numbers do not depend on ``n``).
    per_user_exponent : float
        For a plan without ``n``: the headline is normalized per user and the error at ``n`` users is
        ``value * n ** per_user_exponent`` (``-1``: a variance; ``-0.5``: an l1 error).
    per_user_unit : str
        The unit of that error at ``n`` users.
    slack_field : tuple or None
        The verification's smallest slack (nats) in the plan.
    """

    notion_words: str
    unit_of_privacy: str
    bounds: tuple[Bound, ...]
    ldp_epsilon: Bound | None
    headline: str
    users_field: Field | None = None
    per_user_exponent: float = 0.0
    per_user_unit: str = ""
    slack_field: Field | None = None


def default_report_facts(plan: Any) -> ReportFacts:
    """The report facts of a family that states none: its notion's name, ``guarantee.epsilon``, the first prediction."""
    guarantee = plan["guarantee"]
    epsilon = Bound("epsilon", ("guarantee", "epsilon"), "nats", str(guarantee.get("sources", "the plan's guarantee")))
    return ReportFacts(notion_words=str(guarantee.get("notion")), unit_of_privacy="one report of one user",
                       bounds=(epsilon,), ldp_epsilon=None, headline=next(iter(plan.get("predicted") or {}), ""))
