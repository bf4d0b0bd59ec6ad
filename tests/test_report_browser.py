"""The plan report in a real browser (issue 31): headless Chromium loads each example's report.

Checks, at 1280 and 390 CSS pixels wide: no console error and no page error; no network request
but the file itself; no horizontal overflow (``document.documentElement.scrollWidth`` at most the
viewport); non-empty screenshots; the page reads the same with JavaScript off and prints to PDF.

The browser is the system Chromium (Debian's ``chromium``; ``.ci/run`` installs it), driven by
playwright (``executable_path``: playwright never downloads a browser here). Where no Chromium is
installed the tests skip with a loud message. ``LDPPLAN_REPORT_SCREENSHOTS=DIR`` also writes the
screenshots of the health and shuffle reports to ``DIR`` (``docs/report-*.png`` come from there).
"""
from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest

import _family_helpers
from ldpplan.planner import api
from ldpplan.planner.families import all_examples

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
WIDTHS = (1280, 390)
NO_BROWSER = ("\n" + "!" * 78 + "\n!!! BROWSER TESTS SKIPPED: no Chromium found (apt-get install -y chromium, or set "
              "LDPPLAN_CHROMIUM)\n!!! the HTML report was NOT checked in a browser\n" + "!" * 78)


def _chromium() -> str | None:
    for name in (os.environ.get("LDPPLAN_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name) if name else None
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def browser():
    executable = _chromium()
    if executable is None:
        pytest.skip(NO_BROWSER)
    sync_api = pytest.importorskip("playwright.sync_api", reason=NO_BROWSER + "\n(playwright is not installed)")
    with sync_api.sync_playwright() as play:
        chromium = play.chromium.launch(executable_path=executable, args=["--no-sandbox", "--disable-gpu"])
        yield chromium
        chromium.close()


def _cases():
    cases = [pytest.param(*c.values, id=c.id) for c in _family_helpers.family_cases()]
    return cases + [pytest.param(None, "shuffle-rr", id="shuffle-rr")]


def _page(fam, name, request) -> str:
    """The example's report page, rendered once per session (shared with tests/test_report.py)."""
    if fam is None:
        return _family_helpers.report_page(name, _family_helpers.file_plan(ROOT / "examples" / f"{name}.toml"))
    return _family_helpers.report_page((fam.name, name), _family_helpers.example_plan(fam, name, request))


def _non_empty(png: bytes, width: int) -> None:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    assert image.size[0] == width and image.size[1] > 300
    low, high = image.getextrema()
    assert high - low > 100  # text on a background, not a blank page
    assert len(image.histogram()) and sum(1 for c in image.histogram() if c) > 20


@pytest.mark.parametrize("fam,name", _cases())
def test_report_loads_cleanly_at_desktop_and_phone_widths(fam, name, request, browser, tmp_path):
    path = tmp_path / f"{name}.html"
    path.write_text(_page(fam, name, request), encoding="utf-8")
    url = path.as_uri()
    shots = os.environ.get("LDPPLAN_REPORT_SCREENSHOTS")
    for width in WIDTHS:
        page = browser.new_page(viewport={"width": width, "height": 900})
        problems, requests = [], []
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning")
                else None)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(url, wait_until="load")
        assert problems == [], problems
        assert requests == [url], requests
        scroll = page.evaluate("document.documentElement.scrollWidth")
        assert scroll <= width, f"horizontal overflow at {width} px: scrollWidth {scroll}"
        # accessibility in the rendered DOM: header cells scoped, figures labelled, one h1
        assert page.evaluate("document.querySelectorAll('th:not([scope])').length") == 0
        assert page.evaluate("[...document.querySelectorAll('svg')].every(s => s.getAttribute('role') === 'img' "
                             "&& s.querySelector('title') && s.querySelector('desc'))")
        assert page.evaluate("document.querySelectorAll('h1').length") == 1
        _non_empty(page.screenshot(full_page=True), width)
        if shots and name in ("health", "shuffle-rr"):
            Path(shots).mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(shots) / f"report-{name.split('-')[0]}-{width}.png"), full_page=True,
                            clip={"x": 0, "y": 0, "width": width, "height": 2000 if width > 400 else 1800})
        page.close()


def test_report_reads_the_same_without_javascript_and_prints(browser, request, tmp_path):
    fam = all_examples()["health"][0]
    plan = _family_helpers.example_plan(fam, "health", request)
    path = tmp_path / "health.html"
    path.write_text(_family_helpers.report_page((fam.name, "health"), plan), encoding="utf-8")
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 900})
    page = context.new_page()
    page.goto(path.as_uri())
    text = page.inner_text("body")
    assert api.fingerprint(plan) in text and "What it does not protect against" in text
    assert page.evaluate is not None and page.locator("svg[role=img]").count() == 2
    page.emulate_media(media="print")
    pdf = page.pdf(format="A4")
    assert pdf.startswith(b"%PDF") and len(pdf) > 20_000
    context.close()
