"""The list parsers of ULDP simulation options (the typed model is ``simulate.SimulateOptions``)."""
from __future__ import annotations

import math

from ..errors import SpecError

__all__ = ["GSS_SENSITIVE_CHOICES", "METHOD_NAMES", "parse_epsilons", "parse_methods"]

GSS_SENSITIVE_CHOICES = {"lowed": ("educGroup", "<12 yrs"), "foreign": ("nativeBorn", "no")}
#: Short names of ``-O methods`` -> runtime ``estimate`` methods.
METHOD_NAMES = {"emp": "empirical", "thr": "threshold", "em": "em"}


def parse_epsilons(text: str, k: int) -> list[float]:
    """The sorted distinct epsilons (nats) of ``-O epsilons=...``; ``ln`` stands for ``ln k`` (k = |X|).

    Raises
    ------
    SpecError
        ``-O epsilons``: not a number, outside (0, 100], or empty.
    """
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part in ("ln", "ln|X|"):
            out.append(math.log(k))
            continue
        try:
            v = float(part)
        except ValueError:
            raise SpecError("-O epsilons", "must be comma-separated numbers > 0 (or 'ln' for ln|X|)", text) from None
        if not (math.isfinite(v) and 0 < v <= 100):
            raise SpecError("-O epsilons", "every epsilon must be in (0, 100]", text)
        out.append(v)
    if not out:
        raise SpecError("-O epsilons", "must list at least one epsilon", text)
    return sorted(set(out))


def parse_methods(text: str) -> list[str]:
    """The short method names of ``-O methods=...`` (subset of ``emp, thr, em``; see :data:`METHOD_NAMES`).

    Raises
    ------
    SpecError
        ``-O methods``: empty or an unknown name.
    """
    methods = [m.strip() for m in text.split(",") if m.strip()]
    if not methods or any(m not in METHOD_NAMES for m in methods):
        raise SpecError("-O methods", "must be a comma-separated subset of emp,thr,em", text)
    return methods
