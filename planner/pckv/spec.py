r"""The PCKV spec model (TOML/JSON keys), on :class:`planner._common.SpecBase`.

Keys
----
``mechanism``
    ``"pckv-ue"``, ``"pckv-grr"`` or ``"pckv"`` (choose the one with the smaller
    predicted error, Theorem 4 and Sec. 5.4; the plan records the candidates in ``baselines``).
``epsilon``
    Total budget in nats, ``0 < epsilon <= 20`` (the shared range of every family, 0 < epsilon <= 100, capped at 20 here).
``domain`` (or the pinned name ``keys``)
    ``d`` as a count, a list of distinct key labels, or ``"data"`` (the distinct keys of
    the ``data`` file).
``padding_length``
    ``L >= 1``, ``"auto"`` (needs ``set_size_distribution`` or ``data``; reads raw set sizes:
    recorded in ``planning_inputs`` with ``private = false``), or the private two-phase route
    ``{private = {epsilon = 1.0, user_share = 0.1, max = 64}}`` (PCKV Sec. 5.1, after Wang et
    al. [23]): a random ``user_share`` of the users (phase 1) reports ``min(set size, max)``
    with a k-ary RR over ``{0..max}`` at ``epsilon`` (nats); the planner estimates the set-size
    distribution from those reports only (empirical estimator projected onto the simplex),
    chooses ``L`` in ``1..max`` with the prior key model (``prior_frequencies`` /
    ``prior_means`` or their defaults) and records ``private = true``. Phase-1 users are
    EXCLUDED from phase 2 (each user takes part in one mechanism, so each user's guarantee is
    that mechanism's epsilon); predictions use the ``n - round(user_share n)`` phase-2 users.
    The phase-1 reports come from ``counts`` (the RR output counts of a real phase 1,
    ``max + 1`` integers) or, for a simulation, from ``data`` (users drawn with ``seed``).
    Default 1.
``allocation``
    ``"optimized"`` (Lemma 2 / Lemma 3, default), ``"numeric"``, ``"naive"``, ``"tight"`` (eq. 21).
``weights``
    ``{frequency = w_f, mean = w_m}`` of the objective ``w_f MSE_f + w_m MSE_m`` (default 1, 1).
``users``
    ``n`` for predicted errors (default: the data's user count, else 1,000,000).
``prior_frequencies`` / ``prior_means``
    Optional lists of length ``d`` (defaults: pairs spread uniformly over keys; ``|m_k| = 1``,
    the worst case of eq. (11)).
``min_key_frequency``
    Without ``prior_frequencies`` or ``data`` the key distribution is left open and the headline
    ``predicted.mse_mean`` is the corrected (default) estimator's worst case over every key with
    frequency at least this floor (default ``1/n``: every key a user holds) and any means in [-1, 1];
    ``predicted.mse_mean_theorem4`` is Theorem 4's worst case over keys at or above it (default half
    the uniform frequency, ``min(1, E[set size]/d) / 2``, as Theorem 4 is unbounded as ``f -> 0``).
    Refused when the frequencies are given (priors or data: the predictions are at them).
``set_size_distribution``
    Optional table ``{"1" = 0.5, "2" = 0.3, ...}`` (pairs per user -> probability or count).
``data``
    Optional key-value CSV (``user,key,value``, ``user_id,key,value`` or MovieLens
    ``userId,movieId,rating``); ``${LDPPLAN_DATA_DIR}`` resolves with
    :func:`planner.data.default_data_dir`; relative paths against the spec's folder.
``objective_keys``
    ``"all"`` (default) or ``N``: the objective averages over the ``N`` most frequent keys.
``max_padding_length``
    Upper end of the ``L = "auto"`` search (default 64).
``values`` / ``out_of_domain_keys``
    Runtime handling: ``"reject"`` (default) or ``"clip"`` values outside [-1, 1];
    ``"reject"`` (default) or ``"drop"`` keys outside the plan's domain.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal, Mapping, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .._common import SpecBase, check_labels, spec_from_pydantic
from ..errors import SpecError

__all__ = ["PCKVSpec", "PrivatePhase", "PrivatePaddingLength", "private_phase", "required_private_phase",
           "Weights", "parse_spec", "MAX_EPSILON", "DEFAULT_USERS", "ALLOCATIONS"]

#: Largest total budget a PCKV spec accepts (nats): tighter than the shared range (``Epsilon``) because
#: above about 20 nats the 2^-48 probability grid leaves no 0 < b < a < 1.
MAX_EPSILON = 20.0
#: a PCKV budget: ``_common.Epsilon`` with the upper end MAX_EPSILON (``_common.epsilon_at_most(MAX_EPSILON)``
#: written as a static alias, so a type checker reads it)
PCKVEpsilon = Annotated[float, Field(gt=0, le=MAX_EPSILON, allow_inf_nan=False)]
#: ``n`` for predictions when neither ``users`` nor data give it.
DEFAULT_USERS = 1_000_000
ALLOCATIONS = ("optimized", "numeric", "naive", "tight")

DomainValue = Union[Literal["data"], int, list[Union[str, int]]]


class Weights(BaseModel):
    """Weights of the objective ``w_f MSE_f + w_m MSE_m``."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    frequency: float = Field(default=1.0, ge=0)
    mean: float = Field(default=1.0, ge=0)


class PrivatePhase(BaseModel):
    """Phase 1 of the private padding-length route (see ``padding_length`` above)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    epsilon: PCKVEpsilon = Field(description="phase-1 LDP budget (nats) of the k-ary RR")
    user_share: float = Field(gt=0, lt=1, description="share of the users that report their set size (phase 1)")
    max: int = Field(64, ge=1, le=10_000, description="L_max: reported sizes are capped at max; L is chosen in 1..max")
    seed: int = Field(0, ge=0, description="simulation of phase 1 on the data file: seed of the user split and RR")
    counts: Optional[list[int]] = Field(None, description="RR output counts of a real phase 1 (max + 1 integers)")


class PrivatePaddingLength(BaseModel):
    """``padding_length = {private = {...}}``."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    private: PrivatePhase


class PCKVSpec(SpecBase):
    """A PCKV spec (see the module docstring for the keys)."""

    mechanism: Literal["pckv", "pckv-ue", "pckv-grr"]
    epsilon: PCKVEpsilon
    domain: Optional[DomainValue] = None
    keys: Optional[DomainValue] = None
    padding_length: Union[Literal["auto"], int, PrivatePaddingLength] = 1
    allocation: Literal["optimized", "numeric", "naive", "tight"] = "optimized"
    weights: Weights = Weights()
    users: Optional[int] = Field(None, ge=1)
    prior_frequencies: Optional[list[float]] = None
    prior_means: Optional[list[float]] = None
    min_key_frequency: Optional[float] = Field(None, gt=0, le=1)
    set_size_distribution: Optional[dict[str, float]] = None
    data: Optional[str] = None
    objective_keys: Union[Literal["all"], int] = "all"
    max_padding_length: int = Field(64, ge=1, le=100_000)
    values: Literal["reject", "clip"] = "reject"
    out_of_domain_keys: Literal["reject", "drop"] = "reject"

    @field_validator("padding_length", mode="before")
    @classmethod
    def _private_table(cls, v: Any) -> Any:
        if isinstance(v, Mapping):
            try:
                return PrivatePaddingLength.model_validate(v)
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(x) for x in err["loc"])
                raise ValueError(f"{{private = {{epsilon, user_share, max, seed, counts}}}}: {where}: {err['msg']}") \
                    from None
        return v

    @model_validator(mode="after")
    def _rules(self) -> "PCKVSpec":
        if (self.domain is None) == (self.keys is None):
            raise ValueError("give exactly one of domain (or its older name keys): a count, a list of labels or \"data\"")
        return self

    @property
    def domain_value(self) -> Any:
        """``domain`` or ``keys``, whichever was given."""
        return self.domain if self.domain is not None else self.keys

    @property
    def domain_field(self) -> str:
        """The spec key that gave the domain (for error messages)."""
        return "domain" if self.domain is not None else "keys"

    def labels(self) -> list[str] | None:
        """Key labels of a list domain (None for a count or ``"data"``)."""
        dv = self.domain_value
        return [str(x) for x in dv] if isinstance(dv, list) else None


def _check(spec: PCKVSpec, raw: Mapping[str, Any]) -> None:
    field, dv = spec.domain_field, spec.domain_value
    if isinstance(dv, bool) or (isinstance(dv, int) and not 2 <= dv <= 10_000_000):
        raise SpecError(field, "a count of keys must be an integer in 2..10,000,000", dv)
    if isinstance(dv, list):
        labels = check_labels(field, dv)
        if len(labels) < 2 or len(set(labels)) != len(labels):
            raise SpecError(field, "a list of keys must hold at least 2 distinct labels", dv)
    if dv == "data" and spec.data is None:
        raise SpecError(field, '"data" needs the data field (a key-value CSV)', dv)
    L = spec.padding_length
    if isinstance(L, PrivatePaddingLength):
        _check_private(spec, L.private)
    elif L != "auto" and (isinstance(L, bool) or not 1 <= L <= 100_000):
        raise SpecError("padding_length", "must be an integer in 1..100000 or \"auto\"", L)
    if L == "auto" and spec.data is None and spec.set_size_distribution is None:
        raise SpecError("padding_length", '"auto" needs set_size_distribution or data', "auto")
    if spec.weights.frequency + spec.weights.mean <= 0:
        raise SpecError("weights", "frequency + mean must be > 0", raw.get("weights"))
    if spec.objective_keys != "all" and spec.objective_keys < 1:
        raise SpecError("objective_keys", "must be \"all\" or an integer >= 1", spec.objective_keys)
    for name, lo in (("prior_frequencies", 0.0), ("prior_means", -1.0)):
        vals = getattr(spec, name)
        if vals is not None and not all(lo <= v <= 1.0 for v in vals):
            raise SpecError(name, f"entries must be in [{lo:g}, 1]", vals)
    if spec.set_size_distribution is not None:
        try:
            sizes = [int(k) for k in spec.set_size_distribution]
        except ValueError:
            raise SpecError("set_size_distribution", "keys must be integer set sizes",
                            list(spec.set_size_distribution)) from None
        weights = list(spec.set_size_distribution.values())
        if not sizes or min(sizes) < 0 or min(weights) < 0 or sum(weights) <= 0:
            raise SpecError("set_size_distribution", "sizes and weights must be >= 0 and the weights must not all be 0",
                            spec.set_size_distribution)


def _check_private(spec: PCKVSpec, ph: PrivatePhase) -> None:
    if ph.counts is None and spec.data is None:
        raise SpecError("padding_length.private", "needs counts (a real phase 1) or data (to simulate phase 1)", None)
    if ph.counts is not None:
        if len(ph.counts) != ph.max + 1 or min(ph.counts) < 0 or sum(ph.counts) < 1:
            raise SpecError("padding_length.private.counts", f"must be max + 1 = {ph.max + 1} counts >= 0 with a "
                            "positive sum", ph.counts)
        if spec.users is None:
            raise SpecError("users", "padding_length.private.counts needs the total number of users n", None)
        if sum(ph.counts) >= spec.users:
            raise SpecError("padding_length.private.counts", f"phase-1 users must be fewer than users = {spec.users}",
                            sum(ph.counts))


def private_phase(spec: PCKVSpec) -> PrivatePhase | None:
    """The spec's phase-1 settings (None unless ``padding_length = {private = ...}``)."""
    L = spec.padding_length
    return L.private if isinstance(L, PrivatePaddingLength) else None


def required_private_phase(spec: PCKVSpec) -> PrivatePhase:
    """:func:`private_phase` where the caller runs the private route only.

    Raises
    ------
    SpecError
        ``padding_length`` is not ``{private = ...}``.
    """
    phase = private_phase(spec)
    if phase is None:
        raise SpecError("padding_length", "the private route needs padding_length = {private = {...}}",
                        spec.padding_length)
    return phase


def parse_spec(raw: Mapping[str, Any]) -> PCKVSpec:
    """Validate a raw PCKV spec.

    Raises
    ------
    SpecError
        Naming the field, the rule and the value.
    """
    spec = spec_from_pydantic(PCKVSpec, raw)
    _check(spec, raw)
    return spec
