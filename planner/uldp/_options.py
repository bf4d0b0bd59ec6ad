"""Typed ``-O KEY=VALUE`` options of ULDP simulations and their list parsers."""
from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import SpecError

__all__ = ["ULDPSimOptions", "GSS_SENSITIVE_CHOICES", "METHOD_NAMES", "parse_epsilons", "parse_methods"]

GSS_SENSITIVE_CHOICES = {"lowed": ("educGroup", "<12 yrs"), "foreign": ("nativeBorn", "no")}
#: Short names of ``-O methods`` -> runtime ``estimate`` methods.
METHOD_NAMES = {"emp": "empirical", "thr": "threshold", "em": "em"}


class ULDPSimOptions(BaseModel):
    """``-O KEY=VALUE`` options of ``ldpplan simulate`` for ULDP plans."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    epsilons: str = Field("0.1,0.5,1,2,4,ln", description="comma-separated epsilons (nats); 'ln' = ln|X|")
    methods: str = Field("emp,thr,em", description="comma-separated subset of emp,thr,em")
    tol: float = Field(1e-10, gt=0, description="uRAP/RAPPOR EM (the full-report MLE) stops when its "
                       "certified optimality gap is <= tol |log-likelihood| (the runtime's "
                       "one stopping rule; uRR and RR use the exact maximum-likelihood estimate)")
    max_iter: int = Field(1000, ge=1, description="cap on EM steps")
    alpha: float = Field(0.05, gt=0, lt=1, description="Bonferroni level of emp+thr")
    sensitive: Literal["lowed", "foreign"] = Field("lowed", description="GSS X_S (--data gss_vocab.csv): educGroup '<12 yrs' or nativeBorn 'no'")
    sample: Literal["iid", "fixed"] = Field("iid", description="iid: users drawn from the true distribution per trial; "
                                                              "fixed: the data's users as they are")
    n: int = Field(100000, ge=1, description="synthetic users (without --data)")
    tag_rate: float = Field(0.5, ge=0, le=1, description="PUM: chance that a user at a tag's item regards it as private")


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
