"""Parse and solve a spec once per ``ldpplan plan``: a memo that lives for one :meth:`ModuleFamily.plan` call.

A family's ``build_plan`` parses its spec and solves it; its ``verify`` re-derives what the embedded
spec asks for (parse and solve again) to check the plan against it. Run on its own (``ldpplan verify
plan.json``, :func:`ldpplan.verify_plan`) verify stays independent: no scope is open, :func:`once`
just calls the function. Inside :meth:`ModuleFamily.plan` (``ldpplan plan``, :func:`ldpplan.make_plan`)
a scope is open (:func:`plan_scope`) and ``once(parse_spec, spec)`` in verify returns the value
``once(parse_spec, raw)`` computed in build_plan **only when the spec mappings are equal** (the same
canonical JSON): verify then gets exactly what its own call would compute, and the work is not done
twice. The exact checks of the numbers are never memoized.

Rules for a call site (every family's ``plan`` and ``verify``, one helper for the six):

* the function is a pure function of its arguments (the spec mapping and numbers) within one plan() call;
* its result is read, never mutated, by both sides (plan dicts are built with copies: ``envelope``);
* ``base_dir`` is left out of the key: a parse reads a file only when the spec names one, and then the
  embedded spec that verify parses is a different mapping (files inlined or recorded values substituted:
  ``idue.spec.inline_spec``, ``pie.verify``), so the keys differ and verify parses on its own;
* a call that raises is not remembered (the next call raises again).
"""
from __future__ import annotations

import contextlib
import contextvars
import json
from typing import Any, Callable, Iterator, TypeVar

__all__ = ["plan_scope", "once"]

T = TypeVar("T")
_ARGS: Any = object()  # memo_key default: key by the arguments

_MEMO: contextvars.ContextVar[dict[tuple[Any, str], Any] | None] = contextvars.ContextVar("ldpplan_solve_once",
                                                                                          default=None)


@contextlib.contextmanager
def plan_scope() -> Iterator[None]:
    """Open a memo for one ``plan()`` call (nested calls, e.g. a report's what-ifs, get their own)."""
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def _canonical(value: Any) -> str | None:
    """Canonical JSON of ``value`` (sorted keys, floats by repr: 1 and 1.0 differ); None if not JSON."""
    try:
        return json.dumps(value, sort_keys=True, allow_nan=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return None


def once(fn: Callable[..., T], /, *args: Any, memo_key: Any = _ARGS, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, computed once per open :func:`plan_scope` for an equal key.

    The key is ``fn`` and the canonical JSON of ``args`` or, where an argument is not JSON (a parsed
    spec), of ``memo_key``: the spec mapping that argument was parsed from. Keyword arguments are
    passed, not keyed (``base_dir``, see the module docstring). Outside a scope, or with a key that is
    not JSON, ``fn`` is simply called.
    """
    memo = _MEMO.get()
    key = None if memo is None else _canonical(args if memo_key is _ARGS else memo_key)
    if memo is None or key is None:
        return fn(*args, **kwargs)
    slot = (fn, key)
    if slot not in memo:
        memo[slot] = fn(*args, **kwargs)
    return memo[slot]
