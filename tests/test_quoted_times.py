"""Every time the guides quote is one the tests measured: `docs/timings.json` as committed
(tests/timings.py: a run that measures anew rewrites the working copy; commit it with the quotes).

The guides are README.md, site/README.md, the site's first page (site/index.html), 00 and 95
(and docs/INSTRUCTOR.md when there is one). Each duration in them (a number, or a range, of
秒/分钟/s/min) is either a quote of a measured quantity, listed in QUOTES, or a plan or a
setting that no test measures, listed in NOT_MEASURED with the reason. A quoted number must
lie in the quantity's last measured range, rounded outwards to whole seconds: a guide that
says "6 to 9 秒" (written with an en dash) passes while the last full run measured, say,
5.6 to 9.0 s.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from .timings import QUANTITIES, TIMINGS, read_committed

ROOT = Path(__file__).resolve().parent.parent
GUIDES = ("README.md", "site/README.md", "site/index.html", "notebooks/00_guide.ipynb",
          "notebooks/95_instructor.ipynb", "docs/INSTRUCTOR.md")  # fmt: skip
NUMBER = r"\d+(?:\.\d+)?"
DASH = "\u2013"  # the en dash the guides write ranges with
DURATION = re.compile(rf"{NUMBER}(?:\s*[{DASH}-]\s*{NUMBER})?\s*(?:秒|分钟|s\b|min\b)")


@dataclass(frozen=True)
class Quote:
    pattern: str  # a regex whose group "t" holds the quoted number or range, with its unit
    quantity: str  # "" when the pattern's group "q" names it


# The sentences that quote a measured time, in whichever guide they stand (text moves between
# README.md and docs/INSTRUCTOR.md; the sentence keeps its words).
QUOTES = (
    Quote(r"第一次约 (?P<t>\S+ 秒)", "site_build_first"),
    Quote(r"takes about (?P<t>\S+ s) the\s+first time", "site_build_first"),
    Quote(r"从点链接到内核空闲约 (?P<t>\S+ 秒)", "site_link"),
    Quote(r"在双核的电脑上要 (?P<t>\S+ 秒)", "site_link"),
    Quote(r"about (?P<t>\S+ s) from the\s+link to an idle\s+kernel", "site_link"),
    Quote(r"再开一本，?约 (?P<t>\S+ 秒)", "site_lab_later"),
    Quote(r"第一本要等页面和 Python 一起启动，\s*在双核的电脑上约 (?P<t>\S+ 秒)", "site_lab_first"),
    Quote(r"第一本约 (?P<t>\S+ 秒)", "site_lab_first"),
    Quote(r"its first notebook is ready in\s+about (?P<t>\S+ s)", "site_lab_first"),
    Quote(r"(?P<t>\S+ s) for a\s+notebook opened inside", "site_lab_later"),
    # a quantity named as the timings file names it: "`site_pyodide`: 4 to 6 s", en dash
    Quote(r"`(?P<q>[a-z_]+)`: (?P<t>[\d.\u2013]+ s)", ""),
)

# Durations in the guides that are not measurements, and why.
NOT_MEASURED = (
    # 95's lesson plan: the minutes given to the lesson, its stops, the checklist, a buffer
    r"45 分钟|前五站 40 分钟|（\d+ 分钟|这 5 分钟|\(10 minutes\)|45-minute",
    # the chat command's defaults: settings, not measurements
    r"默认 60 秒|默认 600 秒|\(60 s\)|\(600 s\)",
)


def guide_text(guide: str) -> str:
    path = ROOT / guide
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        return "\n".join("".join(cell["source"]) for cell in cells)
    return path.read_text(encoding="utf-8")


def present() -> list[str]:
    return [guide for guide in GUIDES if (ROOT / guide).exists()]


def numbers(quoted: str) -> list[float]:
    return [float(n) for n in re.findall(NUMBER, quoted)]


def in_range(value: float, low: float, high: float) -> bool:
    return math.floor(low) <= value <= math.ceil(high)


def test_the_range_check_rounds_outwards_only_to_whole_seconds() -> None:
    assert in_range(6, 5.6, 9.0) and in_range(9, 5.6, 9.0) and in_range(5, 5.6, 9.0)
    assert not in_range(10, 5.6, 9.0) and not in_range(4, 5.6, 9.0)
    assert numbers(f"6{DASH}9 秒") == [6, 9] and numbers("~1.2 s") == [1.2]


def test_the_timings_file_holds_every_quoted_quantity() -> None:
    timings = read_committed()["quantities"]
    texts = "\n".join(guide_text(guide) for guide in present())
    named = {m.group("q") for q in QUOTES if not q.quantity for m in re.finditer(q.pattern, texts)}
    for quantity in {q.quantity for q in QUOTES if q.quantity} | named:
        assert quantity in QUANTITIES, quantity
        assert quantity in timings, f"{quantity} was never measured ({TIMINGS})"
        entry = timings[quantity]
        assert entry["min"] <= entry["max"] and entry["samples"], quantity


def test_each_quoting_sentence_is_in_a_guide() -> None:
    texts = "\n".join(guide_text(guide) for guide in present())
    assert [q.pattern for q in QUOTES if not re.search(q.pattern, texts)] == []


@pytest.mark.parametrize("guide", present())
def test_every_time_a_guide_quotes_is_in_the_last_measured_range(guide: str) -> None:
    text, timings = guide_text(guide), read_committed()["quantities"]
    accounted: list[tuple[int, int]] = []
    problems = []
    for quote in QUOTES:
        for match in re.finditer(quote.pattern, text):
            accounted.append(match.span("t"))
            quantity = quote.quantity or match.group("q")
            entry = timings[quantity]
            for value in numbers(match.group("t")):
                if not in_range(value, entry["min"], entry["max"]):
                    problems.append(
                        f"{guide}: {match.group(0)!r} quotes {value:g} s, but the last run"
                        f" measured {quantity} at {entry['min']}{DASH}{entry['max']} s"
                        f" ({entry['run']}); update the quote from {TIMINGS.name}"
                    )
    for pattern in NOT_MEASURED:
        accounted += [match.span() for match in re.finditer(pattern, text)]
    for match in DURATION.finditer(text):
        if not any(start <= match.start() and match.end() <= end for start, end in accounted):
            context = text[max(0, match.start() - 40) : match.end() + 10].replace("\n", " ")
            problems.append(f"{guide}: a time no test measures: …{context}…")
    assert problems == []
