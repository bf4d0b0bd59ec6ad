r"""The private padding length: phase 1 of the two-phase route (``padding_length = {private = ...}``).

PCKV Sec. 5.1 points to Wang et al. [23]: the padding length ``L`` is chosen from a set-size
distribution that is itself estimated under LDP from a separate share of the users. Here:

1. a random ``user_share`` of the ``n`` users (``round(user_share n)``, at least 1 and at most
   ``n - 1``) forms phase 1; each reports ``min(set size, max)`` with the k-ary randomized
   response over ``{0..max}`` at ``epsilon`` (:class:`ldpplan.mechanisms.pie.RandomizedResponse`,
   exact 2^-48 grid sampling);
2. the server estimates the distribution with the RR's unbiased empirical estimator (PIE
   eq. 19) and projects it onto the probability simplex (Euclidean projection);
3. ``L`` in ``1..max`` minimises the planner's predicted ``w_f MSE_f + w_m MSE_m`` under the
   prior key model (``prior_frequencies`` / ``prior_means`` or their defaults) with this
   estimated distribution (truncation model of :func:`ldpplan.solvers.pckv.truncation_factor`);
4. the phase-1 users are EXCLUDED from phase 2: each user takes part in exactly one mechanism,
   so a phase-1 user has the RR's epsilon and a phase-2 user the PCKV plan's epsilon
   (parallel composition over disjoint users); predictions use the ``n - m`` phase-2 users.

Nothing here reads a raw set size except the phase-1 *simulation* (users' true sizes go
through the RR before anything else sees them).
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import numpy.typing as npt

from ...mechanisms import Aggregate
from ...mechanisms.pie import RandomizedResponse

from ._model import open_assumptions, prior_vectors
from .spec import DEFAULT_USERS, PCKVSpec, PrivatePhase
from ...solvers.pckv import KeyModel
from ..errors import SpecError

__all__ = ["PhaseOne", "project_simplex", "phase1_runtime", "phase1_user_count", "split_users", "phase1_counts",
           "estimate_distribution", "private_key_model", "run_phase_one"]

ESTIMATOR = ("k-ary RR empirical estimator (PIE eq. 19) over {0..max}, projected onto the probability simplex "
             "(Euclidean projection)")


@dataclasses.dataclass(frozen=True)
class PhaseOne:
    """What phase 1 produced: the RR counts and the estimated set-size distribution.

    Attributes
    ----------
    counts : ndarray of int64, shape (max + 1,)
        RR output counts (reports of each capped size ``0..max``).
    distribution : ndarray of float64, shape (max + 1,)
        Estimated probability of each capped size (on the simplex).
    users, phase1_users, phase2_users : int
        ``n``, the phase-1 users ``m`` and the phase-2 users ``n - m``.
    source : str
        Where the phase-1 reports came from (for ``planning_inputs``).
    """

    counts: np.ndarray
    distribution: np.ndarray
    users: int
    phase1_users: int
    phase2_users: int
    source: str
    data: str | None = None

    def to_dict(self, phase: PrivatePhase) -> dict[str, Any]:
        """The plan's record (``solver.padding_length_selection.private``)."""
        rt = phase1_runtime(phase.epsilon, phase.max)
        return {"epsilon": phase.epsilon, "user_share": phase.user_share, "max": phase.max, "seed": phase.seed,
                "users": self.users, "phase1_users": self.phase1_users, "phase2_users": self.phase2_users,
                "phase2": "phase-1 users are excluded from phase 2 (predictions use phase2_users)",
                "mechanism": "rr", "keep_probability": rt.mu, "epsilon_realized": rt.privacy_map()["epsilon"],
                "estimator": ESTIMATOR, "source": self.source, "data": self.data,
                "counts": [int(c) for c in self.counts], "distribution": [float(x) for x in self.distribution]}


def project_simplex(v: npt.ArrayLike) -> np.ndarray:
    """Euclidean projection of ``v`` onto ``{x >= 0, sum x = 1}`` (sort-based, exact up to rounding).

    Parameters
    ----------
    v : array_like, shape (k,)

    Returns
    -------
    ndarray, shape (k,)

    References
    ----------
    Duchi, Shalev-Shwartz, Singer, Chandra, "Efficient projections onto the l1-ball", ICML 2008, Fig. 1.
    """
    v = np.asarray(v, dtype=np.float64)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    idx = np.arange(1, v.size + 1)
    rho = int(np.nonzero(u - css / idx > 0)[0][-1])
    theta = css[rho] / (rho + 1)
    return np.maximum(v - theta, 0.0)


def phase1_runtime(epsilon: float, max_size: int) -> RandomizedResponse:
    """The phase-1 mechanism: the k-ary RR over ``{0..max_size}`` at ``epsilon`` (nats)."""
    return RandomizedResponse(domain=int(max_size) + 1, epsilon=float(epsilon))


def phase1_user_count(users: int, user_share: float) -> int:
    """``m = round(user_share n)``, clamped to ``1..n-1``."""
    return int(min(max(round(user_share * users), 1), users - 1))


def split_users(users: int, user_share: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A uniformly random partition: (phase-1 user indices, phase-2 user indices), each sorted."""
    perm = rng.permutation(users)
    m = phase1_user_count(users, user_share)
    return np.sort(perm[:m]), np.sort(perm[m:])


def phase1_counts(set_sizes: npt.ArrayLike, epsilon: float, max_size: int, rng: np.random.Generator) -> np.ndarray:
    """Phase-1 users report ``min(size, max_size)`` with the RR; the server's output counts.

    Returns
    -------
    ndarray of int64, shape (max_size + 1,)
    """
    rt = phase1_runtime(epsilon, max_size)
    capped = np.minimum(np.asarray(set_sizes, dtype=np.int64), int(max_size))
    return rt.aggregate(rt.perturb(capped, rng=rng)).counts["y"].astype(np.int64)


def estimate_distribution(counts: npt.ArrayLike, epsilon: float, max_size: int) -> np.ndarray:
    """The estimated distribution of capped set sizes from phase-1 counts (see :data:`ESTIMATOR`)."""
    counts = np.asarray(counts, dtype=np.int64)
    rt = phase1_runtime(epsilon, max_size)
    est = rt.estimate(Aggregate("rr", int(counts.sum()), {"y": counts}), "empirical")
    return project_simplex(est.frequency)


def private_key_model(spec: PCKVSpec, d: int, distribution: npt.ArrayLike, users: int) -> KeyModel:
    """The key model of a private plan: priors for keys and means, the estimated set sizes, ``n``.

    ``f_k = prior_frequencies`` or ``min(1, E[size]/d)``; ``m_k = prior_means`` or 1 (the
    worst case of eq. (11)); objective keys as for other plans (``objective_keys``).
    """
    w = np.asarray(distribution, dtype=float)
    sizes = np.arange(w.size, dtype=float)
    mean_size = float(np.dot(sizes, w))
    freq, means = prior_vectors(spec, d, max(mean_size, 1e-12))
    order = np.argsort(-freq, kind="stable")
    keys = np.nonzero(freq > 0)[0] if spec.objective_keys == "all" else order[: min(int(spec.objective_keys), d)]
    keys = keys[freq[keys] > 0]
    if keys.size == 0:
        raise SpecError("prior_frequencies", "at least one key must have a frequency > 0", None)
    return KeyModel(freq, means, users, set_sizes=sizes, set_size_weights=w, objective_keys=keys,
                    **open_assumptions(spec, d, mean_size))


def run_phase_one(spec: PCKVSpec, phase: PrivatePhase, set_sizes: npt.ArrayLike | None,
                  data_source: str | None) -> PhaseOne:
    """Phase 1 from the spec's ``counts`` or simulated on the data's set sizes.

    Parameters
    ----------
    set_sizes : ndarray of int, shape (n,), or None
        Every user's true set size (the data file), used only through the RR.
    data_source : str or None
        The data file's path (for the record).
    """
    if phase.counts is not None:
        counts = np.asarray(phase.counts, dtype=np.int64)
        users = int(spec.users or DEFAULT_USERS)
        m = int(counts.sum())
        source = "phase-1 RR output counts given in the spec (padding_length.private.counts)"
    else:
        sizes = np.asarray(set_sizes, dtype=np.int64)
        users = int(sizes.size)
        rng = np.random.default_rng(phase.seed)
        first, _ = split_users(users, phase.user_share, rng)
        counts = phase1_counts(sizes[first], phase.epsilon, phase.max, rng)
        m = int(first.size)
        source = (f"phase 1 simulated on {data_source} (seed {phase.seed}): {m} of {users} users report "
                  f"min(set size, {phase.max}) with a k-ary RR over {{0..{phase.max}}}")
    dist = estimate_distribution(counts, phase.epsilon, phase.max)
    return PhaseOne(counts, dist, users, m, users - m, source, None if phase.counts is not None else data_source)
