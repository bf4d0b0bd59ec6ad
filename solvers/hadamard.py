"""Hadamard response (Acharya, Sun & Zhang, AISTATS 2019): closed forms, grid numbers, exact checks.

The mechanism is the paper's general Hadamard response with ``B`` blocks (``B = 1`` is its basic
scheme). The ``k`` inputs are split into ``B`` blocks of ``b - 1`` items, ``b`` the smallest power of
two with ``B (b - 1) >= k``: item ``x`` is in block ``j = x // (b - 1)`` at position
``t = x % (b - 1) + 1``. The outputs are ``K = B b`` pairs ``y = j b + u`` (``u < b``) and
``C_x = {j b + u : popcount(t & u) even}``: row ``t`` of the Sylvester Hadamard matrix ``H_b``
inside the item's block (row 0, all ones, is not used), so ``|C_x| = s = b/2`` and two items of one
block share ``b/4`` outputs. With ``P = e^eps/(e^eps + 2B - 1)`` (``B = 1``: ``e^eps/(1 + e^eps)``)

    Q(y | x) = P/s  (y in C_x),   (1 - P)/(K - s)  (otherwise),    max ratio P (2B - 1)/(1 - P) = e^eps

(``(K - s)/s = 2B - 1``). A report supports ``x`` by ``z = +1`` when it lies in ``C_x``, ``-1`` when it
lies in ``x``'s block but not in ``C_x``, and ``0`` elsewhere; ``E z = P - q`` for a holder of ``x``
and ``0`` for everyone else (``q = (1 - P)/(2B - 1)``), so

    f_hat(x) = sum_users z / (n (P - q)) = T_j[t] / (n (P - q))

is unbiased, where ``T_j = H_b c_j`` is the fast Walsh-Hadamard transform of block ``j``'s ``b``
output counts (``O(K log b)``; no ``K x K`` matrix). For fixed users' data
``n Var f_hat(x) = (2q + (P - q) F_j)/(P - q)^2 - f(x)`` with ``F_j`` the mass of ``x``'s block, so
``E ||f_hat - f||^2 = (2 q k + (P - q) sum_j k_j F_j)/(n (P - q)^2) - 1/n`` (``k_j`` items in block
``j``): at most ``(2 q k + (P - q) min(b - 1, k))/(n (P - q)^2) - 1/n`` (all users in one full
block), and for ``B = 1`` exactly ``k/(n (2P - 1)^2) - 1/n`` for every distribution. (These match
the authors' decoder ``Hadamard_Rand_general_original.decode_string``: block estimate subtracted
from the in-block estimate.)

Which version. ``B`` is a spec choice: an integer power of two, or ``"auto"``: the ``B`` in
``1, 2, 4, ..., 2^ceil(log2 k)`` with the smallest worst-case total error above (the authors'
implementation takes ``B = 2^floor(log2 min(e^eps, 2k))``; the two agree at epsilon = 2 and 8 and
differ by a factor of two in ``B`` elsewhere, e.g. epsilon = 1: ``B = 1`` vs 2). ``B = 1`` is
optimal for ``epsilon = O(1)``; for large epsilon ``B ~ e^eps`` brings the error from about
``k/n`` down to about ``k/(n e^eps)``.

The solver. :func:`solve_hr` has the shape of every solver here: it checks the budget with
:func:`~ldpplan.solvers._checks.check_epsilon` and returns a frozen :class:`~ldpplan.solvers.SolveResult`
(a closed form; the :class:`HadamardNumbers` in ``extra["numbers"]``); :func:`solve_hadamard` returns
those numbers directly (``ValueError`` on bad input), as before. The channel's formulas (``b``,
``P``, ``C_x``, the exact epsilon, the transform, the variance and the rule of ``"auto"``) have one
copy, in the numpy-only runtime (:mod:`ldpplan.mechanisms.hadamard._channel`), re-exported here:
the planner and the runtime derive every number with the same code; the independent check is the
exact one (rational ``P``, 60-digit logarithms; the verifier's ``ratio_within``), not a second copy.

All probabilities in a plan are multiples of ``2^-48``: ``P`` is rounded *down* (a smaller ``P`` has
a smaller ratio), and the plan's epsilon is ``ln(P (2B - 1)/(1 - P))`` of the rounded ``P``, decided
exactly (60-digit logarithm of the exact rational).

References
----------
J. Acharya, Z. Sun, H. Zhang, "Hadamard Response: Estimating Distributions Privately, Efficiently,
and with Little Communication", AISTATS 2019 (arXiv:1802.04705): the Hadamard response (basic and
general, with blocks), its ``log2 K <= log2 k + 2`` bits of communication and its decoding by the
fast Walsh-Hadamard transform; the authors' implementation ``k2k_hadamard.py``
(``Hadamard_Rand_high_priv``: ``B = 1``; ``Hadamard_Rand_general_original``: blocks). The paper's
full text was not in the search corpus used for this module: equations are cited by content and
checked against the authors' code (``tests/test_hadamard.py``: same estimates on the same reports).
"""
from __future__ import annotations

import dataclasses
import math
import time
from decimal import Decimal

import numpy as np

from ..mechanisms import MAX_DOMAIN_SIZE as MAX_DOMAIN  # the runtime reads domains of at most 2^24 items
# the channel's formulas: one copy, in the runtime (re-exported here under their public names)
from ..mechanisms.hadamard._channel import (GRID_STEPS, auto_blocks, block_size, channel_matrix, check_blocks,
                                            exact_epsilon, fwht, in_set, keep_probability, supports,
                                            variance_coefficients, worst_l2)
from ._checks import check_epsilon
from ._result import STATUS_CLOSED_FORM, Certificate, SolveResult, SolverError

__all__ = ["GRID_STEPS", "MAX_DOMAIN", "block_size", "output_size", "output_bits", "keep_probability",
           "exact_epsilon", "in_set", "channel_matrix", "fwht", "supports", "HadamardNumbers", "solve_hadamard",
           "solve_hr", "SOLVER_NAME", "CERTIFICATE_SOURCE", "block_candidates", "authors_blocks",
           "randomized_response_l2"]

#: ``SolveResult.solver`` of :func:`solve_hr`, by the spec's ``blocks``: a number, or ``"auto"``.
SOLVER_NAME = {
    "given": "closed form on the 2^-48 grid (P rounded down), exact ln(P (2B-1)/(1-P)); B from the spec",
    "auto": "closed form on the 2^-48 grid (P rounded down), exact ln(P (2B-1)/(1-P)); B by the smallest "
            "worst-case l2 over powers of two",
}
#: ``Certificate.details["source"]`` of :func:`solve_hr`.
CERTIFICATE_SOURCE = "Hadamard response, Acharya-Sun-Zhang AISTATS 2019"


def output_size(k: int, blocks: int = 1) -> int:
    """``K = B b`` outputs (``B = 1``: ``2^ceil(log2(k + 1))``)."""
    return check_blocks(blocks) * block_size(k, blocks)


def output_bits(k: int, blocks: int = 1) -> int:
    """Bits of one report: ``log2 K`` (at most ``log2 k + 2``)."""
    return output_size(k, blocks).bit_length() - 1


def randomized_response_l2(epsilon: float, k: int, n: int = 1) -> float:
    """``E ||f_hat - f||^2`` of the k-ary RR at ``epsilon`` (the paper's baseline; the same for every distribution).

    ``mu = e^eps/(k - 1 + e^eps)``, ``nu = (1 - mu)/(k - 1)``: ``sum_x (nu(1-nu) + f(mu(1-mu) - nu(1-nu)))/(mu-nu)^2``.
    """
    e = math.exp(min(float(epsilon), 700.0))
    mu = e / (k - 1 + e)
    nu = (1 - mu) / (k - 1)
    return (k * nu * (1 - nu) + (mu * (1 - mu) - nu * (1 - nu))) / ((mu - nu) ** 2 * n)


@dataclasses.dataclass(frozen=True)
class HadamardNumbers:
    """The numbers of a Hadamard-response plan.

    Attributes
    ----------
    epsilon : float
        The requested budget (nats).
    domain_size : int
        ``k``.
    blocks, block_size, output_size : int
        ``B``, ``b`` and ``K = B b``.
    keep_probability : float
        ``P = Pr(y in C_x)``, a multiple of ``2^-48``.
    epsilon_exact : Decimal
        ``ln(P (2B - 1)/(1 - P))`` (nats), at most ``epsilon``.
    """

    epsilon: float
    domain_size: int
    blocks: int
    block_size: int
    output_size: int
    keep_probability: float
    epsilon_exact: Decimal

    @property
    def q(self) -> float:
        """``(1 - P)/(2B - 1)``: the probability that a report from outside ``x``'s block lands in ``C_x``."""
        return (1.0 - self.keep_probability) / (2 * self.blocks - 1)

    @property
    def report_bits(self) -> int:
        """``log2 K``."""
        return self.output_size.bit_length() - 1

    def variance_coefficients(self) -> tuple[float, float, float]:
        """``(c0, c_block, c1)`` of ``n Var f_hat(x) = c0 + c_block F_j + c1 f(x)`` (``c1 = -1``)."""
        return variance_coefficients(self.keep_probability, self.blocks)

    def worst_l2(self, n: int = 1) -> float:
        """Largest ``E ||f_hat - f||^2`` over distributions (all users in one full block; ``B = 1``: every one)."""
        return worst_l2(self.keep_probability, self.domain_size, self.blocks, n)


def block_candidates(k: int) -> list[int]:
    """``1, 2, 4, ...`` up to the first ``B`` with one item per block (``b = 2``)."""
    out, B = [], 1
    while True:
        out.append(B)
        if block_size(k, B) == 2:
            return out
        B *= 2


def authors_blocks(epsilon: float, k: int) -> int:
    """The authors' implementation's ``B = 2^floor(log2 min(e^eps, 2k))`` (a baseline)."""
    return 1 << int(math.floor(math.log2(min(math.exp(min(float(epsilon), 700.0)), 2 * int(k)))))


def _numbers(epsilon: float, k: int, B: int) -> HadamardNumbers:
    p = keep_probability(epsilon, B)
    if not p > (1.0 - p) / (2 * B - 1):
        raise SolverError(f"epsilon: {float(epsilon)!r} is too small for the 2^-48 probability grid with {B} blocks "
                          "(P rounds down to (1 - P)/(2B - 1): the estimator would divide by zero)")
    b = block_size(k, B)
    return HadamardNumbers(float(epsilon), k, B, b, B * b, p, exact_epsilon(p, B))


def solve_hr(epsilon: float, domain_size: int, blocks: int | str = "auto") -> SolveResult:
    """The grid numbers of the Hadamard response for ``epsilon`` over ``domain_size`` items, as a solver result.

    Parameters
    ----------
    epsilon : float
        Budget (nats), finite and > 0 (:func:`~ldpplan.solvers._checks.check_epsilon`).
    domain_size : int
        ``k``, 2 .. 2^24.
    blocks : int or "auto"
        ``B`` (a power of two), or ``"auto"``: the candidate (:func:`block_candidates`) with the
        smallest worst-case total squared error (ties: the smaller ``B``;
        :func:`ldpplan.mechanisms.hadamard._channel.auto_blocks`, the rule the runtime re-checks).

    Returns
    -------
    SolveResult
        ``status`` ``"closed_form"``; ``objective`` the worst-case total squared error times ``n``
        (squared frequency x users, :meth:`HadamardNumbers.worst_l2` at ``n = 1``); ``parameters``
        ``epsilon, domain_size, blocks, block_size, output_size, keep_probability`` (``B``, ``b``,
        ``K``, ``P`` spelled out, as in a plan's ``params``); ``certificate`` a closed form;
        ``extra["numbers"]`` the :class:`HadamardNumbers` and ``extra["epsilon_exact"]`` the exact
        ``ln(P (2B-1)/(1-P))`` (Decimal, nats).

    Raises
    ------
    SolverError
        A bad epsilon or ``blocks``, ``domain_size`` out of range, or an epsilon too small for the
        grid; the message names the field.

    References
    ----------
    Acharya, Sun & Zhang, AISTATS 2019 (arXiv:1802.04705): the general Hadamard response.
    """
    start = time.perf_counter()
    epsilon = check_epsilon(epsilon, error=SolverError)
    k = int(domain_size)
    if not 2 <= k <= MAX_DOMAIN:
        raise SolverError(f"domain_size: must be in [2, {MAX_DOMAIN}] (got {k})")
    try:
        B = auto_blocks(epsilon, k) if blocks == "auto" else check_blocks(blocks)
    except ValueError as exc:
        raise SolverError(str(exc)) from None
    numbers = _numbers(epsilon, k, B)  # "auto" with no B on the grid: B = 1, which raises naming the grid
    objective = numbers.worst_l2(1)
    params = {"epsilon": numbers.epsilon, "domain_size": k, "blocks": B, "block_size": numbers.block_size,
              "output_size": numbers.output_size, "keep_probability": numbers.keep_probability}
    return SolveResult(STATUS_CLOSED_FORM, objective, params,
                       Certificate("closed form", objective, objective, {"source": CERTIFICATE_SOURCE}),
                       SOLVER_NAME["auto" if blocks == "auto" else "given"], time.perf_counter() - start,
                       {"numbers": numbers, "epsilon_exact": numbers.epsilon_exact})


def solve_hadamard(epsilon: float, domain_size: int, blocks: int | str = "auto") -> HadamardNumbers:
    """The :class:`HadamardNumbers` of :func:`solve_hr` (kept for its callers; ``ValueError`` on bad input).

    Raises
    ------
    ValueError
        As :func:`solve_hr`'s ``SolverError``, with the same message.
    """
    try:
        return solve_hr(epsilon, domain_size, blocks).extra["numbers"]
    except SolverError as exc:
        raise ValueError(str(exc)) from None
