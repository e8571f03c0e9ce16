"""The cheat sheet prints on one A4 page: rendered from its Markdown and printed to PDF by the
system Chromium (through Playwright), the way a reader prints a page from the browser.

The print style is a plain one for a cheat sheet (10 pt text, 12 mm margins, A4); the test
counts the PDF's pages, and checks that the kit's extras take at most two printed lines.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .helpers import CHROMIUM, CHROMIUM_FLAGS

ROOT = Path(__file__).resolve().parent.parent
CHEATSHEET = ROOT / "notebooks" / "cheatsheet.md"
EXTRAS = "本包比本章多做的"

PRINT_STYLE = """
@page { size: A4; margin: 12mm; }
body { font-family: "Noto Sans CJK SC", "Noto Sans SC", "PingFang SC", "Microsoft YaHei",
       sans-serif; font-size: 10pt; line-height: 1.35; margin: 0; }
h1 { font-size: 14pt; margin: 0 0 4pt; }
h2 { font-size: 11pt; margin: 7pt 0 3pt; }
p { margin: 3pt 0; }
pre, code { font-family: "Noto Sans Mono CJK SC", "DejaVu Sans Mono", monospace; font-size: 8.5pt; }
pre { margin: 3pt 0; line-height: 1.25; white-space: pre-wrap; }
table { border-collapse: collapse; font-size: 9pt; }
th, td { border: 1px solid #999; padding: 1pt 4pt; text-align: left; vertical-align: top; }
"""


def cheatsheet_html() -> str:
    mistune = pytest.importorskip(
        "mistune", reason="mistune renders the Markdown (nbconvert has it)"
    )
    markdown = mistune.create_markdown(plugins=["table"])
    body = markdown(CHEATSHEET.read_text(encoding="utf-8"))
    return f"<!doctype html><html lang='zh-CN'><meta charset='utf-8'><style>{PRINT_STYLE}</style><body>{body}</body></html>"


def pdf_pages(pdf: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", pdf))


def test_the_page_counter_counts_pages() -> None:
    assert pdf_pages(b"<< /Type /Pages /Count 2 >> << /Type /Page >> << /Type/Page >>") == 2


@pytest.fixture(scope="module")
def printed() -> tuple[bytes, float]:
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: install Debian's Chromium (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright drives Chromium")
    html = cheatsheet_html()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page()
            page.set_content(html)
            page.emulate_media(media="print")
            pdf = page.pdf(format="A4", prefer_css_page_size=True, print_background=True)
            extras_lines = page.evaluate(
                """(heading) => {
                    const h = [...document.querySelectorAll('h2')]
                        .find((e) => e.textContent.includes(heading));
                    const p = h.nextElementSibling;
                    const lineHeight = parseFloat(getComputedStyle(p).lineHeight);
                    return p.getBoundingClientRect().height / lineHeight;
                }""",
                EXTRAS,
            )
        finally:
            browser.close()
    return pdf, float(extras_lines)


def test_the_cheat_sheet_prints_on_one_a4_page(printed: tuple[bytes, float]) -> None:
    pdf, _ = printed
    assert pdf.startswith(b"%PDF")
    assert pdf_pages(pdf) == 1


def test_the_kits_extras_take_at_most_two_printed_lines(printed: tuple[bytes, float]) -> None:
    _, lines = printed
    assert 0.5 < lines <= 2.05, lines


def test_the_cheat_sheet_covers_the_chapter_first() -> None:
    text = CHEATSHEET.read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[-1].startswith(EXTRAS)  # the kit's extras come last, after the chapter
    for name in ("parseSessionMessage", "calls(", "loadSession", "appendSession", "trimContext"):
        assert name in text, name
    assert "算法一" in text and "算法二" in text
    for internal in ("MAX_DEPTH", "json_form", "store", "durable", "fcntl", "flock"):
        assert internal not in text, internal
