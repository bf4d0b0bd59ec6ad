"""A tiny test-only family: binary randomized response over two labels ("no", "yes").

It implements both contracts (runtime protocol and planner Family protocol) in the
smallest honest way, so the generic CLI/API glue can be tested before (and
independently of) the real families. Registered by :func:`registered` (monkeypatching
``ldpplan.planner.families``' registry line to this module's ``FAMILY``, this module as the room
``ldpplan.planner.toy`` and as the family's conformance module ``test_toy_conformance``, and
``ldpplan.mechanisms.RUNTIMES``). Its conformance declarations (``AGGREGATE_SPECS``,
``interval_specs``, ``exact_claims``, ``PREDICTED_VS_SIMULATED``; ``tests/_family_helpers.py``) are at
the end: the cross-family tables read them when it is the registered family
(``tests/test_registry.py``, the recipe test).

Mechanism: keep the true bit with probability ``p = e^epsilon / (1 + e^epsilon)`` (rounded
down to the 2^-48 grid), flip it otherwise; epsilon-LDP since ``p / (1 - p) <= e^epsilon``.
Estimator ("empirical"): ``f_yes = (m_yes / n - (1 - p)) / (2p - 1)``, standard error
``sqrt(q (1 - q) / n) / (2p - 1)`` with ``q = m_yes / n`` (Warner 1965).
"""
from __future__ import annotations

import contextlib
import dataclasses
import math
from fractions import Fraction
from typing import ClassVar

import numpy as np
import pydantic

from ldpplan.mechanisms import Aggregate, CountRule, Estimate, PlanError, PlanFields, Reports
from ldpplan.mechanisms._envelope import read_envelope
from ldpplan.mechanisms._plan import check_claim, number
from ldpplan.mechanisms._params import PlanParams
from ldpplan.mechanisms._protocol import Frozen, check_method, set_fields
from ldpplan.planner._common import SpecBase, attach_verification, parse_options, spec_from_pydantic
from ldpplan.planner._exact import SAFETY_MARGIN, exact, log_ratio_slack, ratio_within
from ldpplan.planner._plan_format import envelope, predicted, validate_plan
from ldpplan.planner._report import SimulationReport, Table, Verification
from ldpplan.planner.data import DEFAULT_CHUNK_ROWS, item_stream, read_item_column
from ldpplan.planner.errors import PlanFormatError, SpecError

MECHANISM = "toy-rr"
LABELS = ["no", "yes"]
GRID = 2.0**-48


@dataclasses.dataclass(frozen=True, slots=True)
class ToyRRParams(PlanParams):
    """``params`` of a toy plan: the keep probability."""

    p: float


@dataclasses.dataclass(frozen=True, slots=True, init=False, repr=False, eq=False)
class ToyRR(Frozen):
    """Binary randomized response (runtime side)."""

    #: one answer per report
    count_rule: ClassVar[CountRule] = CountRule(sums_to_n=(("counts",),))
    Params: ClassVar[type[ToyRRParams]] = ToyRRParams

    mechanism: str
    p: float
    epsilon: float
    labels: list[str]
    domain_size: int
    methods: tuple[str, ...]

    def __init__(self, *, p: float, epsilon: float) -> None:
        set_fields(self, mechanism=MECHANISM, p=float(p), epsilon=float(epsilon), labels=list(LABELS), domain_size=2,
                   methods=("empirical", "clipped"))

    def __repr__(self) -> str:
        return f"ToyRR(p={self.p!r}, epsilon={self.epsilon!r})"

    PLAN_FIELDS: ClassVar[PlanFields] = PlanFields((MECHANISM,), ())

    @classmethod
    def from_plan(cls, plan) -> "ToyRR":
        data = read_envelope(plan, cls.PLAN_FIELDS, verified=True)
        params = data.get("params")
        if not isinstance(params, dict):
            raise PlanError("params: must be an object")
        p = number(params.get("p"), "params.p", low=0.5, high=1.0, low_open=True, high_open=True)
        if p / GRID != math.floor(p / GRID):
            raise PlanError(f"params.p: must be on the 2^-48 grid (got {p!r})")
        mech = cls(p=p, epsilon=math.log(p / (1.0 - p)))
        guarantee = data.get("guarantee")
        if not isinstance(guarantee, dict):
            raise PlanError("guarantee: must be an object")
        check_claim(mech.privacy_map()["epsilon"], guarantee.get("epsilon"), "guarantee.epsilon")
        return mech

    def privacy_map(self) -> dict:
        return {"notion": "LDP", "epsilon": float(np.log(self.p) - np.log1p(-self.p))}

    def channel_matrix(self) -> np.ndarray:
        return np.array([[self.p, 1 - self.p], [1 - self.p, self.p]])

    def perturb(self, data, rng: np.random.Generator) -> Reports:
        x = np.asarray(data)
        if x.ndim != 1 or x.dtype.kind not in "iu" or (x.size and (x.min() < 0 or x.max() > 1)):
            raise ValueError("data: must be a 1-d integer array of 0/1")
        keep = rng.random(x.shape[0]) < self.p
        return Reports(MECHANISM, {"y": np.where(keep, x, 1 - x).astype(np.uint8)})

    def aggregate(self, reports: Reports) -> Aggregate:
        if "y" not in reports.columns or set(reports.columns) != {"y"}:
            raise ValueError(f"reports: must have exactly the column 'y' (got {sorted(reports.columns)})")
        y = reports["y"]
        if y.ndim != 1 or y.dtype.kind not in "iu" or (y.size and (y.min() < 0 or y.max() > 1)):
            raise ValueError(f"reports.y: must be a 1-d integer column of 0/1 (got dtype {y.dtype}, shape {y.shape})")
        return Aggregate(MECHANISM, len(y), {"counts": np.bincount(y.astype(np.int64), minlength=2)})

    def estimate(self, reports_or_aggregate, method=None) -> Estimate:
        method = check_method(method, self.methods)
        agg = reports_or_aggregate
        if isinstance(agg, Reports):
            agg = self.aggregate(agg)
        n = agg.n
        q = agg["counts"][1] / n if n else 0.5
        f_yes = (q - (1 - self.p)) / (2 * self.p - 1)
        if method == "clipped":
            f_yes = min(max(f_yes, 0.0), 1.0)
        se = math.sqrt(q * (1 - q) / n) / (2 * self.p - 1) if n else float("inf")
        return Estimate(frequency=[1 - f_yes, f_yes], mean=None, method=method, n=n, std_error=[se, se])


class ToySpec(SpecBase):
    epsilon: float = pydantic.Field(gt=0, le=20)
    users: int = pydantic.Field(default=1000, ge=1)
    prior_csv: str | None = None


class ToyOptions(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)
    users: int = pydantic.Field(default=200, ge=1, description="synthetic users per trial")
    share_yes: float = pydantic.Field(default=0.3, ge=0, le=1, description="true share of 'yes'")


def _p_of(epsilon: float) -> float:
    e = math.exp(epsilon * (1 - SAFETY_MARGIN))
    return math.floor(e / (1 + e) / GRID) * GRID


class ToyFamily:
    name = "toy"
    spec_mechanisms = ("toy",)
    plan_mechanisms = (MECHANISM,)
    examples = {"toy-example": {"mechanism": "toy", "epsilon": 1.0, "users": 100}}
    options_model = ToyOptions
    input_doc = "a CSV with a column `item` holding 'no' or 'yes' (one row per user)"

    def plan(self, raw, *, base_dir=None):
        spec = spec_from_pydantic(ToySpec, raw)
        p = _p_of(spec.epsilon)
        inputs = []
        if spec.prior_csv:
            inputs.append({"what": "prior share of yes", "source": spec.prior_csv, "private": False})
        plan = envelope(mechanism=MECHANISM, domain_size=2, labels=LABELS, params={"p": p},
                        guarantee={"notion": "LDP", "epsilon": spec.epsilon},
                        predicted={"variance": predicted(p * (1 - p) / (2 * p - 1) ** 2, "frequency^2 * n",
                                                         "Warner 1965")},
                        baselines=[], solver={"name": "closed-form", "status": "optimal"},
                        spec=spec.model_dump(), planning_inputs=inputs)
        return attach_verification(plan, self.verify(plan))

    def verify(self, plan):
        validate_plan(plan)
        p, eps = plan["params"].get("p"), plan["guarantee"]["epsilon"]
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.5 < p < 1:
            raise PlanFormatError(f"params.p: must be a number in (0.5, 1) (got {p!r})")
        spec = spec_from_pydantic(ToySpec, plan["spec"])
        if spec.epsilon != eps:
            return Verification(False, f"guarantee.epsilon: must equal spec.epsilon {spec.epsilon} (got {eps})")
        ratio = exact(p) / (1 - exact(p))
        if not ratio_within(ratio, eps):
            return Verification(False, f"params.p: p/(1-p) must be <= e^epsilon; exceeds by "
                                       f"{float(-log_ratio_slack(ratio, eps)):.3g} nats")
        slack = float(log_ratio_slack(ratio, Fraction(eps)))
        return Verification(True, f"p/(1-p) <= e^{eps} (slack {slack:.3g} nats)", {"slack_nats": slack})

    def summarize(self, plan):
        return [Table("toy RR", ["label", "keep probability"], [[lab, plan["params"]["p"]] for lab in LABELS])]

    def simulate(self, plan, options, progress=None):
        opts = parse_options(ToyOptions, options.extra)
        mech = ToyRR.from_plan(plan)
        rows, errors = [], []
        for k in range(options.trials):
            rng = np.random.default_rng([options.seed, k])
            x = (rng.random(opts.users) < opts.share_yes).astype(np.int64)
            est = mech.estimate(mech.perturb(x, rng=rng))
            errors.append(float(est.frequency[1] - x.mean()))
            if progress is not None:
                progress(1, options.trials)
        mse = float(np.mean(np.square(errors)))
        rows.append(["toy-rr", mse])
        return SimulationReport([Table("toy simulation", ["mechanism", "MSE"], rows)], {"mse": mse})

    def read_inputs(self, plan, path):
        return read_item_column(path, plan["domain"]["labels"], plan["domain"]["size"])

    def explain_items(self, plan, items):
        raise SpecError("PLAN", "item-set budgets: the toy family has none", plan.get("mechanism"))

    def iter_inputs(self, plan, path, *, skip_empty=False, chunk_rows=None):
        return item_stream(path, plan["domain"]["labels"], plan["domain"]["size"], skip_empty=skip_empty,
                           chunk_rows=chunk_rows or DEFAULT_CHUNK_ROWS)


FAMILY = ToyFamily()


# --------------------------------------------------------------------------- conformance declarations
#: One small spec per plan mechanism (``tests/test_aggregate_integrity.py``).
AGGREGATE_SPECS = {MECHANISM: {"mechanism": "toy", "epsilon": 1.0, "users": 100}}


def interval_specs(n: int) -> dict[str, dict]:
    """A plan per plan mechanism for ``n`` users (``tests/test_confidence_intervals.py``)."""
    return {MECHANISM: {"mechanism": "toy", "epsilon": 1.0, "users": n}}


def exact_claims(plan) -> dict:
    """``epsilon`` = ln(p / (1 - p)) exactly (``tests/test_plan_gate.py``)."""
    from ldpplan.planner._exact import log_exact

    p = Fraction(plan["params"]["p"])
    return {("epsilon",): log_exact(p / (1 - p))}


def test_toy_variance_is_warners():
    """Every user holds "no": n Var(f_yes) = p (1 - p) / (2p - 1)^2 exactly (the plan's ``predicted.variance``)."""
    from _family_helpers import check_prediction

    plan = FAMILY.plan(FAMILY.examples["toy-example"])
    mech = ToyRR.from_plan(plan)
    n = 200
    samples = [n * float(mech.estimate(mech.perturb(np.zeros(n, dtype=np.int64), rng=np.random.default_rng(seed)))
                         .frequency[1]) ** 2 for seed in range(2000)]
    check_prediction("toy variance", plan["predicted"]["variance"]["value"], samples)


PREDICTED_VS_SIMULATED = test_toy_variance_is_warners
#: The spec field of :func:`epsilon_spec`'s epsilon (``tests/test_cli_polish.py``).
EPSILON_FIELD = "epsilon"
#: The toy spec stops at 20 nats (``ToySpec``).
EPSILON_MAX = 20.0


def epsilon_spec(epsilon) -> dict:
    """A spec whose epsilon is ``epsilon``."""
    return {"mechanism": "toy", "epsilon": epsilon, "users": 100}


@contextlib.contextmanager
def registered():
    """Register ONLY the toy family and runtime (the real families are not imported)."""
    import sys

    from ldpplan import mechanisms
    from ldpplan.planner import families

    with pytest_monkeypatch() as mp:
        # the registry line names the family; its room is ``ldpplan.planner.toy`` (this module)
        mp.setattr(families, "_registry_line", lambda: (FAMILY,))
        mp.setitem(sys.modules, f"{families.__package__}.toy", sys.modules[__name__])
        # its tests' conformance module ``tests/test_toy_conformance.py`` (the declarations below)
        mp.setitem(sys.modules, "test_toy_conformance", sys.modules[__name__])
        mp.setattr(mechanisms, "RUNTIMES", {MECHANISM: ToyRR})
        yield


@contextlib.contextmanager
def pytest_monkeypatch():
    import pytest

    mp = pytest.MonkeyPatch()
    try:
        yield mp
    finally:
        mp.undo()
