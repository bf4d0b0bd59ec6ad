"""Total mapping of exceptions to the CLI's exit codes and one-line messages (no printing here).

* exit 1: a privacy guarantee does not hold (:class:`PrivacyViolation`);
* exit 2: bad input: the planner's :class:`SpecError`, :class:`PlanFormatError`,
  :class:`InputDataError`, the runtime's ``PlanError`` and ``ValueError``, and the
  errors reading or using an input produces (TypeError, OverflowError, ZeroDivisionError,
  RecursionError, MemoryError, OSError, UnicodeError); a missing optional dependency;
* exit 2 too, for anything else: it is a bug in ldpplan, and the message says so.
"""
from __future__ import annotations

import re

from .errors import LdpplanError, PrivacyViolation

__all__ = ["EXIT_OK", "EXIT_VIOLATED", "EXIT_BAD_INPUT", "classify", "one_line"]

EXIT_OK, EXIT_VIOLATED, EXIT_BAD_INPUT = 0, 1, 2
_MAX_LEN = 2000
#: ``np.float64(1.5)`` -> ``1.5`` (numpy >= 2 reprs of scalars inside messages).
_NUMPY_SCALAR = re.compile(r"\bnp\.(?:float|int|uint|complex|longdouble|bool_?|str_)\d*\(([^()]*)\)")

_BAD_INPUT = (ValueError, TypeError, OverflowError, ZeroDivisionError, RecursionError, MemoryError, OSError,
              UnicodeError, ArithmeticError)


def one_line(message: str) -> str:
    """The message on one line, numpy scalars shown as plain numbers, bounded in length."""
    text = _NUMPY_SCALAR.sub(r"\1", str(message))
    text = " ".join(text.split())
    return text if len(text) <= _MAX_LEN else text[: _MAX_LEN - 3] + "..."


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        text = repr(exc.args[0])
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


#: top-level module -> what to install when it is missing
_EXTRAS = {"randomgen": "'ldpplan[secure]'", "dask": "'ldpplan[dask]'", "distributed": "'ldpplan[dask]'"}


def _import_error(exc: ImportError) -> tuple[int, str]:
    """A missing third-party module is bad setup (exit 2, what to install); a broken ldpplan import is a bug."""
    name = (getattr(exc, "name", None) or "").split(".")[0]
    if name == "ldpplan" or (not name and "cannot import name" in str(exc)):
        return EXIT_BAD_INPUT, one_line(f"internal error (please report): {_describe(exc)}")
    hint = f" (pip install {_EXTRAS.get(name, chr(39) + 'ldpplan[planner]' + chr(39))})" if name and "pip install" not in str(exc) else ""
    return EXIT_BAD_INPUT, one_line(f"a dependency is not installed: {exc}{hint}")


def classify(exc: BaseException) -> tuple[int, str]:
    """``(exit code, one-line message)`` of an exception that reached the CLI.

    Parameters
    ----------
    exc : BaseException
        Anything but click's own exceptions and SystemExit (the CLI lets those through).

    Returns
    -------
    tuple of (int, str)
        1 for a violated guarantee; 2 for bad input, a missing optional dependency, or a bug
        (``"internal error (please report): ..."``).
    """
    if isinstance(exc, PrivacyViolation):
        return EXIT_VIOLATED, one_line(str(exc))
    if isinstance(exc, LdpplanError):
        return EXIT_BAD_INPUT, one_line(str(exc))
    if isinstance(exc, ImportError):
        return _import_error(exc)
    if isinstance(exc, RecursionError):
        return EXIT_BAD_INPUT, "input is nested too deeply to process (RecursionError)"
    if isinstance(exc, MemoryError):
        return EXIT_BAD_INPUT, "input is too large to process in memory (MemoryError)"
    if isinstance(exc, _BAD_INPUT):
        text = str(exc) if isinstance(exc, ValueError) and str(exc) else _describe(exc)
        return EXIT_BAD_INPUT, one_line(text)
    return EXIT_BAD_INPUT, one_line(f"internal error (please report): {_describe(exc)}")
