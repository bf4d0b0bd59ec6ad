"""The trust model and the hazards of the report, read from ``docs/SECURITY.md`` itself.

``docs/SECURITY.md`` marks the passages the report shows with HTML comments
(``<!-- report:NAME -->`` ... ``<!-- /report:NAME -->``, invisible where the page is rendered);
this module cuts them out and renders them (markdown-it, CommonMark plus tables; links, images and
raw HTML disabled, so the report references nothing outside itself). The report and the security
page therefore never disagree: there is one text. ``planner/reporting/SECURITY.md`` is a symbolic
link to it (a wheel carries the file's content as package data).
"""
from __future__ import annotations

import re
from pathlib import Path

__all__ = ["SECTIONS", "security_text", "sections"]

#: the marked passages the report needs, in page order
SECTIONS = ("trust", "pinning", "hazards", "generator")
_MARK = re.compile(r"<!-- report:([a-z]+) -->\n(.*?)\n<!-- /report:\1 -->", re.S)


def security_text() -> str:
    """The text of ``docs/SECURITY.md`` (through the package's link to it)."""
    return Path(__file__).with_name("SECURITY.md").read_text(encoding="utf-8")


def sections(text: str | None = None) -> dict[str, str]:
    """The marked passages of ``docs/SECURITY.md``, each rendered to HTML: name -> HTML.

    Raises
    ------
    ValueError
        A passage of :data:`SECTIONS` is not marked (the page and the report would disagree).
    """
    from markdown_it import MarkdownIt  # deferred: markdown_it

    found = {name: body for name, body in _MARK.findall(security_text() if text is None else text)}
    missing = [name for name in SECTIONS if name not in found]
    if missing:
        raise ValueError(f"docs/SECURITY.md: the report's passages {missing} are not marked "
                         "(<!-- report:NAME --> ... <!-- /report:NAME -->)")
    md = MarkdownIt("commonmark", {"html": False}).enable("table").disable(["link", "image", "autolink"])
    out = {}
    for name in SECTIONS:  # header cells name their column; a wide table scrolls inside its own box
        html = md.render(found[name]).replace("<th>", '<th scope="col">')
        out[name] = html.replace("<table>", '<div class="wide" tabindex="0"><table>').replace("</table>", "</table></div>")
    return out
