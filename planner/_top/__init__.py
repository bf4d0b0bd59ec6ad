"""ldpplan: an optimization-centric privacy-budget planner for local differential privacy.

The package is one import namespace:

* :mod:`ldpplan.planner`: specs, planning, verification, simulation and the CLI;
* :mod:`ldpplan.solvers`: convex programs and closed forms (numpy, scipy, cvxpy);
* :mod:`ldpplan.mechanisms`: the numpy-only runtime (perturb, aggregate, estimate).

The names below are imported lazily, so ``import ldpplan`` (and
``import ldpplan.mechanisms``) loads neither cvxpy nor scipy: the core distribution is the
numpy-only runtime; ``make_plan`` and ``verify_plan`` need the extra ``ldpplan[planner]``.

Examples
--------
>>> import ldpplan
>>> plan = ldpplan.make_plan(ldpplan.planner.example_spec("health"))   # doctest: +SKIP
>>> ldpplan.verify_plan(plan).holds                                      # doctest: +SKIP
True
>>> mech = ldpplan.load(plan)                                            # doctest: +SKIP
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["make_plan", "verify_plan", "load", "secure_rng", "__version__"]

_LAZY = {
    "make_plan": ("ldpplan.planner.api", "make_plan"),
    "verify_plan": ("ldpplan.planner.api", "verify_plan"),
    "load": ("ldpplan.mechanisms", "load"),
    "secure_rng": ("ldpplan.mechanisms", "secure_rng"),
}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ldpplan")
    except PackageNotFoundError:  # pragma: no cover - not installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return _version()
    if name in _LAZY:
        module, attr = _LAZY[name]
        try:
            return getattr(importlib.import_module(module), attr)
        except ImportError as exc:
            from ._cli import missing_planner_dependency

            message = missing_planner_dependency(exc)
            if message is None:
                raise
            raise ImportError(message, name=exc.name) from None
    if name in ("planner", "solvers", "mechanisms"):
        return importlib.import_module(f"ldpplan.{name}")
    raise AttributeError(f"module 'ldpplan' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, "planner", "solvers", "mechanisms"])
