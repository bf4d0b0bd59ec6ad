"""The client runtime ships runtimes only: every mechanism class in ``mechanisms/`` is built from a plan.

Comparison baselines without a plan (PrivKVM, KVUE) live with the simulation code
(``planner/pckv/_baselines.py``), not in the package a client installs.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import ldpplan.mechanisms as runtime


def _runtime_modules():
    for info in pkgutil.walk_packages(runtime.__path__, runtime.__name__ + "."):
        yield importlib.import_module(info.name)


def _mechanism_classes():
    """Classes defined in ``mechanisms/`` that perturb (a mechanism's client side)."""
    for module in _runtime_modules():
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and callable(getattr(cls, "perturb", None)):
                yield cls


def test_every_mechanism_class_of_the_runtime_has_from_plan():
    classes = list(_mechanism_classes())
    assert len(classes) >= 9  # the nine plan mechanisms' runtimes, at least
    missing = [f"{c.__module__}.{c.__qualname__}" for c in classes
               if not inspect.isabstract(c) and not c.__name__.startswith("_")
               and not callable(getattr(c, "from_plan", None))]
    assert missing == []


def test_the_baselines_are_not_in_the_runtime():
    names = {info.name for info in pkgutil.walk_packages(runtime.__path__, runtime.__name__ + ".")}
    assert not any("privkvm" in n or "baseline" in n for n in names)
    from ldpplan.planner.pckv._baselines import KVUE, PrivKVM

    for cls in (PrivKVM, KVUE):
        assert not hasattr(cls, "from_plan") and not cls.__module__.startswith("ldpplan.mechanisms")
