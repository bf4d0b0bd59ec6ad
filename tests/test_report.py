"""``ldpplan report`` and ``ldpplan.planner.report`` (issue 31): golden checks of the page against its plan.

Every number the page takes from the plan is a ``<data value=EXACT data-field=/json/pointer>TEXT</data>``:
the tests read each one back from the plan (exact ``repr`` and the shown text), check that the
notion, the unit of privacy, epsilon (and delta), the fingerprint and the predicted error are there,
that the page references nothing outside itself, that its hazards are docs/SECURITY.md's, and that a
tampered plan gets no report (exit 1, no file) and bad input exit 2.
"""
from __future__ import annotations

import copy
import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

import _family_helpers
from ldpplan.planner import api
from ldpplan.planner.cli import main
from ldpplan.planner.reporting import report
from ldpplan.planner.reporting.security import SECTIONS, sections
from ldpplan.planner.reporting.values import fmt, pointer, read

ROOT = Path(__file__).resolve().parents[1]
SHUFFLE_SPEC = ROOT / "examples" / "shuffle-rr.toml"


class _Page(HTMLParser):
    """The page's ``<data>`` elements, element ids' texts, tags and URL-bearing attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.data: list[dict] = []
        self.by_id: dict[str, str] = {}
        self.tags: set[str] = set()
        self.urls: list[str] = []
        self._open: list[tuple[str, dict, list[str]]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        self.urls += [v for k, v in attrs.items() if k in ("src", "href", "xlink:href", "action", "srcset") and v]
        if tag in ("data", "code", "pre") and (tag == "data" or "id" in attrs):
            self._open.append((tag, attrs, []))

    def handle_data(self, text):
        for _, _, parts in self._open:
            parts.append(text)

    def handle_endtag(self, tag):
        if self._open and self._open[-1][0] == tag:
            _, attrs, parts = self._open.pop()
            text = "".join(parts)
            if tag == "data":
                self.data.append({**attrs, "text": text})
            else:
                self.by_id[attrs["id"]] = text


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def _resolve(plan, ptr: str):
    parts = [p.replace("~1", "/").replace("~0", "~") for p in ptr.split("/")[1:]]
    node = plan
    for part in parts:
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _cases():
    cases = _family_helpers.family_cases()
    return [pytest.param(*c.values, id=c.id, marks=[pytest.mark.slow]) for c in cases]


def check_page(plan, html: str) -> _Page:
    """Every plan number of the page equals the plan's; the required facts are there; nothing external."""
    from ldpplan.planner._report import default_report_facts
    from ldpplan.planner.families import family_of_plan

    fam = family_of_plan(plan)
    facts = fam.report_facts(plan) if hasattr(fam, "report_facts") else default_report_facts(plan)
    page = _parse(html)
    fields = {}
    for element in page.data:
        if "data-field" not in element:
            continue
        value = _resolve(plan, element["data-field"])
        assert element["value"] == (repr(value) if isinstance(value, float) else str(value)), element
        assert element["text"] == fmt(value), element
        fields[element["data-field"]] = value
    required = {"/mechanism", "/guarantee/notion", pointer(facts.bounds[0].field),
                f"/predicted/{facts.headline}/value"} | {pointer(b.field) for b in facts.bounds}
    shuffled = plan["guarantee"].get("shuffled")
    if shuffled:
        required |= {"/guarantee/shuffled/epsilon", "/guarantee/shuffled/delta", "/guarantee/shuffled/epsilon_lower"}
    assert required <= set(fields), sorted(required - set(fields))
    assert page.by_id["fingerprint"] == api.fingerprint(plan)
    assert facts.unit_of_privacy in html.replace("&#39;", "'")
    record = json.loads(page.by_id["dp-deployment-record"])
    assert record["epsilon"] == read(plan, facts.bounds[0].field)
    assert record["delta"] == (shuffled["delta"] if shuffled else 0.0)
    assert record["model"] == ("shuffle" if shuffled else "local")
    assert record["plan_fingerprint"] == api.fingerprint(plan)
    assert (record["mechanism"], record["notion"]) == (plan["mechanism"], plan["guarantee"]["notion"])
    assert record["predicted_error"]["value"] == plan["predicted"][facts.headline]["value"]
    assert record["sources"] and all(b["source"] for b in record["bounds"])
    # self-contained: no script, stylesheet link, frame, image or object; every URL a fragment of the page
    assert not page.tags & {"script", "link", "iframe", "img", "object", "embed", "base"}, page.tags
    assert all(url.startswith("#") for url in page.urls), [u for u in page.urls if not u.startswith("#")]
    assert "@import" not in html and "url(http" not in html and "url(//" not in html
    for name, text in sections().items():  # the trust model and hazards are docs/SECURITY.md's
        assert text in html, name
    return page


@pytest.mark.parametrize("fam,name", _cases())
def test_every_example_report_states_the_plans_numbers(fam, name, request):
    plan = _family_helpers.example_plan(fam, name, request)
    page = check_page(plan, _family_helpers.report_page((fam.name, name), plan))
    # the what-ifs were planned by the family (derived numbers, no field) and stated
    assert any("data-field" not in d for d in page.data)


@pytest.mark.slow
def test_shuffled_report_states_the_central_guarantee_and_its_lower_bound():
    plan = _family_helpers.file_plan(SHUFFLE_SPEC)
    html = _family_helpers.report_page("shuffle-rr", plan)
    page = check_page(plan, html)
    shuffled = {d["data-field"]: d["value"] for d in page.data if d.get("data-field", "").startswith("/guarantee/shuff")}
    assert float(shuffled["/guarantee/shuffled/epsilon_lower"]) <= float(shuffled["/guarantee/shuffled/epsilon"])
    assert "central" in html and "shuffle" in json.loads(page.by_id["dp-deployment-record"])["model"]


@pytest.fixture(scope="module")
def health(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    plan = api.make_plan(api.example_spec("health"))
    path = folder / "health.json"
    api.write_plan(plan, path)
    return plan, path


def _run(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main.main(args=[str(a) for a in args], prog_name="ldpplan")
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


@pytest.mark.slow
def test_cli_writes_the_report_with_audit_and_simulation(health, tmp_path, capsys):
    """`--audit` and `--simulate` take what `ldpplan audit --json` and `ldpplan simulate --json` write."""
    plan, path = health
    code, audit_json, err = _run(["audit", path, "--seed", 1, "--trials", 2000, "--json"], capsys)
    assert code in (0, None), err
    code, sim_json, err = _run(["simulate", path, "--seed", 1, "--trials", 1, "--json"], capsys)
    assert code in (0, None), err
    (tmp_path / "audit.json").write_text(audit_json)
    (tmp_path / "sim.json").write_text(sim_json)
    out = tmp_path / "r.html"
    code, _, err = _run(["report", path, "-o", out, "--audit", tmp_path / "audit.json", "--simulate",
                         tmp_path / "sim.json"], capsys)
    assert code in (0, None), err
    html = out.read_text(encoding="utf-8")
    page = check_page(plan, html)
    audit, simulation = json.loads(audit_json), json.loads(sim_json)
    values = {d["value"] for d in page.data}
    assert {repr(audit["epsilon_lower_bound"]), repr(audit["min_detectable_epsilon"])} <= values  # bound and power
    assert "/points/0/mechanisms" in html and fmt(simulation["points"][0]["epsilon_min"]) in html
    # the golden check can fail: one shown digit changed, or the fingerprint of another plan
    epsilon = fmt(plan["guarantee"]["epsilon"])
    with pytest.raises(AssertionError):
        check_page(plan, html.replace(f'data-field="/guarantee/epsilon">{epsilon}<', 'data-field="/guarantee/epsilon">1.5<'))
    with pytest.raises(AssertionError):
        check_page(plan, html.replace(api.fingerprint(plan)[8:20], "0" * 12))


@pytest.mark.slow
def test_tampered_plan_gets_no_report(health, tmp_path, capsys):
    plan, _ = health
    tampered = copy.deepcopy(plan)
    tampered["guarantee"]["levels"]["hiv"] = 1.3  # claims more than its spec's budget gives
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(tampered))
    out = tmp_path / "r.html"
    code, _, err = _run(["report", path, "-o", out], capsys)
    assert code == 1 and "fails verification" in err
    assert not out.exists() and list(tmp_path.iterdir()) == [path]
    from ldpplan.planner.errors import PrivacyViolation

    with pytest.raises(PrivacyViolation, match="fails verification"):
        report(tampered)


@pytest.mark.parametrize("case", ["not json", "missing audit key", "audit of another mechanism", "no plan"])
def test_bad_input_is_exit_2_with_one_line_and_no_file(case, health, tmp_path, capsys):
    plan, path = health
    extra = []
    if case == "not json":
        path = tmp_path / "bad.json"
        path.write_text("{")
    elif case == "no plan":
        path = tmp_path / "absent.json"
    else:
        audit = {"mechanism": "other", "epsilon_claimed": 1, "epsilon_lower_bound": 1, "confidence": 0.95,
                 "trials": 1, "consistent": True, "min_detectable_epsilon": 2, "pairs": []}
        if case == "missing audit key":
            del audit["epsilon_lower_bound"]
        (tmp_path / "a.json").write_text(json.dumps(audit))
        extra = ["--audit", tmp_path / "a.json"]
    out = tmp_path / "r.html"
    code, _, err = _run(["report", path, "-o", out, *extra], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert not out.exists()
    if case == "missing audit key":
        assert "--audit: epsilon_lower_bound" in err
    if case == "audit of another mechanism":
        assert "--audit: mechanism" in err and "'other'" in err


@pytest.mark.slow
def test_a_family_without_report_hooks_gets_the_default_facts(toy_family):
    """A Family that states no report facts (the test-only toy) still gets a checked page, without what-ifs."""
    fam = toy_family.FAMILY
    plan = fam.plan(fam.examples["toy-example"])
    html = report(plan)
    check_page(plan, html)
    assert "not planned" in html


def test_security_passages_are_marked_and_name_the_hazards():
    """The report's trust model and hazards are cut from docs/SECURITY.md (one text, never two)."""
    text = (ROOT / "docs" / "SECURITY.md").read_text(encoding="utf-8")
    parts = sections(text)
    assert list(parts) == list(SECTIONS)
    assert parts == sections()  # the package reads the same file
    for hazard in ("Timing and other side channels", "A compromised device", "Planning inputs read from raw data",
                   "Repeated collection from the same user"):
        assert hazard in parts["hazards"], hazard
    assert "<a " not in "".join(parts.values()) and '<th scope="col">' in parts["trust"]


def test_security_passages_refuse_a_missing_marker():
    """A SECURITY.md without the report's markers is refused, naming them."""
    with pytest.raises(ValueError, match=r"not marked"):
        sections("# Security\n<!-- report:trust -->\ntext\n<!-- /report:trust -->\n")


def test_numbers_are_traceable():
    """Pointers escape ``/`` and ``~`` (RFC 6901); the shown text is the one format."""
    assert pointer(("guarantee", "levels", "a/b~c", 0)) == "/guarantee/levels/a~1b~0c/0"
    assert _resolve({"guarantee": {"levels": {"a/b~c": [5]}}}, "/guarantee/levels/a~1b~0c/0") == 5
    assert (fmt(1370637), fmt(1.3862943611198906), fmt(1.815124346986275e-05), fmt(True)) == \
        ("1,370,637", "1.38629", "1.81512e-05", "yes")


@pytest.mark.slow  # ~4 s (plans each family twice): kept out of the fast tier
def test_every_family_states_its_report_facts():
    """Each registered family's claims declare the report's hook: bounds at real fields, a real headline."""
    from ldpplan.planner.families import all_examples

    seen = set()
    for name, (fam, spec) in all_examples().items():
        if fam.name in seen or _family_helpers.needs_real_data(spec):
            continue
        seen.add(fam.name)
        plan = fam.plan(spec)
        facts = fam.report_facts(plan)
        assert facts.bounds and all(isinstance(read(plan, b.field), float) for b in facts.bounds), name
        assert facts.headline in plan["predicted"] and facts.unit_of_privacy and facts.notion_words
        half = fam.report_spec(plan, budget=0.5)
        assert half is not None and fam.plan(half)["guarantee"]["epsilon"] < plan["guarantee"]["epsilon"], name
    from ldpplan.planner.families import family_names

    assert seen == set(family_names())


@pytest.mark.slow  # the shuffled spec is re-planned ten times (about 40 s on 2 busy cores)
def test_what_ifs_are_the_familys_own_plans():
    """10x fewer users and half the budget are the family's plans of the changed spec, read, not computed."""
    from ldpplan.planner.families import family_of_plan
    from ldpplan.planner.reporting.whatif import curves

    plan = _family_helpers.file_plan(SHUFFLE_SPEC)
    fam = family_of_plan(plan)
    lines = curves(fam, plan, fam.report_facts(plan))
    spec = copy.deepcopy(plan["spec"])
    fewer = api.make_plan({**spec, "users": spec["users"] // 10, "shuffle": {**spec["shuffle"], "n": spec["users"] // 10}})
    half = api.make_plan({**spec, "target": {"central_epsilon": spec["target"]["central_epsilon"] / 2}})
    assert float(lines.fewer_users.error.value) == fewer["predicted"]["l2_loss_total"]["value"]
    assert float(lines.fewer_users.central_epsilon.value) == fewer["guarantee"]["shuffled"]["epsilon"]
    assert float(lines.half_budget.error.value) == half["predicted"]["l2_loss_total"]["value"]
    assert float(lines.half_budget.central_epsilon.value) == half["guarantee"]["shuffled"]["epsilon"] <= 0.5
    assert [p.factor for p in lines.by_epsilon] == [0.25, 0.5, 1.0, 2.0, 4.0] and not lines.notes
    # a family whose spec cannot say the change: the what-if is left out with the reason
    health = api.make_plan(api.example_spec("health"))
    fam = family_of_plan(health)
    lines = curves(fam, health, fam.report_facts(health))
    assert lines.fewer_users is None and lines.scaled and len(lines.by_users) == 6
    assert float(lines.half_budget.epsilon.value) == pytest.approx(health["guarantee"]["epsilon"] / 2, rel=1e-9)
