"""Issue 16, findings 3 and 4: each batch of reports is counted once, whatever its path, and
aggregates read from files are checked against ``n`` with every family's count rule.

CLI: a hard link, a byte copy, and an aggregate plus a copy of one of its batches are each
refused with exit 2 (one line naming the batch and both inputs), by ``aggregate`` and ``estimate``.
Runtime: ``Aggregate.__add__`` refuses a batch counted twice and aggregates of different plans;
``Aggregate.from_dict`` refuses booleans, floats, negative counts and counts inconsistent with
``n``, in every registered family (``ldpplan.mechanisms.RUNTIMES``).
"""
from __future__ import annotations

import json
import os
import pathlib
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

from _family_helpers import aggregate_specs, perturb, read_inputs
from test_aggregate import error_line, run, shards  # noqa: F401 - the fixture
from ldpplan.mechanisms import RUNTIMES, Aggregate, Batch, CountRule, runtime_class

#: One small spec per case (plans in well under a second each): every registered family's
#: ``AGGREGATE_SPECS`` (its ``tests/test_<family>_conformance.py``), covering every plan mechanism.
SPECS = aggregate_specs()
FP_A, FP_B = "a" * 64, "b" * 64
_AGGS: dict = {}
_PLANS: dict = {}


def _plan_of(spec: dict) -> dict:
    """The plan of a spec (solved once per session)."""
    import ldpplan

    key = json.dumps(spec, sort_keys=True)
    if key not in _PLANS:
        _PLANS[key] = ldpplan.planner.make_plan(json.loads(key))
    return json.loads(json.dumps(_PLANS[key]))


def _aggregate_of(case: str, tmp_path_factory) -> dict:
    """``Aggregate.to_dict()`` of 60 real reports of the case's plan (cached)."""
    if case not in _AGGS:
        import ldpplan
        from ldpplan.planner.families import family_of_plan

        plan = _plan_of(SPECS[case])
        mech = ldpplan.load(plan)
        data = read_inputs(family_of_plan(plan), plan, tmp_path_factory.mktemp(case), 60, np.random.default_rng(3))
        _AGGS[case] = mech.aggregate(perturb(mech, data, np.random.default_rng(4))).to_dict()
    return json.loads(json.dumps(_AGGS[case]))


@pytest.mark.slow  # ~3 s: kept out of the fast tier
def test_every_registered_runtime_declares_a_count_rule_and_is_covered_here():
    import ldpplan
    from ldpplan import mechanisms

    specs = aggregate_specs()  # read now: the registry may be another (the recipe test registers a toy)
    assert {ldpplan.planner.families.family_for(s["mechanism"]).name for s in specs.values()} == \
        {fam.name for fam in ldpplan.planner.families.all_families()}
    planned = {_plan_of(s)["mechanism"] for s in specs.values()}
    assert planned == set(mechanisms.RUNTIMES)
    for mechanism in mechanisms.RUNTIMES:
        assert isinstance(mechanisms.RUNTIMES[mechanism].count_rule, CountRule), mechanism


# ------------------------------------------------------------------------------------------- finding 4


@pytest.mark.parametrize("case", sorted(SPECS))
def test_real_aggregates_pass_and_inconsistent_counts_are_refused(case, tmp_path_factory):
    data = _aggregate_of(case, tmp_path_factory)
    agg = Aggregate.from_dict(data)                   # real reports satisfy the family's rule
    assert agg.n == 60 and Aggregate.from_dict(agg.to_dict()) == agg
    name, values = next(iter(data["counts"].items()))
    flat = np.asarray(values).ravel().tolist()

    def with_first(value):
        out = json.loads(json.dumps(data))
        arr = np.asarray(values, dtype=object).ravel()
        arr[0] = value
        out["counts"][name] = arr.reshape(np.shape(values)).tolist()
        return out

    with pytest.raises(ValueError, match=f"aggregate.counts.{name}: must be integer counts, not booleans"):
        Aggregate.from_dict(with_first(True if flat[0] else False))
    with pytest.raises(ValueError, match=f"aggregate.counts.{name}: must be integer counts"):
        Aggregate.from_dict(with_first(float(flat[0])))
    with pytest.raises(ValueError, match=f"aggregate.counts.{name}: counts must be >= 0"):
        Aggregate.from_dict(with_first(-1))
    with pytest.raises(ValueError, match=f"aggregate.counts.{name}: every count must be at most n = 60 .got 61."):
        Aggregate.from_dict(with_first(61))           # a count of n + 1: in every family
    with pytest.raises(ValueError, match="aggregate.n: must be an integer"):
        Aggregate.from_dict({**data, "n": True})
    # n + 1 (an extra report that appears in no count): refused where the counts fix n; in an
    # identified aggregate the batches' rows fix n in every family
    rule = runtime_class(data["mechanism"]).count_rule
    fixed = any(c in data["counts"] for g in rule.sums_to_n for c in g)
    if fixed:
        with pytest.raises(ValueError, match="must sum to n = 61"):
            Aggregate.from_dict({**data, "n": 61})
    identified = {**data, "plan_fingerprint": FP_A,
                  "batches": [{"batch_id": "1" * 32, "digest": None, "rows": 60, "source": "a.parquet"}]}
    assert Aggregate.from_dict(identified).batches[0].rows == 60
    with pytest.raises(ValueError, match="rows must sum to n = 61"):
        Aggregate.from_dict({**identified, "n": 61})
    # the rows edited too: the counts refuse it where they fix n; at-most rules cannot tell (documented)
    forged = {**identified, "n": 61, "batches": [{**identified["batches"][0], "rows": 61}]}
    if fixed:
        with pytest.raises(ValueError, match="must sum to n = 61"):
            Aggregate.from_dict(forged)
    else:
        assert Aggregate.from_dict(forged).n == 61


def test_cross_column_rules_pckv_and_key_value():
    ue, grr = runtime_class("pckv-ue").count_rule, runtime_class("pckv-grr").count_rule
    ue.check(5, {"n1": np.array([3, 0]), "n2": np.array([2, 5])})
    with pytest.raises(ValueError, match=r"counts.n1\+n2: must be at most n = 5 at every entry \(got 6\)"):
        ue.check(5, {"n1": np.array([3, 0]), "n2": np.array([3, 5])})
    grr.check(5, {"n1": np.array([3, 0]), "n2": np.array([1, 1])})
    with pytest.raises(ValueError, match=r"counts.n1\+n2: must sum to at most n = 5 \(got 6\)"):
        grr.check(5, {"n1": np.array([3, 1]), "n2": np.array([1, 1])})
    rule = CountRule(sums_to_n=(("sampled",),), at_most_column=((("n1", "n2"), "sampled"),))
    rule.check(4, {"sampled": np.array([3, 1]), "n1": np.array([1, 0]), "n2": np.array([2, 0])})
    with pytest.raises(ValueError, match=r"counts.n1\+n2: must be at most counts.sampled"):
        rule.check(4, {"sampled": np.array([3, 1]), "n1": np.array([2, 0]), "n2": np.array([2, 0])})
    # sums are exact (no int64 wrap-around): 2**62 - 1 per entry, far beyond n
    with pytest.raises(ValueError, match="at most n = 3"):
        CountRule(sums_to_n=(("y",),)).check(3, {"y": np.array([2**62 - 1] * 4)})


@pytest.mark.parametrize("edit, needle", [
    (lambda r: r.update(n=r["n"] + 1), "n and sources must match"),
    (lambda r: r["aggregate"].update(n=r["aggregate"]["n"] + 1), "rows must sum to n"),
    (lambda r: r["aggregate"]["counts"]["counts"].__setitem__(0, True), "not booleans"),
    (lambda r: r["aggregate"]["counts"]["counts"].__setitem__(0, 10**6), "every count must be at most n"),
    (lambda r: r["aggregate"].pop("batches"), "aggregate.batches: missing"),
    (lambda r: r["aggregate"].update(plan_fingerprint="c" * 64), "aggregate.plan_fingerprint"),
    (lambda r: r["aggregate"]["batches"][0].update(batch_id="XYZ"), "batch_id: must be 32 lowercase hex"),
    (lambda r: r["aggregate"]["batches"].append(dict(r["aggregate"]["batches"][0])), "counted twice"),
    (lambda r: r.update(extra=1), "unknown field 'extra'"),
])
def test_malformed_aggregate_files_are_exit_2(shards, tmp_path, edit, needle):  # noqa: F811
    plan, paths = shards
    good, out = tmp_path / "good.json", tmp_path / "out.json"
    assert run("aggregate", plan, *paths, "-o", good).exit_code == 0
    record = json.loads(good.read_text())
    edit(record)
    good.write_text(json.dumps(record))
    for verb in (["aggregate", plan, good, "-o", out], ["estimate", plan, good, "-o", out]):
        result = run(*verb)
        assert result.exit_code == 2 and not out.exists(), result.output
        line = error_line(result)
        assert needle in line and str(good) in line, line


# ------------------------------------------------------------------------------------------- finding 3


def _batch_id(path) -> str:
    return pq.read_schema(path).metadata[b"batch_id"].decode()


def _refused(args, batch: str, *names):
    out = pathlib.Path(args[args.index("-o") + 1])
    result = run(*args)
    assert result.exit_code == 2 and not out.exists(), result.output
    line = error_line(result)
    assert f"batch {batch} is counted twice" in line and all(str(n) in line for n in names), line


@pytest.mark.parametrize("verb", ["aggregate", "estimate"])
def test_hard_link_byte_copy_and_aggregate_plus_copy_are_refused(shards, tmp_path, verb):  # noqa: F811
    plan, paths = shards
    out = tmp_path / "out.json"
    link, copy = tmp_path / "link.parquet", tmp_path / "copy.parquet"
    os.link(paths[0], link)
    shutil.copyfile(paths[0], copy)
    batch = _batch_id(paths[0])
    _refused([verb, plan, paths[0], link, "-o", out], batch, paths[0], link)
    _refused([verb, plan, copy, paths[1], paths[0], "-o", out], batch, copy, paths[0])
    day = tmp_path / "day.json"
    assert run("aggregate", plan, paths[0], paths[1], "-o", day).exit_code == 0
    _refused([verb, plan, day, copy, "-o", out], batch, day, paths[0], copy)      # names the original batch too
    # two aggregates sharing a batch
    other = tmp_path / "other.json"
    assert run("aggregate", plan, paths[1], paths[2], "-o", other).exit_code == 0
    _refused([verb, plan, day, other, "-o", out], _batch_id(paths[1]), day, other)
    # the aggregate of disjoint batches is fine, and lists them
    assert run(verb, plan, day, paths[2], "-o", out).exit_code == 0


def test_files_without_a_batch_id_are_identified_by_their_digest(shards, tmp_path):  # noqa: F811
    plan, paths = shards
    table = pq.read_table(paths[0])
    meta = {k: v for k, v in table.schema.metadata.items() if k != b"batch_id"}
    legacy = tmp_path / "legacy.parquet"
    pq.write_table(table.replace_schema_metadata(meta), legacy)
    copy = tmp_path / "legacy-copy.parquet"
    shutil.copyfile(legacy, copy)
    out = tmp_path / "out.json"
    assert run("aggregate", plan, legacy, paths[1], "-o", out).exit_code == 0
    batches = json.loads(out.read_text())["aggregate"]["batches"]
    assert batches[0]["batch_id"] is None and batches[0]["digest"].startswith("sha256:")
    assert batches[1]["batch_id"] == _batch_id(paths[1])
    out.unlink()
    _refused(["aggregate", plan, legacy, copy, "-o", out], batches[0]["digest"], legacy, copy)
    bad = tmp_path / "bad.parquet"
    pq.write_table(table.replace_schema_metadata({**meta, b"batch_id": b"not-hex"}), bad)
    result = run("aggregate", plan, bad, "-o", out)
    assert result.exit_code == 2 and "metadata.batch_id: must be 32 lowercase hex digits" in error_line(result)


def test_every_reports_file_gets_a_fresh_batch_id_from_secrets(shards, tmp_path, monkeypatch):  # noqa: F811
    from ldpplan.planner import _reports_file

    plan, paths = shards
    ids = [_batch_id(p) for p in paths]
    assert len(set(ids)) == 3 and all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    calls = []
    monkeypatch.setattr(_reports_file.secrets, "token_hex", lambda k: calls.append(k) or "0123456789abcdef" * 2)
    users = tmp_path / "u.csv"
    users.write_text("item\nyes\nno\n")
    assert run("perturb", plan, "--input", users, "-o", tmp_path / "r.parquet", "--seed", 0).exit_code == 0
    assert calls == [16] and _batch_id(tmp_path / "r.parquet") == "0123456789abcdef" * 2


# ------------------------------------------------------------------------------- Aggregate.__add__


def _agg(n=3, counts=(1, 2)):
    return Aggregate("rr", n, {"y": np.array(counts)})


def test_add_refuses_a_batch_counted_twice_and_other_plans():
    a = _agg().with_batches(FP_A, [Batch("1" * 32, "sha256:" + "1" * 64, 3, "a.parquet")])
    b = _agg().with_batches(FP_A, [Batch("2" * 32, "sha256:" + "2" * 64, 3, "b.parquet")])
    both = a + b
    assert both.n == 6 and [x.source for x in both.batches] == ["a.parquet", "b.parquet"]
    assert both.counts["y"].tolist() == [2, 4] and Aggregate.from_dict(both.to_dict()) == both
    copy = _agg().with_batches(FP_A, [Batch("1" * 32, "sha256:" + "1" * 64, 3, "copy.parquet")])
    with pytest.raises(ValueError, match=f"batch {'1' * 32} is counted twice: in a.parquet and in copy.parquet"):
        a + copy
    with pytest.raises(ValueError, match="counted twice: in a.parquet and in copy.parquet"):
        both + copy                                  # an aggregate plus a copy of one of its batches
    same_bytes = _agg().with_batches(FP_A, [Batch(None, "sha256:" + "2" * 64, 3, "c.parquet")])
    with pytest.raises(ValueError, match="sha256:2{64} is counted twice: in b.parquet and in c.parquet"):
        both + same_bytes                            # same content, no batch id
    other_plan = _agg().with_batches(FP_B, [Batch("3" * 32, None, 3, "d.parquet")])
    with pytest.raises(ValueError, match="aggregates of different plans cannot merge"):
        a + other_plan
    with pytest.raises(ValueError, match="unidentified reports"):
        a + _agg()
    assert (_agg() + _agg()).n == 6 and not (_agg() + _agg()).batches   # in-memory: unchecked, as documented
    with pytest.raises(ValueError, match="already lists its batches"):
        a.with_batches(FP_A, [Batch("4" * 32, None, 3, "e")])
    with pytest.raises(ValueError, match="rows must sum to n = 3"):
        _agg().with_batches(FP_A, [Batch("4" * 32, None, 2, "e")])
