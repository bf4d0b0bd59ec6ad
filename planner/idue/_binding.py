"""Which constraint of ID-LDP eq. (6) binds an IDUE plan, read from the solution.

A level whose budget is looser than another's but whose solved ``(a, b)`` is the same "buys
nothing": the solver could not use its budget because constraint (6) against a stricter level
is active (slack ~ 0). :func:`binding_constraints` lists the active constraints,
:func:`collapse_note` says in one paragraph which levels collapsed and why, and
:class:`ActiveRows` is the table of active constraints computed on demand.

Scale (issue 27): a plan with ``t`` levels has ``t^2`` ordered pairs (10^8 for 10^4 levels). They
are scanned with numpy in blocks of rows (memory ``O(BLOCK t)``), never held as Python objects;
:class:`ActiveRows` keeps one count per level and recomputes a level's row of pairs when a row is
asked for, and the note names a few levels and pairs and counts the rest.

References
----------
Gu, Li, Xiong & Cao, "Providing Input-Discriminative Protection for Local Differential Privacy",
ICDE 2020: eq. (6) ``a_i (1 - b_j) / (b_i (1 - a_j)) <= e^{r(eps_i, eps_j)}``, Def. 3 (MinID-LDP,
``r = min``), Sec. VIII (AvgID-LDP, ``r`` = the average), Lemma 1.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

__all__ = ["ActiveConstraint", "ActiveRows", "binding_constraints", "collapsed_levels", "collapse_note",
           "ACTIVE_TOLERANCE"]

#: A constraint is active when its slack is below this (nats, relative to max(1, r)); the solver's safety
#: margins are 1e-10 .. 1e-3 nats of r, so a constraint it pushed to the boundary has slack <= 1e-3 r.
ACTIVE_TOLERANCE = 2e-3
#: Two levels have "the same (a, b)" when both differ by less than this (relative).
SAME_PARAMS_RTOL = 1e-9
#: Rows of the t x t pair matrix scanned at once (memory ~ 5 x 8 x BLOCK x t bytes).
BLOCK = 256
#: How many levels and pairs the note names before it counts the rest.
NOTE_NAMES = 6


@dataclasses.dataclass(frozen=True)
class ActiveConstraint:
    """One active constraint (6) for the ordered level pair ``(i, j)``.

    Attributes
    ----------
    level_i, level_j : str
        Level names (row ``i``: the item reported as 1; column ``j``: the other item).
    r : float
        ``r(eps_i, eps_j)`` in nats (min for MinID-LDP, average for AvgID-LDP).
    log_ratio : float
        ``ln[a_i (1 - b_j) / (b_i (1 - a_j))] = u_i + w_j`` in nats.
    slack : float
        ``r - log_ratio`` in nats (>= 0 up to rounding in a verified plan).
    """

    level_i: str
    level_j: str
    r: float
    log_ratio: float
    slack: float


@dataclasses.dataclass(frozen=True)
class _Levels:
    """A plan's levels as arrays: names, budgets, sizes and u = ln(a/b), w = ln((1-b)/(1-a))."""

    names: list[str]
    e: np.ndarray
    a: np.ndarray
    b: np.ndarray
    u: np.ndarray
    w: np.ndarray
    single: np.ndarray  # levels of one item: (i, i) is no pair of distinct items
    minid: bool


def _levels(plan: Mapping[str, Any]) -> _Levels:
    lv = plan["params"]["levels"]
    a, b = [float(x["a"]) for x in lv], [float(x["b"]) for x in lv]
    return _Levels([x["name"] for x in lv], np.array([float(x["epsilon"]) for x in lv]), np.array(a), np.array(b),
                   np.array([math.log(x / y) for x, y in zip(a, b)]),
                   np.array([math.log((1 - y) / (1 - x)) for x, y in zip(a, b)]),
                   np.array([int(x["size"]) < 2 for x in lv]), plan["guarantee"]["notion"] == "MinID-LDP")


def _r(lv: _Levels, e_i, e_j):
    return np.minimum(e_i, e_j) if lv.minid else (e_i + e_j) / 2


def _active_block(lv: _Levels, rows: np.ndarray, tolerance: float):
    """``(i, j, r, log_ratio, slack)`` arrays of the active pairs with ``i`` in ``rows``, in row-major order."""
    r = _r(lv, lv.e[rows][:, None], lv.e[None, :])
    log_ratio = lv.u[rows][:, None] + lv.w[None, :]
    slack = r - log_ratio
    mask = slack <= tolerance * np.maximum(1.0, r)
    own = np.nonzero(lv.single[rows])[0]
    mask[own, rows[own]] = False
    ii, jj = np.nonzero(mask)
    return rows[ii], jj, r[ii, jj], log_ratio[ii, jj], slack[ii, jj]


def _blocks(lv: _Levels, tolerance: float, start: int = 0) -> Iterator[tuple[np.ndarray, ...]]:
    n = len(lv.names)
    for first in range(start, n, BLOCK):
        yield _active_block(lv, np.arange(first, min(n, first + BLOCK)), tolerance)


def binding_constraints(plan: Mapping[str, Any], tolerance: float = ACTIVE_TOLERANCE) -> list[ActiveConstraint]:
    """The active constraints (6) of a plan: ordered level pairs ``(i, j)`` whose slack is ~0.

    Pairs ``(i, i)`` count only for levels of at least two items (distinct items of one level).
    A constraint is active when ``r - (u_i + w_j) <= tolerance max(1, r)``. For plans with many
    levels use :class:`ActiveRows`, which does not hold the list.

    Parameters
    ----------
    plan : mapping
        An IDUE / IDUE-PS plan (format 2.0).
    tolerance : float
        Slack (nats, relative to ``max(1, r)``) below which a constraint is active.

    Returns
    -------
    list of ActiveConstraint
        In level order (row, then column).
    """
    lv = _levels(plan)
    return [ActiveConstraint(lv.names[i], lv.names[j], float(r), float(q), float(s))
            for block in _blocks(lv, tolerance) for i, j, r, q, s in zip(*(x.tolist() for x in block))]


class ActiveRows(Sequence):
    """The active constraints of a plan as table rows ``[level i, level j, r, ln ratio, slack]``, on demand.

    Holds the number of active pairs of each level (row ``i``), so ``len`` is exact and ``rows[k]``
    recomputes one level's row of pairs; iterating scans the pairs block by block. ``extremes()``
    and ``tightest()`` answer a summary without building the rows (see :mod:`..._summary`).

    Parameters
    ----------
    plan : mapping
        An IDUE / IDUE-PS plan.
    tolerance : float
        As in :func:`binding_constraints`.
    tightest : int
        How many of the smallest-slack pairs :meth:`tightest` returns.
    """

    def __init__(self, plan: Mapping[str, Any], tolerance: float = ACTIVE_TOLERANCE, tightest: int = 6):
        self._lv, self._tolerance = _levels(plan), tolerance
        n = len(self._lv.names)
        counts = np.zeros(n, dtype=np.int64)
        best: dict[int, tuple[float, int]] = {}
        slacks, flats = np.empty(0), np.empty(0, dtype=np.int64)
        offset = 0
        for i, j, r, log_ratio, slack in _blocks(self._lv, tolerance):
            counts += np.bincount(i, minlength=n)
            flat = np.arange(offset, offset + len(i), dtype=np.int64)
            offset += len(i)
            for c, values in enumerate((r, log_ratio, -r, -log_ratio)):  # smallest and largest of each column
                if len(values) and (c not in best or values.min() < best[c][0]):
                    best[c] = (float(values.min()), int(flat[int(np.argmin(values))]))
            slacks, flats = np.concatenate([slacks, slack]), np.concatenate([flats, flat])
            if len(slacks) > tightest:
                order = np.argsort(slacks, kind="stable")[:tightest]
                slacks, flats = slacks[order], flats[order]
        self._offsets = np.concatenate([[0], np.cumsum(counts)])
        self._extremes = sorted({k for _, k in best.values()})
        self._tightest = [int(k) for k in flats[np.argsort(slacks, kind="stable")]]

    def __len__(self) -> int:
        return int(self._offsets[-1])

    def _row(self, i, j, r, log_ratio, slack) -> list[Any]:
        return [self._lv.names[i], self._lv.names[j], r, log_ratio, f"{slack:.1e}"]

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[x] for x in range(*k.indices(len(self)))]
        k = int(k) + (len(self) if k < 0 else 0)
        if not 0 <= k < len(self):
            raise IndexError(k)
        i = int(np.searchsorted(self._offsets, k, side="right")) - 1
        block = _active_block(self._lv, np.array([i]), self._tolerance)
        at = k - int(self._offsets[i])
        return self._row(i, *(x[at].item() for x in block[1:]))

    def __iter__(self):
        for block in _blocks(self._lv, self._tolerance):
            for values in zip(*(x.tolist() for x in block)):
                yield self._row(*values)

    def extremes(self) -> list[int]:
        """Rows of the smallest and largest ``r`` and ``ln ratio`` (the numeric columns)."""
        return list(self._extremes)

    def tightest(self) -> list[int]:
        """Rows of the smallest slacks, tightest first."""
        return list(self._tightest)


def collapsed_levels(plan: Mapping[str, Any]) -> dict[str, str]:
    """``{looser level: stricter level}`` for levels whose solved ``(a, b)`` equals a stricter level's.

    The stricter level named is the one with the smallest budget among those sharing the ``(a, b)``
    (the first of them in level order on a tie); "equal" is ``math.isclose`` with
    :data:`SAME_PARAMS_RTOL`, evaluated with numpy a block of levels at a time.
    """
    lv = _levels(plan)
    n = len(lv.names)
    out = {}
    for first in range(0, n, BLOCK):
        j = np.arange(first, min(n, first + BLOCK))
        same = lv.e[None, :] < lv.e[j][:, None]
        for x in (lv.a, lv.b):
            same &= np.abs(x[None, :] - x[j][:, None]) <= SAME_PARAMS_RTOL * np.maximum(np.abs(x[None, :]),
                                                                                        np.abs(x[j][:, None]))
        stricter = np.argmin(np.where(same, lv.e[None, :], np.inf), axis=1)
        for row in np.nonzero(same.any(axis=1))[0]:
            out[lv.names[int(j[row])]] = lv.names[int(stricter[row])]
    return out


def _listed(parts: list[str], total: int, sep: str, more: str) -> str:
    """The first :data:`NOTE_NAMES` parts joined, and how many more there are."""
    text = sep.join(parts[:NOTE_NAMES])
    return text + (f"{sep}{more.format(total - NOTE_NAMES)}" if total > NOTE_NAMES else "")


def _partners(lv: _Levels, held: np.ndarray):
    """Active pairs between a held and a free level: (count, first pairs, partner levels, first r of each level)."""
    n = len(lv.names)
    count = 0
    pairs: list[tuple[int, int]] = []
    partner = np.zeros(n, dtype=bool)
    first_r = np.full(n, np.nan)
    for i, j, r, _, _ in _blocks(lv, ACTIVE_TOLERANCE):
        keep = (i != j) & (held[i] != held[j])
        i, j, r = i[keep], j[keep], r[keep]
        count += len(i)
        pairs += [(int(x), int(y)) for x, y in zip(i[:NOTE_NAMES], j[:NOTE_NAMES])][:NOTE_NAMES - len(pairs)]
        partner[np.where(held[i], j, i)] = True
        position = np.full(n, len(i))
        for side in (i, j):  # the first pair (row-major) naming each level, on either side
            levels, first = np.unique(side, return_index=True)
            position[levels] = np.minimum(position[levels], first)
        fresh = np.nonzero((position < len(i)) & np.isnan(first_r))[0]
        first_r[fresh] = r[position[fresh]]
    return count, pairs, partner, first_r


def collapse_note(plan: Mapping[str, Any], collapsed: Mapping[str, str] | None = None) -> str:
    """One paragraph naming the binding constraint when looser levels collapse, else ``""``.

    Names at most :data:`NOTE_NAMES` collapsed levels, partner levels and active pairs, and counts
    the rest (the table of active constraints lists them all under ``--full``). ``collapsed`` is
    :func:`collapsed_levels` of the plan when the caller has it already.

    Examples
    --------
    Levels 0.7 / 1.0 / 2.0 where the 0.7 level holds most items: every level gets the (a, b)
    of the 0.7 level, the plan is plain 0.7-LDP, and the note names the MinID constraint
    (6) with the 0.7 level, active in both directions for every looser level.
    """
    collapsed = collapsed_levels(plan) if collapsed is None else collapsed
    if not collapsed:
        return ""
    lv = _levels(plan)
    names = lv.names
    eps = dict(zip(names, lv.e.tolist()))
    r_text = "r(eps_i, eps_j) = min(eps_i, eps_j)" if lv.minid else "r(eps_i, eps_j) = (eps_i + eps_j) / 2"
    short = "MinID" if lv.minid else "AvgID"
    looser = [n for n in names if n in collapsed]
    strictest = names[int(np.argmin(lv.e))]
    group = set(looser) | set(collapsed.values())
    everything = group == set(names)
    held_names = group - {strictest} if everything else group  # the levels held down, and by whom
    held = np.array([n in held_names for n in names], dtype=bool)
    count, pairs, partner, first_r = _partners(lv, held)
    same = _listed([f"{n!r} ({eps[n]:.4g}) has the (a, b) of {collapsed[n]!r} ({eps[collapsed[n]]:.4g})"
                    for n in looser[:NOTE_NAMES]], len(looser), "; ", "and {:,} more levels likewise")
    plain = (f" Every level has the (a, b) of the strictest level {strictest!r}: the plan is plain "
             f"{eps[strictest]:.4g}-LDP." if everything else "")
    if not count:
        return (f"The looser levels buy nothing: {same}.{plain} No constraint (6) between distinct levels is "
                f"active within {ACTIVE_TOLERANCE:g} nats; the objective, not privacy, equalises them.")
    order = sorted(np.nonzero(partner)[0].tolist(), key=lambda k: (lv.e[k], k))
    with_text = _listed([f"the {lv.e[k]:.4g} level {names[k]!r}" for k in order[:NOTE_NAMES]], len(order),
                        " and ", "{:,} more levels")
    pair_text = _listed([f"({names[i]}, {names[j]})" for i, j in pairs], count, ", ", "and {:,} more")
    p = names[order[0]]
    r = float(first_r[order[0]])
    return (f"The looser levels buy nothing: {same}.{plain} They are limited by the {short} constraint (eq. 6) "
            f"{r_text} with {with_text}: ln[a_i(1-b_j)/(b_i(1-a_j))] = u_i + w_j reaches r (slack ~ 0) for the "
            f"pairs {pair_text}, so u_j <= {r:.4g} - w_{p} and w_j <= {r:.4g} - u_{p} for every level j held, "
            f"however large its own budget (u = ln(a/b), w = ln((1-b)/(1-a))).")
