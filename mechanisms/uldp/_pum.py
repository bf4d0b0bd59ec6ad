"""The personalized ULDP mechanism with kappa semantic tags (PUM; ULDP Sec. 5), numpy only.

``Q^(i) = Q_cmn o f_pre^(i)``: a per-user pre-processor (kept on the client) maps the user's
own sensitive items to one of kappa bots (one per semantic tag), then a common uRR or uRAP
over ``Z = X + bots`` (``Z_S = X_S + bots``) perturbs. Reports and aggregates are those of
the common mechanism over Z (uRR: column ``y``; uRAP: column ``bits``), tagged ``"pum"``;
the estimate is eq. (21) over X.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from .._envelope import PlanFields
from .._plan import PlanError, integer, number, require
from ._params import PersonalizedULDPParams
from .._protocol import CountRule, Aggregate, Estimate, Frozen, Reports, readonly, set_fields
from ._base import (GUARANTEE_FIELDS, check_guarantee, check_items, domain_labels, grid_probability, read_sensitive,
                    read_uldp_envelope)
from ._urap import UtilityOptimizedRAPPOR
from ._urr import UtilityOptimizedRR

__all__ = ["PersonalizedULDP", "PreProcessor"]


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class PreProcessor(Frozen):
    """One user's private pre-processor ``f_pre`` (ULDP eq. 19), kept on the client.

    Parameters
    ----------
    mapping : mapping of int -> int
        The user's own sensitive items ``X_{S,k}`` -> tag index ``k`` (0-based).
    """

    mapping: dict[int, int]

    def __init__(self, mapping: Mapping[int, int]) -> None:
        set_fields(self, mapping={int(x): int(t) for x, t in dict(mapping).items()})

    def __repr__(self) -> str:
        return f"PreProcessor({len(self.mapping)} private items)"

    def tag_of(self, item: int) -> int:
        """Tag index of ``item`` for this user, or -1 if it is not one of her sensitive items."""
        return self.mapping.get(int(item), -1)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class PersonalizedULDP(Frozen):
    """PUM with kappa semantic tags (ULDP Sec. 5).

    Parameters (keyword-only)
    ----------
    domain : int or sequence of str
        ``|X|`` or the labels of X (the common mechanism covers ``|X| + kappa`` symbols).
    common : UtilityOptimizedRR or UtilityOptimizedRAPPOR
        The common mechanism over Z (``|X| + kappa`` symbols, bots last, every bot sensitive).
    tags : sequence of str
        The kappa semantic tags, in bot order.
    background : mapping of str -> array (|X|,), optional
        Background distributions ``pi_hat_k`` per tag for eq. (21); tags without one use the
        proportional fallback of Sec. 5.3.

    Raises
    ------
    ValueError
        No tags, a bot that is not sensitive, a background that is not a distribution over X.

    References
    ----------
    Murakami & Kawamoto 2019, Sec. 5: eq. (19) (pre-processor), Props. 9-10, eq. (21).
    """

    mechanism: ClassVar[str] = "pum"
    #: the common mechanism's counts over Z: uRR ``y`` (one item per report), uRAP ``bits``
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=(("y",),), at_most_n=(("bits",),))
    Params: ClassVar[type[PersonalizedULDPParams]] = PersonalizedULDPParams
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields(("pum",), GUARANTEE_FIELDS["pum"])

    common: UtilityOptimizedRR | UtilityOptimizedRAPPOR
    tags: list[str]
    domain_size: int
    labels: list[str] | None
    #: the common mechanism's estimators
    methods: tuple[str, ...]
    sensitive: np.ndarray
    background: dict[str, np.ndarray]

    def __init__(self, *, domain: int | Sequence[str], common: Any, tags: Sequence[str],
                 background: Mapping[str, Any] | None = None) -> None:
        size, labels = domain_labels(domain)
        tags = [str(t) for t in tags]
        if not tags or len(set(tags)) != len(tags):
            raise ValueError(f"tags: PUM needs at least one distinct semantic tag (got {tags})")
        if common.domain_size != size + len(tags):
            raise ValueError(f"common: must cover Z = X + bots, |X| + kappa = {size + len(tags)} symbols "
                             f"(got {common.domain_size})")
        if not bool(np.all(common.sensitive_mask[size:])):
            raise ValueError("common: must cover Z = X + bots with every bot sensitive (Prop. 9)")
        set_fields(self, common=common, tags=tags, domain_size=size, labels=None if labels is None else list(labels),
                   methods=common.methods, sensitive=readonly(common.sensitive[common.sensitive < size]))
        set_fields(self, background=self._background(background or {}))

    def __repr__(self) -> str:
        return f"PersonalizedULDP(|X|={self.domain_size}, tags={self.tags}, common={self.common!r})"

    def _background(self, background: Mapping[str, Any]) -> dict[str, np.ndarray]:
        out = {}
        for tag, dist in background.items():
            if dist is None:
                continue
            if tag not in self.tags:
                raise ValueError(f"background.{tag}: must be one of the tags {self.tags}")
            d = np.asarray(dist, dtype=np.float64)
            if d.shape != (self.domain_size,) or not np.all(np.isfinite(d)) or np.any(d < 0) or not math.isclose(
                    float(d.sum()), 1.0, abs_tol=1e-9):
                raise ValueError(f"background.{tag}: must be a distribution over the {self.domain_size} items")
            out[tag] = readonly(d)
        return out

    @classmethod
    def from_plan(cls, plan: Any) -> "PersonalizedULDP":
        """Build from a verified ``pum`` plan (format 2.0), refusing claims its numbers do not give.

        Raises
        ------
        PlanError
            Unverified plan, bad numbers, ``params.intermediate_sensitive`` other than
            ``X_S + bots``, or a ``guarantee`` stronger than ``privacy_map()``.
        """
        data, size, labels, spec_epsilon = read_uldp_envelope(plan, cls.PLAN_FIELDS)
        tags = require(data, "params.tags")
        if not isinstance(tags, list) or not tags or not all(isinstance(t, str) for t in tags):
            raise PlanError(f"params.tags: must be a non-empty list of strings (got {tags!r:.80})")
        z_size = size + len(tags)
        integer(require(data, "params.intermediate_size"), "params.intermediate_size", low=z_size, high=z_size)
        sens = read_sensitive(require(data, "params.sensitive"), "params.sensitive", size)
        z_sens = read_sensitive(require(data, "params.intermediate_sensitive"), "params.intermediate_sensitive", z_size)
        if z_sens.tolist() != sens.tolist() + list(range(size, z_size)):
            raise PlanError("params.intermediate_sensitive: must be params.sensitive followed by every bot "
                            f"{list(range(size, z_size))} (Prop. 9: Z_S = X_S + bots)")
        kind = require(data, "params.common")
        names = {"urr": ("c1", "c2", "c3"), "urap": ("theta", "d1", "d2")}
        if kind not in names:
            raise PlanError(f"params.common: must be 'urr' or 'urap' (got {kind!r})")
        p = [grid_probability(require(data, f"params.{n}"), f"params.{n}") for n in names[kind]]
        background = data["params"].get("background") or {}
        if not isinstance(background, dict):
            raise PlanError("params.background: must be an object tag -> distribution")
        for tag, dist in background.items():
            if not isinstance(dist, list):
                raise PlanError(f"params.background.{tag}: must be a list of {size} probabilities")
            for j, v in enumerate(dist):
                number(v, f"params.background.{tag}[{j}]", low=0.0, high=1.0)
        try:
            common = (UtilityOptimizedRR if kind == "urr" else UtilityOptimizedRAPPOR)(
                domain=z_size, sensitive=z_sens, **dict(zip(names[kind], p)))
            mech = cls(domain=labels if labels is not None else size, common=common, tags=tags, background=background)
        except ValueError as exc:
            raise PlanError(f"params.{exc}") from None
        check_guarantee(mech.privacy_map(), data, spec_epsilon)
        return mech

    def privacy_map(self) -> dict[str, Any]:
        """The PUM's guarantee recomputed from the common mechanism's numbers.

        ``{"notion": "ULDP", "epsilon", "sensitive" (X_S), "intermediate_sensitive" (Z_S),
        "protected_outputs", "invertible_outputs" (the common mechanism's Y_P, Y_I over Z),
        "user_sensitive", "user_indistinguishability_epsilon"}``: (X_S + X_S^(i), Y_P,
        epsilon)-ULDP for every user i (Prop. 9), and ``Q^(i)(y|x) <= e^epsilon Q^(j)(y|x)`` for
        every y in Y_P (Prop. 10), with epsilon the common mechanism's ULDP epsilon (nats).
        """
        inner = self.common.privacy_map()
        return {"notion": "ULDP", "epsilon": inner["epsilon"], "sensitive": self.sensitive.tolist(),
                "intermediate_sensitive": inner["sensitive"], "protected_outputs": inner["protected_outputs"],
                "invertible_outputs": inner["invertible_outputs"],
                "user_sensitive": "each user's own items mapped to a semantic tag (X_S^(i); Prop. 9)",
                "user_indistinguishability_epsilon": inner["epsilon"]}

    def channel_matrix(self) -> np.ndarray:
        """Not defined for the PUM as a whole: raises ValueError.

        A user's own channel is ``Q^(i)[x, y] = Q_cmn[f_pre^(i)(x), y]`` (eq. 19); it depends on
        her private pre-processor, so only the common part is public:
        ``self.common.channel_matrix()`` is ``Q_cmn[z, y]`` over ``Z = X + bots``.

        Raises
        ------
        ValueError
            Always (one line saying where the common channel is).
        """
        raise ValueError("channel_matrix: a PUM user's channel depends on her private pre-processor (eq. 19); "
                         "the common part over Z is .common.channel_matrix()")

    # ------------------------------------------------------------------ client
    def preprocess(self, items: npt.ArrayLike, private_tags: Any = None) -> np.ndarray:
        """Apply the users' pre-processors (eq. 19) on the client.

        Parameters
        ----------
        items : int array, shape (n,)
        private_tags : int array, shape (n,), optional
            ``f_pre^(i)`` at the user's own item: tag index ``k`` if the item is one of her
            sensitive items with tag k, -1 otherwise. ``None``: nobody.

        Returns
        -------
        int array, shape (n,): intermediate symbols in Z (bots are ``|X| + k``).
        """
        x = check_items(items, self.domain_size)
        if private_tags is None:
            return x
        t = np.asarray(private_tags)
        if t.shape != x.shape or (t.size and t.dtype.kind not in "iu"):
            raise ValueError("tag: must be an int array with the shape of the items")
        if t.size and (t.min() < -1 or t.max() >= len(self.tags)):
            raise ValueError(f"tag: must be tag indices in [-1, {len(self.tags)}) (-1: not private)")
        return np.where(t >= 0, self.domain_size + t, x)

    @staticmethod
    def tags_from_preprocessors(items: npt.ArrayLike, preprocessors: Sequence[PreProcessor]) -> np.ndarray:
        """Evaluate per-user :class:`PreProcessor` objects on the users' items (client side)."""
        return np.array([f.tag_of(x) for f, x in zip(preprocessors, np.asarray(items).tolist())], dtype=np.int64)

    def perturb(self, data: Any, rng: np.random.Generator) -> Reports:
        """``Q_cmn(f_pre(x))``: only the obfuscated report leaves the client.

        Parameters
        ----------
        data : int array (n,) or mapping {"item": int array (n,), "tag": int array (n,)}
            Items, and optionally each user's private tag index (-1: none).
        rng : numpy.random.Generator

        Returns
        -------
        Reports
            The common mechanism's columns over Z, mechanism ``"pum"``.
        """
        if isinstance(data, Mapping):
            z = self.preprocess(data["item"], data.get("tag"))
        else:
            z = self.preprocess(data)
        return Reports(self.mechanism, self.common.perturb(z, rng).columns)

    # ------------------------------------------------------------------ server
    def _inner(self, source: Any) -> Any:  # the common mechanism's Aggregate or Reports, as source
        if isinstance(source, Aggregate):
            if source.mechanism != self.mechanism:
                raise ValueError(f"aggregate: must be a pum aggregate (got {source.mechanism!r})")
            return Aggregate(self.common.mechanism, source.n, source.counts)
        if not isinstance(source, Reports) or source.mechanism != self.mechanism:
            raise ValueError(f"reports: must be pum Reports (got {source!r:.80})")
        return Reports(self.common.mechanism, source.columns)

    def aggregate(self, reports: Reports) -> Aggregate:
        """The common mechanism's counts over Z (see its ``aggregate``), mechanism ``"pum"``."""
        inner = self.common.aggregate(self._inner(reports))
        return Aggregate(self.mechanism, inner.n, inner.counts)

    def combine(self, r_hat: npt.ArrayLike, background: Mapping[str, Any] | None = None) -> np.ndarray:
        """Eq. (21): ``p_hat(x) = r_hat(x) + sum_k r_hat(bot_k) pi_hat_k(x)``, shape (|X|,).

        Tags without a background distribution use ``pi_hat_k`` proportional to
        ``max(r_hat, 0)`` over X_N (Sec. 5.3; the clipping at 0 is ours, so the fallback is a
        distribution even for empirical estimates with negative entries).
        """
        r = np.asarray(r_hat, dtype=np.float64)
        k = self.domain_size
        p = r[:k].copy()
        for j, pi in enumerate(self._backgrounds(r, background)):
            p += r[k + j] * pi
        return p

    def _backgrounds(self, r: np.ndarray, background: Mapping[str, Any] | None) -> list[np.ndarray]:
        """``pi_hat_k`` of every tag (eq. (21)): the plan's or ``background``'s, else the fallback."""
        k = self.domain_size
        bg = dict(self.background)
        if background:
            bg.update(self._background(background))
        nonsens = ~self.common.sensitive_mask[:k]
        fallback = np.where(nonsens, np.maximum(r[:k], 0.0), 0.0)
        total = fallback.sum()
        fallback = fallback / total if total > 0 else np.where(nonsens, 1.0, 0.0) / max(1, int(nonsens.sum()))
        return [np.asarray(bg.get(tag, fallback), dtype=np.float64) for tag in self.tags]

    def background_matrix(self, r_hat: npt.ArrayLike, background: Mapping[str, Any] | None = None) -> np.ndarray:
        """Eq. (21) as ``p_hat = r_hat[:|X|] + B @ r_hat[|X|:]``: ``B`` has the tags' ``pi_hat_k`` as columns.

        Shape ``(|X|, kappa)``, non-negative (the backgrounds at ``r_hat``, as :meth:`combine`).
        """
        r = np.asarray(r_hat, dtype=np.float64)
        cols = self._backgrounds(r, background)
        return np.column_stack(cols) if cols else np.zeros((self.domain_size, 0))

    def estimate(self, reports_or_aggregate: Any, method: str | None = None, *,
                 background: Mapping[str, Any] | None = None, alpha: float = 0.05,
                 tol: float = 1e-15, max_iter: int = 10000) -> Estimate:
        """Estimate p over X: ``r_hat`` over Z with the common mechanism's ``method``, then eq. (21).

        Parameters
        ----------
        reports_or_aggregate : Reports or Aggregate (mechanism "pum")
        method : str, optional
            One of :attr:`methods` (the common mechanism's).
        background : mapping of str -> array (|X|,), optional
            Overrides the plan's background distributions for this estimate.
        alpha, tol, max_iter
            The common mechanism's estimator options (``tol``/``max_iter``: the runtime's one
            stopping rule, used by the uRAP's ``"em"``).

        Returns
        -------
        Estimate
            ``frequency`` shape (|X|,).
        """
        inner = self.common.estimate(self._inner(reports_or_aggregate), method, alpha=alpha, tol=tol,
                                     max_iter=max_iter)
        var = None
        if inner.variance is not None:  # intervals of r over Z, mapped by eq. (21) (Minkowski sum)
            var = inner.variance.with_mixing(self.background_matrix(inner.frequency, background))
        return Estimate(self.combine(inner.frequency, background), None, inner.method, inner.n,
                        log_likelihood=inner.log_likelihood, iterations=inner.iterations,
                        optimality_gap=inner.optimality_gap, variance=var)

    def estimate_intermediate(self, reports_or_aggregate: Any, method: str | None = None, **kwargs: Any) -> Estimate:
        """``r_hat`` over Z = X + bots (shape (|X| + kappa,))."""
        return self.common.estimate(self._inner(reports_or_aggregate), method, **kwargs)
