"""PIE spec: re-identification targets for the k-ary RR and the GLH.

Spec (TOML/JSON)::

    mechanism = "rr"          # "rr" (eq. 2) | "glh" (eq. 3) | "pie" (the smaller total l2 loss)
    domain = 10500393         # |X| (int) or a list of labels; `domain_size` is the pinned alias
    users = 1370637           # n; `n` is the pinned alias; or users = {data = "gss_vocab.csv"}
    releases = 1              # t releases per user (Thm. 4.3 / 4.5), optional
    g_max = 2147483647        # GLH hash range bound (e.g. 2**report_bits), optional
    epsilon_max = 30.0        # cap when the target allows any epsilon, optional
    [target]                  # exactly one of bayes_error / alpha_bits / epsilon
    bayes_error = 0.5         # lower bound on the adversary's Bayes error (Cor. 3.9)
    # max_prior = 1e-4        # non-uniform prior: max_u Pr(U = u) (default 1/n, uniform)
    # max_prior = {data = "weights.csv", column = "weight"}   # max w / sum w of users' prior weights

``users = {data = PATH}`` reads n from a data file (the GSS vocabulary file: respondents
with the four PIE fields; any other CSV: its rows) and ``target.max_prior = {data, column}``
reads the prior bound from users' weights; the plan records each number in
``planning_inputs`` (``private: false``: only a count or a maximum share is used) and
``verify`` checks the plan against those recorded values.
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, Literal, Mapping, Optional

from pydantic import BaseModel, ConfigDict, Field

from ...mechanisms.pie import HASH_PRIME, HASH_PRIME_LARGE  # the GLH runtime's primes (re-exported)
from .._common import Epsilon, SpecBase, check_labels, spec_from_pydantic
from ..errors import InputDataError, SpecError
from ..data import count_pie_users, resolve_data_path, max_prior_from_weights

__all__ = ["PIESpec", "Target", "UsersFromData", "ParsedSpec", "parse_spec", "HASH_PRIME", "HASH_PRIME_LARGE",
           "MAX_DOMAIN", "MAX_USERS"]

#: largest |X| (k-RR): planning, verification and perturbation take O(1) memory in |X|; aggregate and
#: estimate are bounded by their memory budget (``--max-memory``)
MAX_DOMAIN = 2**62
#: largest number of users accepted (log2 n and 1/n stay exact enough in float64)
MAX_USERS = 10**15


class Target(BaseModel):
    """Exactly one of ``bayes_error``, ``alpha_bits``, ``epsilon``; optional ``max_prior``."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    bayes_error: Optional[float] = Field(None, gt=0, lt=1, description="Cor. 3.9 lower bound on the Bayes error")
    alpha_bits: Optional[float] = Field(None, gt=0, description="PIE alpha, bits (Def. 3.1)")
    epsilon: Optional[Epsilon] = Field(None, description="plain LDP epsilon, nats")
    central_epsilon: Optional[Epsilon] = Field(None, description="central epsilon of the shuffled batch, nats "
                                               "(needs a [shuffle] block; planning.shuffle picks the largest epsilon0)")
    max_prior: Any = Field(None, description="max_u Pr(U=u) in (0, 1] (default 1/n, uniform), or "
                                             "{data = PATH, column = NAME}: the largest share of a weight column")


class UsersFromData(BaseModel):
    """``users = {data = PATH}``: n is the number of users in a data file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    data: str = Field(min_length=1, description="CSV file (the GSS vocabulary file, or any CSV with a header: its rows)")


class PIESpec(SpecBase):
    """The PIE family's spec model (see the module docstring)."""

    mechanism: Literal["pie", "rr", "glh"]
    domain: Any = Field(None, description="|X| (int) or the labels of X (list of distinct strings)")
    domain_size: Optional[int] = Field(None, ge=2, le=MAX_DOMAIN, description="|X| (pinned alias of domain)")
    users: Any = Field(None, description="number of users n (int), or {data = PATH} (n read from a data file)")
    n: Optional[int] = Field(None, ge=2, le=MAX_USERS, description="number of users (pinned alias of users)")
    target: Target
    releases: int = Field(1, ge=1, le=10**6, description="releases per user t (Thm. 4.3 / 4.5)")
    g_max: int = Field(HASH_PRIME, ge=2, le=HASH_PRIME_LARGE, description="largest GLH hash range")
    epsilon_max: float = Field(30.0, gt=0, le=60, description="epsilon cap, nats")
    name: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class ParsedSpec:
    """A validated spec with the resolved numbers.

    Attributes
    ----------
    model : PIESpec
    domain_size : int
    labels : list of str or None
    n : int
    planning_inputs : list of dict
        ``{"what", "source", "private", "value"}`` for numbers read from data files.
    """

    model: PIESpec
    domain_size: int
    labels: list[str] | None
    n: int
    planning_inputs: list[dict]

    @property
    def target(self) -> Target:
        """The spec's target."""
        return self.model.target

    @property
    def max_prior(self) -> float | None:
        """``target.max_prior`` (None: uniform, ``1/n``)."""
        return self.model.target.max_prior


def _domain(spec: PIESpec) -> tuple[int, list[str] | None]:
    d = spec.domain
    if d is not None and (isinstance(d, bool) or not isinstance(d, (int, list))
                          or (isinstance(d, list) and not all(isinstance(v, str) for v in d))):
        raise SpecError("domain", "must be an integer size or a list of label strings", d)
    if isinstance(d, list):
        check_labels("domain", d)
        if len(d) < 2:
            raise SpecError("domain", "needs at least 2 labels", d)
        if len(set(d)) != len(d):
            raise SpecError("domain", "labels must be distinct", d)
        if spec.domain_size is not None and spec.domain_size != len(d):
            raise SpecError("domain_size", f"must equal the number of labels in domain ({len(d)})", spec.domain_size)
        return len(d), list(d)
    if isinstance(d, int):
        if not (2 <= d <= MAX_DOMAIN):
            raise SpecError("domain", f"must be an integer in [2, {MAX_DOMAIN}]", d)
        if spec.domain_size is not None and spec.domain_size != d:
            raise SpecError("domain_size", f"must equal domain ({d}) when both are given", spec.domain_size)
        return d, None
    if spec.domain_size is None:
        raise SpecError("domain_size", "give domain (|X| or a list of labels) or domain_size", None)
    return spec.domain_size, None


def _users(spec: PIESpec, base_dir: Path | None) -> tuple[int, list[dict]]:
    u = spec.users
    if u is not None and spec.n is not None:
        raise SpecError("n", "give users or n, not both", spec.n)
    if isinstance(u, Mapping):
        if set(u) != {"data"} or not isinstance(u["data"], str) or not u["data"]:
            raise SpecError("users", "must be an integer >= 2 or {data = PATH} (one key 'data', a path string)", u)
        u = UsersFromData(data=u["data"])
    elif u is not None and (isinstance(u, bool) or not isinstance(u, int)):
        raise SpecError("users", "must be an integer >= 2 or {data = PATH}", u)
    if isinstance(u, int):
        if not (2 <= u <= MAX_USERS):
            raise SpecError("users", f"must be an integer in [2, {MAX_USERS}]", u)
        return u, []
    if isinstance(u, UsersFromData):
        path = resolve_data_path(u.data, base_dir)
        try:
            n = count_pie_users(path)
        except InputDataError as exc:
            raise SpecError("users.data", f"must be a readable data file ({exc})", u.data) from None
        if n < 2:
            raise SpecError("users.data", "must hold at least 2 users", u.data)
        return n, [{"what": "users (n)", "source": u.data, "private": False, "value": n}]
    if spec.n is None:
        raise SpecError("users", "give the number of users (users or n)", None)
    return spec.n, []


def _max_prior(spec: PIESpec, base_dir: Path | None) -> tuple[float | None, list[dict]]:
    m = spec.target.max_prior
    if m is None:
        return None, []
    if isinstance(m, Mapping):
        if set(m) != {"data", "column"} or not all(isinstance(m[key], str) and m[key] for key in m):
            raise SpecError("target.max_prior", "must be a number in (0, 1] or {data = PATH, column = NAME}", m)

        try:
            value = max_prior_from_weights(resolve_data_path(m["data"], base_dir), m["column"])
        except InputDataError as exc:
            raise SpecError("target.max_prior.data", f"must be a readable weight file ({exc})", m["data"]) from None
        return value, [{"what": "target.max_prior", "source": f"{m['data']} (column {m['column']})",
                        "private": False, "value": value}]
    if isinstance(m, bool) or not isinstance(m, (int, float)) or not (0.0 < float(m) <= 1.0) or not math.isfinite(m):
        raise SpecError("target.max_prior", "must be a number in (0, 1] or {data = PATH, column = NAME}", m)
    return float(m), []


def parse_spec(raw: Mapping[str, Any], base_dir: Path | None = None) -> ParsedSpec:
    """Validate a PIE spec (pydantic + cross-field rules) and resolve domain and n.

    Raises
    ------
    SpecError
        Names the field, the rule and the value.
    """
    spec = spec_from_pydantic(PIESpec, raw)
    k, labels = _domain(spec)
    n, inputs = _users(spec, base_dir)
    max_prior, prior_inputs = _max_prior(spec, base_dir)
    if spec.target.max_prior is not None:
        spec = spec.model_copy(update={"target": spec.target.model_copy(update={"max_prior": max_prior})})
    inputs = inputs + prior_inputs
    t = spec.target
    given = [name for name in ("bayes_error", "alpha_bits", "epsilon", "central_epsilon") if getattr(t, name) is not None]
    if len(given) != 1:
        raise SpecError("target", "must set exactly one of bayes_error, alpha_bits, epsilon, central_epsilon", given)
    if t.central_epsilon is not None and spec.shuffle is None:
        raise SpecError("target.central_epsilon", "needs a [shuffle] block with n and delta", t.central_epsilon)
    if t.max_prior is not None and t.max_prior < 1.0 / n:
        raise SpecError("target.max_prior", f"must be >= 1/n = {1.0 / n:.6g} (a prior cannot be flatter than uniform)",
                        t.max_prior)
    if t.bayes_error is not None:
        prior_bits = -math.log2(t.max_prior) if t.max_prior is not None else math.log2(n)
        if (1.0 - t.bayes_error) * prior_bits <= 1.0 + 1e-9:
            largest = 1.0 - 1.0 / prior_bits if prior_bits > 0 else 0.0
            raise SpecError("target.bayes_error",
                            f"cannot be certified by Cor. 3.9 with n = {n}"
                            + (f" and max_prior = {t.max_prior}" if t.max_prior else "")
                            + f": needs (1 - bayes_error) * log2(1/max_prior) > 1 bit (largest certifiable is "
                            f"{largest:.6g})", t.bayes_error)
    return ParsedSpec(spec, k, labels, n, inputs)
