"""SMP over a record of categorical and numeric attributes, planned in the API (issue 30, numeric attributes).

A record's attributes as in a records spec, where a numeric attribute gives ``range = [low, high]``
instead of ``domain`` (and optionally ``mechanism``: ``"numeric"`` (default, the numeric family's
choice at the budget), ``"duchi"``, ``"piecewise"`` or ``"hybrid"``). :func:`mixed_smp` solves SMP's
optimal ``pi_j`` (:func:`ldpplan.solvers._records_numeric.smp_mixed_optimal`; a numeric attribute's
error is the variance of its mean on the ``[-1, 1]`` scale), puts ``pi`` on the 2^-48 grid, and
returns the runtime with the record's epsilon decided exactly (the largest attribute's).

Plan files with numeric attributes are not written yet: ``parse_spec`` refuses a ``range`` in one
line (SPL and RS+FD with a reason; SMP pointing here).

References
----------
N. Wang et al., ICDE 2019, Sec. III-IV; Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021, Sec. 2.3.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Literal, Mapping, Optional, Sequence, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from ...mechanisms.numeric.runtime import NumericChannel
from ...mechanisms.records._mixed import CategoricalPart, MixedSampledRecord
from ...solvers import records as solver
from ...solvers._records_numeric import SPREAD, MixedSampling, numeric_report, smp_mixed_optimal, smp_mixed_uniform
from ...mechanisms import Aggregate, PlanError
from .._common import spec_from_pydantic
from .._grid import MARGINS
from ..data import DEFAULT_CHUNK_ROWS, open_table_stream
from ..data.chunked import InputStream, map_items
from ..numeric.inputs import _floats
from ..errors import SpecError
from ._solve import grid_sampling

__all__ = ["MixedPlan", "mixed_smp", "perturb_file", "perturb_records_file"]


class _Attribute(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field(min_length=1, max_length=64)
    domain: Optional[Union[StrictInt, list[str]]] = None
    range: Optional[list[float]] = Field(default=None, min_length=2, max_length=2)
    weight: float = Field(default=1.0, gt=0.0, le=1e6)
    oracle: Literal["auto", "grr", "oue"] = "auto"
    mechanism: Literal["numeric", "duchi", "piecewise", "hybrid"] = "numeric"


class _Mixed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    epsilon: float = Field(gt=0.0, le=10.0)
    attributes: list[_Attribute] = Field(min_length=1, max_length=64)


@dataclasses.dataclass(frozen=True)
class MixedPlan:
    """The planned SMP of a mixed record.

    Attributes
    ----------
    runtime : MixedSampledRecord
        Its ``epsilon`` is the record's realized epsilon (exact, rounded up to a float; at most the budget).
    optimum : MixedSampling
        The solver's optimal ``pi`` (before the grid) with its certificate.
    uniform : MixedSampling
        The published baseline ``pi_j = 1/d``.
    variances : tuple of float
        ``n Var_j`` at the grid ``pi``: per item at ``f = 0`` (categorical) or the worst-case mean
        variance (numeric, ``[-1, 1]`` scale).
    weighted_variance : float
    mechanisms : tuple of str
        The oracle (``grr``/``oue``) or the numeric mechanism per attribute.
    margin : float
        The safety margin the numbers were built at (``epsilon (1 - margin)``; :data:`.._grid.MARGINS`).
    labels : tuple of (list of str or None)
        A categorical attribute's labels (None: a count, codes ``0 .. k-1``; None for numeric attributes).
    """

    runtime: MixedSampledRecord
    optimum: MixedSampling
    uniform: MixedSampling
    variances: tuple[float, ...]
    weighted_variance: float
    mechanisms: tuple[str, ...]
    margin: float
    labels: tuple[list[str] | None, ...] = ()


def _attribute_terms(epsilon: float, a: _Attribute) -> tuple[Any, str, float, float]:
    """``(part, mechanism, V_j, S_j)`` of one attribute at the whole budget."""
    if a.range is not None:
        if a.domain is not None:
            raise SpecError("attributes.range", "an attribute has a domain or a range, not both", a.name)
        low, high = float(a.range[0]), float(a.range[1])
        if not low < high:
            raise SpecError("attributes.range", "must be [low, high] with low < high", a.range)
        report = numeric_report(None if a.mechanism == "numeric" else a.mechanism, epsilon)
        c = report.channel
        part = NumericChannel(domain=len(c.input_grid), mechanism=report.mechanism, epsilon=epsilon, low=low,
                              high=high, input_grid=c.input_grid, output_values=c.output_values,
                              numerators=c.numerators, component_weights=c.component_weights,
                              component_sizes=c.component_sizes)
        return part, report.mechanism, report.worst_variance, SPREAD
    if a.domain is None:
        raise SpecError("attributes.domain", "required unless the attribute is numeric (range)", a.name)
    k = a.domain if isinstance(a.domain, int) else len(a.domain)
    oracle = a.oracle if a.oracle != "auto" else min(solver.ORACLES, key=lambda o: solver.frequency_oracle_variance(
        o, epsilon, k))
    return CategoricalPart(k, oracle, epsilon), oracle, solver.frequency_oracle_variance(oracle, epsilon, k), 0.0


def mixed_smp(raw: Mapping[str, Any]) -> MixedPlan:
    """Plan SMP over a record of categorical and numeric attributes.

    Parameters
    ----------
    raw : mapping
        ``epsilon`` (nats, (0, 10]) and ``attributes`` (records spec attributes; numeric ones with
        ``range = [low, high]`` and optionally ``mechanism``).

    Returns
    -------
    MixedPlan

    Raises
    ------
    SpecError
        A bad key (named), or numbers whose exact epsilon exceeds the budget.

    References
    ----------
    Wang et al., ICDE 2019, Sec. IV; Arcolezi et al., CIKM 2021, Sec. 2.3.
    """
    spec = spec_from_pydantic(_Mixed, raw)
    names = [a.name for a in spec.attributes]
    if len(set(names)) != len(names):
        raise SpecError("attributes", "names must be distinct", names)
    for margin in MARGINS:  # the planner's safety ladder: float rounding of e^epsilon can tip a grid number over
        plan = _plan_at(spec, names, margin)
        if plan is not None:
            return plan
    raise SpecError("epsilon", "no safety margin puts the record's numbers within the budget", spec.epsilon)


def _plan_at(spec: _Mixed, names: list[str], margin: float) -> MixedPlan | None:
    """The plan at ``epsilon (1 - margin)``, or None when its exact record epsilon exceeds ``epsilon``."""
    terms = [_attribute_terms(spec.epsilon * (1.0 - margin), a) for a in spec.attributes]
    weights = [a.weight for a in spec.attributes]
    kinds = ["mean" if a.range is not None else "frequency" for a in spec.attributes]
    noise, spread = [t[2] for t in terms], [t[3] for t in terms]
    optimum = smp_mixed_optimal(weights, noise, spread, kinds)
    pi = grid_sampling(optimum.probabilities)
    variances = tuple((v + s) / p - s for v, s, p in zip(noise, spread, pi))
    try:
        runtime = MixedSampledRecord(names=names, parts=[t[0] for t in terms], sampling=pi, epsilon=spec.epsilon)
    except PlanError:
        return None
    # the claim is the realized epsilon (the exact one rounded up), as a records plan's guarantee.epsilon: a
    # numerator raised by one step on the decisive column then exceeds it
    realized = max(runtime.privacy_map()["levels"].values())
    runtime = MixedSampledRecord(names=names, parts=runtime.parts, sampling=pi, epsilon=realized)
    return MixedPlan(runtime, optimum, smp_mixed_uniform(weights, noise, spread, kinds), variances,
                     float(sum(w * v for w, v in zip(weights, variances))), tuple(t[1] for t in terms), margin,
                     tuple(a.domain if isinstance(a.domain, list) else None for a in spec.attributes))


def perturb_file(plan: MixedPlan, path: str | os.PathLike, rng: np.random.Generator, *, skip_empty: bool = False,
                 chunk_rows: int | None = None) -> Aggregate:
    """Perturb the records of a CSV (or Parquet) file, streamed, and aggregate the reports (mergeable counts).

    The file has one column per attribute, named as the attributes: a categorical cell is a label (an
    index when the domain is a count), a numeric cell a number (clipped to the range). A row with an
    empty cell (a cancelled flight's delay) is refused unless ``skip_empty`` (then dropped and counted).

    Raises
    ------
    InputDataError
        Missing file or column, a cell that is not a label / number (naming the line), empty cells.

    References
    ----------
    Wang et al., ICDE 2019, Sec. IV (one sampled attribute per user).
    """
    return perturb_records_file(plan.runtime, plan.labels, path, rng, skip_empty=skip_empty, chunk_rows=chunk_rows)


def perturb_records_file(runtime: MixedSampledRecord, labels: Sequence[list[str] | None], path: str | os.PathLike,
                         rng: np.random.Generator, *, skip_empty: bool = False,
                         chunk_rows: int | None = None) -> Aggregate:
    """:func:`perturb_file` for a runtime and its attributes' labels (a loaded ``smp-mixed`` plan's, say).

    ``labels[j]``: a categorical attribute's labels, or None (a count domain: indices; a numeric attribute).
    """
    names = list(runtime.names)
    table = open_table_stream(path, names, ("user",), chunk_rows=DEFAULT_CHUNK_ROWS if chunk_rows is None
                              else chunk_rows)

    def produce(stream: InputStream):
        for batch in table:
            stream.note_batch(batch)
            columns = []
            for j, name in enumerate(names):
                if runtime.is_numeric(j):
                    columns.append(_floats(table, batch.start, batch.columns[name], name))
                else:
                    codes = map_items(table, batch.start, batch.columns[name], labels[j],
                                      runtime.parts[j].domain_size, name).astype(np.float64)
                    columns.append(np.where(codes < 0, np.nan, codes))
            rows = np.stack(columns, axis=1)
            empty = np.any(np.isnan(rows), axis=1)
            if empty.any():
                stream.note_empty(batch.start + np.nonzero(empty)[0])
            if (~empty).any():
                yield rows[~empty]

    total = None
    for chunk in InputStream(table, produce, skip_empty=skip_empty, column=" or ".join(names)):
        part = runtime.aggregate(runtime.perturb(chunk, rng))
        total = part if total is None else total + part
    if total is None:
        raise SpecError("path", "no records in the file", os.fspath(path))
    return total
