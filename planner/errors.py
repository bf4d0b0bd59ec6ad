"""Errors raised by the planner. The CLI maps them to exit codes.

* :class:`SpecError` (exit 2): the spec breaks a rule. Names field, rule, value.
* :class:`PlanFormatError` (exit 2): a plan file is unreadable or invalid.
* :class:`PrivacyViolation` (exit 1 for ``verify``): the numbers break the guarantee.
* :class:`InputDataError` (exit 2): a data/reports file is unreadable or invalid.
"""
from __future__ import annotations

from typing import Any

__all__ = ["LdpplanError", "SpecError", "PlanFormatError", "PrivacyViolation", "InputDataError", "MissingDependency",
           "needs_planner_extra"]


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers, so messages say ``1.5``, not ``np.float64(1.5)``."""
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", None) == 0:
        return item()
    return value


def _show(value: Any) -> str:
    text = repr(_plain(value))
    return text if len(text) <= 80 else text[:77] + "..."


class LdpplanError(Exception):
    """Base class of every error the planner raises on purpose."""


class SpecError(LdpplanError, ValueError):
    """A spec value breaks a rule.

    Parameters
    ----------
    field : str
        Dotted path of the offending key, e.g. ``"levels[1].epsilon"``.
    rule : str
        The rule, phrased as a requirement ("must be a finite number > 0").
    value : Any
        The offending value (shown with ``repr``).
    source : str, optional
        File the spec came from.
    """

    def __init__(self, field: str, rule: str, value: Any = None, source: str | None = None):
        self.field, self.rule, self.value, self.source = field, rule, value, source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{field}: {rule} (got {_show(value)})")

    def with_source(self, source: str) -> "SpecError":
        """Return a copy that names the file the spec came from."""
        return SpecError(self.field, self.rule, self.value, source)


class PlanFormatError(LdpplanError, ValueError):
    """A plan file cannot be read, or does not match the plan schema."""


class InputDataError(LdpplanError, ValueError):
    """A data or reports file cannot be read or does not fit the plan."""


class PrivacyViolation(LdpplanError):
    """The parameters violate the stated guarantee.

    Attributes
    ----------
    detail : dict
        Which constraint (e.g. the pair of levels) and by how much (in nats).
    """

    def __init__(self, message: str, detail: dict | None = None):
        self.detail = detail or {}
        super().__init__(message)


#: top-level module -> the extra that installs it (anything else comes with ``ldpplan[planner]``)
_EXTRAS = {"randomgen": "ldpplan[secure]", "dask": "ldpplan[dask]", "distributed": "ldpplan[dask]"}


class MissingDependency(LdpplanError, ImportError):
    """A third-party package of an optional extra is not installed (one line naming the extra).

    Parameters
    ----------
    module : str
        The missing top-level module (e.g. ``"pydantic"``).
    what : str
        What needed it (e.g. ``"ldpplan.make_plan"``).
    """

    def __init__(self, module: str, what: str = "the ldpplan planner"):
        self.module, self.extra = module, _EXTRAS.get(module, "ldpplan[planner]")
        super().__init__(f"{what} needs the package {module!r}, which is not installed: pip install '{self.extra}'",
                         name=module)


def needs_planner_extra(function):
    """Decorate a public planner function: a missing third-party module becomes :class:`MissingDependency`.

    The planner imports pydantic, scipy and cvxpy lazily, so ``ldpplan.make_plan`` resolves
    without them; calling it then raises one line naming ``ldpplan[planner]`` instead of
    ``ModuleNotFoundError: pydantic``. An ImportError of ldpplan itself (a bug) passes unchanged.
    """
    import functools

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except MissingDependency:
            raise
        except ImportError as exc:
            module = (getattr(exc, "name", None) or "").split(".")[0]
            if not module or module == "ldpplan":
                raise
            raise MissingDependency(module, f"ldpplan.{function.__name__}") from None

    return wrapper
