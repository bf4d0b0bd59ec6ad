"""The part of the RR and GLH runtimes that does not depend on hashing (numpy + stdlib only).

Plan reading (:meth:`KaryRRBase.from_plan`), the privacy map, and the three estimators
shared by :class:`ldpplan.mechanisms.pie.RandomizedResponse` and
:class:`ldpplan.mechanisms.pie.GeneralizedLocalHashing`: both are a k-ary RR whose
"support" counts ``c(x)`` satisfy ``E[c(x)/n] = nu + (mu - nu) p(x)`` (eq. 19-20).
"""
from __future__ import annotations

import dataclasses
from decimal import Decimal
from fractions import Fraction
from typing import Any, ClassVar, Mapping

import numpy as np

from .._estimators import bonferroni_z, significance_threshold
from .._intervals import FrequencyVariance
from .._fit import MAX_ITER, TOL, check_options
from .._mle import rr_mle
from .._api import domain_labels
from ._channel import HASH_PRIME_LARGE, hash_prime, keep_probability, pie_alpha_bits, realized_epsilon
from .._api import check_items, report_columns
from .._envelope import MAX_COUNT_DOMAIN, PlanFields, read_domain, read_envelope
from ._exact import exact_pie_guarantee
from .._plan import PlanError, check_claim, integer, number, require, round_up
from .._plan_object import typed_params
from ._promises import pie_promises
from .._protocol import Aggregate, Estimate, Frozen, check_method, set_fields
from .._sampling import on_grid

#: ``params.hash`` of GLH plans but the prime (the planner writes it; ``verify`` checks it verbatim).
_HASH_TEXT = {"family": "carter-wegman", "formula": "((a*x + b) mod P) mod g", "seed_per_user": "a in [1, P-1], b in [0, P-1]"}

__all__ = ["KaryRRBase", "NOTION"]

#: ``guarantee.notion`` of PIE plans: epsilon-LDP and (U, alpha)-PIE privacy.
NOTION = "LDP+PIE"
#: Magnitude of the largest terms of the PIE maps (logs of |X|, g, n up to 2^31, times releases):
#: the float maps cancel (``log mu + log(k-1) - log1p(-mu)``, ``1 - (alpha + 1)/prior_bits``), so
#: their error is a few ulps of this, not of the result; claims nearer than that are decided exactly.
_SCALE = 64.0
#: The claims of a PIE plan besides notion and epsilon.
GUARANTEE_FIELDS = ("alpha_bits", "alpha_nats", "bayes_error_lower_bound", "theta", "alpha_mechanism_bits",
                    "alpha_ldp_bits", "alpha_binding", "prior", "max_prior", "n", "releases", "sources")


def _fill_zero(emp: np.ndarray, n: int, var0: float, alpha: float) -> np.ndarray:
    threshold = bonferroni_z(alpha, emp.size) * float(np.sqrt(var0 / n))
    return np.where(emp > threshold, emp, 0.0)


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class KaryRRBase(Frozen):
    """Shared state and methods: ``mu``, ``nu_other``, ``epsilon``, ``epsilon_realized`` and the estimators.

    Subclasses set ``mechanism``, ``symbols`` (``|X|`` or ``g``), ``nu`` (support probability
    of an input the user does not hold), ``perturb``, ``aggregate`` and ``_support``.
    """

    mechanism: ClassVar[str] = ""
    methods: ClassVar[tuple[str, ...]] = ("empirical", "threshold", "em")
    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields((), GUARANTEE_FIELDS, max_domain=MAX_COUNT_DOMAIN)

    domain_size: int
    labels: list[str] | None
    g: int | None
    mu: float
    nu_other: float
    epsilon: float
    epsilon_realized: float
    n: int | None
    releases: int
    max_prior: float | None

    # ---------------------------------------------------------------- construction
    def _init_common(self, epsilon, domain, g, mu, n, releases, max_prior) -> None:
        k, labels = domain_labels(domain)
        high = self.PLAN_FIELDS.max_domain
        if not (2 <= k <= high):
            raise ValueError(f"domain: needs 2 .. {high} items (got {k})")
        symbols = k if g is None else g
        expected = keep_probability(epsilon, symbols)
        if mu is not None:
            mu = float(mu)
            if not (on_grid(mu) and mu * symbols > 1.0 and mu < 1.0):
                raise ValueError(f"mu: must be a multiple of 2^-48 in (1/{symbols}, 1) (got {mu!r})")
            if mu > expected:  # its channel's epsilon would exceed epsilon
                raise ValueError(f"mu: {mu!r} gives an epsilon above {float(epsilon)!r} for {symbols} symbols "
                                 f"(largest grid value: keep_probability(epsilon, {symbols}) = {expected!r})")
            expected = mu
        if not (expected * symbols > 1.0):
            raise ValueError(f"epsilon: {float(epsilon)!r} is too small for the 2^-48 probability grid with "
                             f"{symbols} symbols (the keep probability rounds to <= 1/{symbols})")
        if n is not None and (isinstance(n, bool) or int(n) != n or int(n) < 2):
            raise ValueError(f"n: must be an integer >= 2 (got {n!r})")
        if isinstance(releases, bool) or int(releases) != releases or int(releases) < 1:
            raise ValueError(f"releases: must be an integer >= 1 (got {releases!r})")
        if max_prior is not None and not (0.0 < float(max_prior) <= 1.0):
            raise ValueError(f"max_prior: must be in (0, 1] (got {max_prior!r})")
        set_fields(self, domain_size=k, labels=labels, g=g, mu=expected, nu_other=(1.0 - expected) / (symbols - 1),
                   epsilon=float(epsilon), epsilon_realized=realized_epsilon(expected, symbols),
                   n=None if n is None else int(n), releases=int(releases),
                   max_prior=None if max_prior is None else float(max_prior))

    def __repr__(self) -> str:
        g = f", g={self.g}" if self.g is not None else ""
        return (f"{type(self).__name__}(epsilon={self.epsilon!r}, domain_size={self.domain_size}{g}, mu={self.mu!r}, "
                f"n={self.n}, releases={self.releases})")

    @property
    def report_bytes(self) -> int:
        """Bytes of one report (int64 columns: ``y``; GLH also ``a``, ``b``), independent of ``|X|``."""
        return 8 if self.g is None else 24

    @property
    def domain(self):
        """Labels of ``X`` (or ``range(|X|)`` when there are none)."""
        return self.labels if self.labels is not None else range(self.domain_size)

    # ---------------------------------------------------------------- each subclass defines these
    @property
    def nu(self) -> float:
        """Support probability of an input the user does not hold (eq. 19-20)."""
        raise NotImplementedError

    def aggregate(self, reports) -> Aggregate:
        """The reports' support counts (each subclass its own columns)."""
        raise NotImplementedError

    def _support(self, agg: Aggregate) -> np.ndarray:
        raise NotImplementedError

    def _item_support(self, reports, items: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @classmethod
    def from_plan(cls, plan: Any):
        """Build the runtime from a verified plan 2.0 (dict or path), re-checking its guarantee.

        Raises
        ------
        PlanError
            Unreadable plan, unverified, another mechanism, a missing, non-finite or
            inconsistent number (``domain.size`` vs ``params.domain_size`` vs labels; ``g``;
            ``params.mu`` not the grid rounding of ``params.epsilon``), or a ``guarantee``
            claim stronger than :meth:`privacy_map` gives.
        """
        data = read_envelope(plan, cls.PLAN_FIELDS, verified=True)
        high = cls.PLAN_FIELDS.max_domain  # O(1) memory in |X| until aggregate/estimate (memory-budgeted)
        size, labels = read_domain(data, low=2, high=high)
        params = typed_params(data, cls)  # RandomizedResponseParams / GeneralizedLocalHashingParams, read once
        k = integer(params.domain_size, "params.domain_size", low=2, high=high)
        if k != size:
            raise PlanError(f"params.domain_size: must equal domain.size = {size} (got {k})")
        epsilon = number(params.epsilon, "params.epsilon", low=0.0, low_open=True)
        mu = number(params.mu, "params.mu", low=0.0, high=1.0, low_open=True, high_open=True)
        if not on_grid(mu):
            raise PlanError(f"params.mu: must be a multiple of 2^-48 (got {mu!r})")
        g = None
        if cls.mechanism == "glh":
            g = integer(params.g, "params.g", low=2, high=HASH_PRIME_LARGE)
            prime = hash_prime(k, g)
            recorded = params.hash
            if not isinstance(recorded, Mapping) or type(recorded.get("prime")) is not int \
                    or recorded.get("prime") != prime:
                got = recorded.get("prime") if isinstance(recorded, Mapping) else recorded
                raise PlanError(f"params.hash.prime: the runtime hashes |X| = {k} items into g = {g} values with the "
                                f"prime {prime} (got {str(got)[:40]})")
            if dict(recorded) != {**_HASH_TEXT, "prime": prime}:  # what external clients implement: verbatim
                raise PlanError(f"params.hash: must describe the runtime's hash family {_HASH_TEXT} (got "
                                f"{str(dict(recorded))[:120]})")
        gu = require(data, "guarantee")
        if gu.get("notion") != NOTION:
            raise PlanError(f"guarantee.notion: must be {NOTION!r} (got {gu.get('notion')!r:.40})")
        n = integer(require(data, "guarantee.n"), "guarantee.n", low=2)
        t = integer(require(data, "guarantee.releases"), "guarantee.releases", low=1)
        max_prior = number(require(data, "guarantee.max_prior"), "guarantee.max_prior", low=0.0, high=1.0, low_open=True)
        if max_prior < 1.0 / n:  # 1/n rounded to nearest, as the planner writes it; the exact checks use >= 1/n
            raise PlanError(f"guarantee.max_prior: must be >= 1/n = {1.0 / n!r} (a prior cannot be flatter than "
                            f"uniform; got {max_prior!r})")
        target = pie_promises(data)
        args = {"domain": labels if labels is not None else k, "epsilon": epsilon} | ({} if g is None else {"g": g})
        expected = keep_probability(epsilon, k if g is None else g)
        if mu != expected:
            raise PlanError(f"params.mu: must be the 2^-48 grid rounding (down) of the keep probability of "
                            f"params.epsilon for {k if g is None else g} symbols, {expected!r} (got {mu!r})")
        try:
            mech = cls(**args, mu=mu, n=n, releases=t, max_prior=max_prior)
        except ValueError as exc:
            raise PlanError(f"params: {exc}") from None
        mech._check_claims(data, epsilon, target)
        return mech

    def _check_claims(self, data: Mapping[str, Any], epsilon: float, target: Mapping[str, Any]) -> None:
        """Every claim against the numbers (float map, exact near the bound) and the spec's target."""
        pm, gu = self.privacy_map(), data["guarantee"]
        symbols = self.domain_size if self.g is None else self.g
        cache: dict[str, Any] = {}

        def exact(key: str):
            if not cache:
                assert self.n is not None and self.max_prior is not None  # from_plan sets both
                prior = max(Fraction(self.max_prior), Fraction(1, self.n))  # never flatter than uniform
                cache.update(exact_pie_guarantee(self.mu, symbols, self.domain_size, self.n, self.releases, prior))
            return cache[key]

        claims = [("epsilon", "guarantee.epsilon", gu.get("epsilon")), ("epsilon", "params.epsilon", epsilon),
                  ("alpha_bits", "guarantee.alpha_bits", gu.get("alpha_bits")),
                  ("alpha_nats", "guarantee.alpha_nats", gu.get("alpha_nats"))]
        cap = target["epsilon"] if target["epsilon"] is not None else target["epsilon_max"]
        field = "spec.target.epsilon" if target["epsilon"] is not None else "spec.epsilon_max"
        for where, value in (("params.epsilon", epsilon), ("guarantee.epsilon", gu.get("epsilon"))):
            if target["epsilon"] is not None or where == "params.epsilon":
                if not number(value, where, low=0.0) <= cap:
                    raise PlanError(f"{where}: {value!r} exceeds the embedded {field} = {cap!r}")
        if target["alpha_bits"] is not None:
            claims.append(("alpha_bits", "spec.target.alpha_bits", target["alpha_bits"]))
        for key, where, claim in claims:
            rule = "the spec's target is below what the plan's numbers give," if where.startswith("spec") else \
                "the plan's numbers give"
            check_claim(pm[key], claim, where, rule, exact=lambda key=key: exact(key), scale=_SCALE)
        bounds = [("guarantee.bayes_error_lower_bound", gu.get("bayes_error_lower_bound"))]
        if target["bayes_error"] is not None:
            bounds.append(("spec.target.bayes_error", target["bayes_error"]))
        safe = -round_up(-pm["bayes_error_lower_bound"], scale=_SCALE)  # rounded toward the safe side (down)
        for where, claim in bounds:  # a lower bound: the claim must not exceed what the numbers give
            c = number(claim, where, low=0.0, high=1.0)
            if c == 0.0 or c <= safe:
                continue
            value = exact("bayes")
            if value is None or Decimal(c) > value:
                got = "no bound" if value is None else f"{value:.20g} (exactly)"
                raise PlanError(f"{where}: claims a Bayes-error bound {c!r} but the plan's numbers give "
                                f"{got} (Cor. 3.9); the runtime refuses a plan that "
                                "claims more privacy than its numbers give")

    # ---------------------------------------------------------------- privacy
    @property
    def theta(self) -> float:
        """MI loss parameter ``theta = mu - nu = (k mu - 1)/(k - 1)`` (Thm. 4.2/4.4), dimensionless."""
        return float(self.mu - self.nu_other)

    def privacy_map(self) -> dict[str, Any]:
        """The guarantee of this object's numbers, recomputed with numpy.

        Returns
        -------
        dict
            ``notion`` (``"LDP+PIE"``; ``"LDP"`` without ``n``), ``epsilon`` (nats, ``log(mu/nu)``
            of the grid channel), ``theta``; with ``n``: ``alpha_bits``, ``alpha_nats``,
            ``bayes_error_lower_bound`` (Cor. 3.9, raw: may be <= 0), ``n``, ``releases``,
            ``max_prior``.

        References
        ----------
        Murakami & Takahashi (TDP 2021): Thm. 4.2-4.5, Prop. 4.1, Cor. 3.9 (eq. 11-12).
        """
        out: dict[str, Any] = {"notion": "LDP", "epsilon": self.epsilon_realized, "theta": self.theta}
        if self.n is None:
            return out
        alpha = pie_alpha_bits(self.epsilon_realized, self.theta, self.n, self.domain_size, self.releases)
        max_prior = self.max_prior if self.max_prior is not None else 1.0 / self.n
        prior_bits = float(-np.log2(max_prior))
        bayes = 1.0 - (alpha["alpha_bits"] + 1.0) / prior_bits if prior_bits > 0 else -np.inf
        out.update({"notion": NOTION, "alpha_bits": alpha["alpha_bits"],
                    "alpha_nats": float(alpha["alpha_bits"] * np.log(2.0)),
                    "bayes_error_lower_bound": float(bayes), "n": self.n, "releases": self.releases,
                    "max_prior": max_prior})
        return out

    # ---------------------------------------------------------------- estimation
    def variance_per_user(self, p=0.0):
        """``n Var(p_hat(x))`` of the empirical estimate at true frequency ``p`` (frequency^2).

        ``(p mu (1-mu) + (1-p) nu (1-nu))/(mu - nu)^2`` with the support probability ``nu``:
        eq. 22 (RR) / eq. 23 (GLH, ``kappa = 1/g``) times ``n``, for fixed users' data.
        """
        intercept, slope = self._variance_line()
        return intercept + slope * np.asarray(p, dtype=np.float64)

    def _variance_line(self) -> tuple[float, float]:
        """``n Var = intercept + slope p`` (eq. 22/23 are affine in ``p(x)``)."""
        mu, nu = self.mu, self.nu
        d2 = (mu - nu) ** 2
        return nu * (1 - nu) / d2, (mu * (1 - mu) - nu * (1 - nu)) / d2

    def _columns(self, reports, names: tuple[str, ...]) -> dict[str, np.ndarray]:
        return report_columns(reports, self.mechanism, names)

    def _as_aggregate(self, source) -> Aggregate:
        if isinstance(source, Aggregate):
            if source.mechanism != self.mechanism:
                raise ValueError(f"aggregate.mechanism: must be {self.mechanism!r} (got {source.mechanism!r})")
            return source
        return self.aggregate(source)

    def item_support(self, source, items) -> np.ndarray:
        """Support counts ``c(x)`` of the chosen ``items`` only (int64, shape ``(m,)``), in O(n m) time and
        O(n + m) memory whatever ``|X|``: reports supporting each item (RR: ``y = x``; GLH: ``h_{a,b}(x) = y``).

        Parameters
        ----------
        source : Reports or Aggregate
            Reports (a batch), or a dense aggregate (its counts at ``items``).
        items : array_like of int, shape (m,)
            Item indices in ``[0, |X|)``.

        Returns
        -------
        ndarray of int64, shape (m,)

        References
        ----------
        Murakami & Takahashi (TDP 2021): eq. 19 (``c_RR``), eq. 20 (``c_GLH``).
        """
        x = check_items(items, self.domain_size, what="items")
        if isinstance(source, Aggregate):
            return self._support(self._as_aggregate(source))[x].astype(np.int64)
        return self._item_support(source, x)

    def estimate_items(self, sources, items, method: str | None = None, *, alpha: float = 0.05) -> Estimate:
        """The estimate of :meth:`estimate` at the chosen items only, from reports read a batch at a time.

        Equal, item by item, to ``estimate(...).frequency[items]`` (and its ``std_error``) for the
        methods ``"empirical"`` and ``"threshold"`` (the Bonferroni threshold still counts the
        ``|X|`` tests, ``threshold_fill="zero"``); ``"em"`` couples every item and is refused.
        Memory is O(batch + m), independent of ``|X|``: the way to read a domain of ``10^8``
        (k-RR) or ``2^40`` (GLH) items whose full counts would not fit.

        Parameters
        ----------
        sources : iterable of Reports or Aggregate
            Batches of reports of disjoint users (and/or dense aggregates).
        items : array_like of int, shape (m,)
        method : {"empirical", "threshold"}, default "empirical"
        alpha : float
            Significance level of ``"threshold"``.

        Returns
        -------
        Estimate
            ``frequency`` and ``std_error`` of shape ``(m,)`` (eq. 19/20, eq. 22/23).

        Raises
        ------
        ValueError
            ``"em"`` or an unknown method, items outside the domain, malformed reports, no reports.

        References
        ----------
        Murakami & Takahashi (TDP 2021): eq. 19-20 (estimates), eq. 22-23 (variances), Sec. 5.3 (threshold).
        """
        method = check_method(method, self.methods)
        if method == "em":
            raise ValueError("method: 'em' estimates every item jointly; --items supports 'empirical' and 'threshold'")
        x = check_items(items, self.domain_size, what="items")
        support, n = np.zeros(x.size, dtype=np.int64), 0
        for source in sources:
            support += self.item_support(source, x)
            n += int(source.n) if isinstance(source, Aggregate) else int(self._columns(source, ("y",))["y"].size)
        if n < 1:
            raise ValueError("aggregate.n: needs at least one report to estimate")
        emp = (support / n - self.nu) / (self.mu - self.nu)
        intercept, slope = self._variance_line()
        std = np.sqrt((intercept + slope * np.clip(emp, 0.0, 1.0)) / n)
        var = FrequencyVariance(emp, intercept, slope, 0.0, n, source="PIE eq. (22)/(23)")
        if method == "threshold":
            threshold = bonferroni_z(alpha, self.domain_size) * float(np.sqrt(intercept / n))
            emp = np.where(emp > threshold, emp, 0.0)
        return Estimate(emp, None, method, n, std_error=std, variance=var)

    def estimate(self, reports_or_aggregate, method: str | None = None, *, alpha: float = 0.05,
                 threshold_fill: str = "zero", tol: float = TOL, max_iter: int = MAX_ITER) -> Estimate:
        """Estimate the input distribution (frequencies, shape ``(|X|,)``).

        Parameters
        ----------
        reports_or_aggregate : Reports or Aggregate
        method : {"empirical", "threshold", "em"}, default "empirical"
            ``"empirical"``: eq. 19/20 (unbiased, may be negative). ``"threshold"``: the
            empirical estimate with the Bonferroni significance threshold at level ``alpha``
            (one-sided z-test of ``p(x) = 0``). ``"em"``: the fixed point of EM reconstruction
            (ULDP paper Sec. 2.5) computed exactly, without iterations: the maximiser on the
            simplex of ``sum_x c(x) log(nu + (mu - nu) p(x))`` by water-filling
            (:func:`ldpplan.mechanisms._mle.rr_mle`, ``O(|X| log |X|)``, ``iterations = 0``).
            For the RR it is the maximum-likelihood estimate; for the GLH it is the composite
            likelihood of the support counts (its interior maximiser is the empirical
            estimate; it works on merged aggregates; the exact per-report MLE is
            ``GeneralizedLocalHashing.estimate_em_reports``).
        alpha : float, default 0.05
            Significance level of ``"threshold"`` (Sec. 5.3 uses 0.05).
        threshold_fill : {"zero", "uniform"}, default "zero"
            ``"zero"`` follows the PIE paper (Sec. 5.3: estimates below the threshold are set
            to zero, the others kept as they are). ``"uniform"`` is the ULDP paper's
            convention (Murakami & Kawamoto 2019, Sec. 6.1: the mass left by the significant
            estimates is spread uniformly over the others, so the result sums to one).
        tol, max_iter : float, int
            The runtime's estimator options (``docs/ARCHITECTURE.md``), checked and unused here:
            ``"em"`` is exact (no iterations; ``optimality_gap`` 0).

        Returns
        -------
        Estimate
            ``std_error``: the standard error of the empirical estimate (eq. 22/23) at the
            estimated frequency clipped to [0, 1] (methods "empirical" and "threshold";
            None for "em", which reports ``log_likelihood`` and ``iterations``).

        Raises
        ------
        ValueError
            Unsupported method or fill, malformed reports or aggregate, no users.
        """
        method = check_method(method, self.methods)
        check_options(tol, max_iter)
        if threshold_fill not in ("zero", "uniform"):
            raise ValueError(f"threshold_fill: must be one of ['zero', 'uniform'] (got {threshold_fill!r})")
        agg = self._as_aggregate(reports_or_aggregate)
        if agg.n < 1:
            raise ValueError("aggregate.n: needs at least one report to estimate")
        support = self._support(agg)
        n = agg.n
        emp = support / n  # in place from here on: domains of 10^7 items
        emp -= self.nu
        emp /= self.mu - self.nu
        intercept, slope = self._variance_line()
        std = np.clip(emp, 0.0, 1.0)
        std *= slope / n
        std += intercept / n
        np.sqrt(std, out=std)
        var = FrequencyVariance(emp, intercept, slope, 0.0, n, source="PIE eq. (22)/(23)")
        if method == "empirical":
            return Estimate(emp, None, method, n, std_error=std, variance=var)
        if method == "threshold":
            freq = (_fill_zero(emp, n, intercept, alpha) if threshold_fill == "zero"
                    else significance_threshold(emp, n, intercept, alpha=alpha))
            return Estimate(freq, None, method, n, std_error=std, variance=var)
        if not support.any():  # no GLH report supports any item: the likelihood is flat, take the uniform
            return Estimate(np.full(self.domain_size, 1.0 / self.domain_size), None, method, n,
                            log_likelihood=0.0, iterations=0, variance=var)
        res = rr_mle(support, self.mu, self.nu)
        return Estimate(res.frequency, None, method, n, log_likelihood=res.log_likelihood, iterations=res.iterations,
                        variance=var)
