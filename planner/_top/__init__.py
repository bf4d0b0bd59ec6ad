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

from typing import Any

from ._cli import missing_planner_dependency

__all__ = ["make_plan", "verify_plan", "load", "secure_rng", "__version__"]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # deferred: stdlib, 30 ms (``import ldpplan``)

    try:
        return version("ldpplan")
    except PackageNotFoundError:  # pragma: no cover - not installed
        return "0+unknown"


def _planner_api() -> Any:
    """``ldpplan.planner.api``, or an ImportError of one line naming the extra to install."""
    try:
        from .planner import api  # deferred: pydantic, click (the extra ``ldpplan[planner]``) and numpy
    except ImportError as exc:
        message = missing_planner_dependency(exc)
        if message is None:
            raise
        raise ImportError(message, name=exc.name) from None
    return api


def __getattr__(name: str) -> Any:
    # Each name is a plain import of the module that defines it, deferred so that ``import ldpplan``
    # stays free of numpy (the runtime) and of the planner's extra (pydantic, cvxpy, scipy).
    if name == "__version__":
        return _version()
    if name == "make_plan":
        return _planner_api().make_plan
    if name == "verify_plan":
        return _planner_api().verify_plan
    if name in ("load", "secure_rng", "mechanisms"):
        import ldpplan.mechanisms as mechanisms  # deferred: numpy (``from . import`` would recurse into here)

        return {"load": mechanisms.load, "secure_rng": mechanisms.secure_rng, "mechanisms": mechanisms}[name]
    if name == "solvers":
        import ldpplan.solvers as solvers  # deferred: numpy, scipy, cvxpy (as above)

        return solvers
    if name == "planner":  # a runtime-only process never loads the planner package (tests/test_registry.py)
        import ldpplan.planner as planner  # deferred: pydantic (the planner extra, with its first name used)

        return planner
    raise AttributeError(f"module 'ldpplan' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*__all__, "planner", "solvers", "mechanisms"])
