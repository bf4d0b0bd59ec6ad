"""Frozen result objects shared by every solver in :mod:`solvers`.

Solvers never return bare tuples: they return a :class:`SolveResult` whose
``parameters`` mapping uses the papers' symbol names (``a``, ``b``, ``epsilon1``,
``g`` ...) and whose ``certificate`` states why the answer can be trusted.
"""
from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any, Mapping

__all__ = ["Certificate", "SolveResult", "SolverError", "STATUS_OPTIMAL", "STATUS_CLOSED_FORM"]

#: The problem was solved to global optimality (certificate attached).
STATUS_OPTIMAL = "optimal"
#: The answer is a closed form from the paper (no numerical optimisation).
STATUS_CLOSED_FORM = "closed_form"


class SolverError(RuntimeError):
    """Raised when a solver cannot produce a certified answer.

    The message names the problem, the backend status and what was tried.
    """


@dataclasses.dataclass(frozen=True)
class Certificate:
    """Evidence that a solution is (globally) optimal.

    Attributes
    ----------
    kind : str
        How the bound was obtained, e.g. ``"cutting-plane lower bound"``,
        ``"conic duality gap"`` or ``"closed form"``.
    lower_bound : float
        A proven lower bound on the optimal objective (same units as the
        objective). ``-inf`` when no bound is available.
    upper_bound : float
        The objective at the returned (feasible) parameters.
    details : Mapping[str, Any]
        Extra, JSON-serialisable facts (number of cuts, reduced dimension ...).
    """

    kind: str
    lower_bound: float
    upper_bound: float
    details: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def gap(self) -> float:
        """Absolute optimality gap ``upper_bound - lower_bound`` (>= 0)."""
        return max(0.0, float(self.upper_bound) - float(self.lower_bound))

    @property
    def relative_gap(self) -> float:
        """Gap divided by ``max(1, |upper_bound|)``."""
        return self.gap / max(1.0, abs(float(self.upper_bound)))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (used in plan files)."""
        return {
            "kind": self.kind,
            "lower_bound": float(self.lower_bound),
            "upper_bound": float(self.upper_bound),
            "gap": self.gap,
            "relative_gap": self.relative_gap,
            "details": dict(self.details),
        }


@dataclasses.dataclass(frozen=True)
class SolveResult:
    """Outcome of one solve.

    Attributes
    ----------
    status : str
        ``"optimal"`` or ``"closed_form"``; failures raise :class:`SolverError`
        instead of returning a result.
    objective : float
        Objective value at ``parameters`` (the problem's own units, stated by
        the solver's docstring).
    parameters : Mapping[str, Any]
        The solution, keyed by the papers' symbol names. Arrays are numpy
        arrays (read-only).
    certificate : Certificate
        Optimality evidence.
    solver : str
        Name of the algorithm/backend that produced the answer.
    time_seconds : float
        Wall-clock solve time in seconds.
    extra : Mapping[str, Any]
        Problem-specific values (e.g. ``worst_case_mse`` for IDUE).
    """

    status: str
    objective: float
    parameters: Mapping[str, Any]
    certificate: Certificate
    solver: str
    time_seconds: float
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        params = {}
        for key, value in dict(self.parameters).items():
            if hasattr(value, "setflags"):
                value = value.copy()
                value.setflags(write=False)
            params[key] = value
        object.__setattr__(self, "parameters", MappingProxyType(params))
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))
        object.__setattr__(self, "certificate", self.certificate)

    def __getattr__(self, name: str) -> Any:
        # Convenience: result.a, result.b, result.epsilon1 ... read parameters.
        params = object.__getattribute__(self, "parameters")
        if name in params:
            return params[name]
        raise AttributeError(name)
