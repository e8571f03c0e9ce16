# ruff: noqa: RUF001  # the remarks and sentences it checks, quoted with their own punctuation
"""What a reader reads first: the README's first screen, one place for instructors and one for
contributors, and no sentence about the machine a text happened to be written on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FIRST_SCREEN = 40  # lines of the Chinese half a reader sees before scrolling
READING_ORDER = ["00", "01", "02", "03", "04", "05", "06", "07", "90"]


def halves() -> tuple[str, str]:
    chinese, english = README.read_text(encoding="utf-8").split("\n---\n", 1)
    return chinese, english


def notebook_order(text: str) -> list[str]:
    return re.findall(r"^\| `(\d\d)_\w+` \|", text, re.M)


def test_the_first_screen_holds_what_the_kit_is_the_two_commands_and_the_order() -> None:
    chinese, _ = halves()
    screen = "\n".join(chinese.splitlines()[:FIRST_SCREEN])
    assert "《第34章 让记忆续上——Session》" in screen and "mini_agent/session.py" in screen
    assert "python kit.py lab" in screen and "python kit.py test" in screen
    assert (
        "python kit.py test --quick" in screen and "很多分钟" in screen
    )  # a first test, and the full one's cost
    assert notebook_order(screen) == READING_ORDER
    assert "docs/INSTRUCTOR.md" in screen and "CONTRIBUTING.md" in screen
    for word in ("投影", "RISE", "nbval", "GBK", "CI", "853", "ipywidgets", "locale"):
        assert word not in screen, f"{word!r}: instructor or contributor matter on the first screen"


def test_the_english_half_mirrors_the_chinese_one() -> None:
    chinese, english = halves()
    assert notebook_order(english) == notebook_order(chinese) == READING_ORDER
    assert len(re.findall(r"^## ", english, re.M)) == len(re.findall(r"^## ", chinese, re.M))
    assert "python kit.py lab" in english and "docs/INSTRUCTOR.md" in english


def test_instructors_and_contributors_each_have_their_one_place() -> None:
    instructor = (ROOT / "docs" / "INSTRUCTOR.md").read_text(encoding="utf-8")
    for fact in (
        "95_instructor.ipynb",
        "150%",
        "RISE",
        "Ctrl+Enter",
        "python kit.py site",
        "_site/",
    ):
        assert fact in instructor, fact
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for fact in (
        "--strict",
        "python3 kit.py system",
        "warn_default_encoding",
        "test_gbk_locale.py",
    ):
        assert fact in contributing, fact
    for fact in ("`reader`", "python kit.py regenerate", "python kit.py bench"):
        assert fact in contributing, fact


# Remarks about the machine a text was written on: "这台双核机器", "这里连不上 GitHub", "untried here".
# "这里" alone is ordinary Chinese (老z: "这里的直觉是…"), so only these turns are refused.
MACHINE_REMARKS = re.compile(
    r"这台"
    r"|这里(?:连不上|没有?试过|试过|测过|量过|跑过)"
    r"|本机(?:上)?(?:测|量|试|跑)"
    r"|\bthis (?:\d-core )?machine\b"
    r"|\b(?:from|untried|untested|measured|tried|tested) here\b"
    r"|\bhere on this\b",
    re.I,
)


def reader_facing() -> list[tuple[str, str]]:
    """(where, text) for every text a reader or an instructor reads."""
    pages = [README, ROOT / "CONTRIBUTING.md", ROOT / "docs" / "INSTRUCTOR.md"]
    pages += [ROOT / "docs" / "NOTEBOOKS.md", ROOT / "notebooks" / "cheatsheet.md"]
    found = [(page.name, page.read_text(encoding="utf-8")) for page in pages]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            texts = ["".join(cell["source"])]
            for output in cell.get("outputs", []):
                texts.append("".join(output.get("text", "")))
                texts.append("".join(output.get("data", {}).get("text/plain", "")))
            found += [(f"{path.name} cell {number}", text) for text in texts]
    for module in ("text.py", "acceptance.py", "extras.py"):
        source = ROOT / "teaching" / module
        found.append((f"teaching/{module}", source.read_text(encoding="utf-8")))
    return found


def test_no_reader_facing_text_speaks_of_the_machine_it_was_written_on() -> None:
    remarks = [
        f"{where}: {hit.group(0)!r}"
        for where, text in reader_facing()
        for hit in MACHINE_REMARKS.finditer(text)
    ]
    assert remarks == []


@pytest.mark.parametrize(
    "remark",
    [
        "在这台双核机器上约 10–14 秒",
        "（这里连不上 GitHub）",
        "Ubuntu 的 chromium 是 snap 包，这里没有试过",
        "on this 2-core machine",
        "it has not run on real Windows from here",
        "Ubuntu ships chromium as a snap, untried here",
    ],
)
def test_the_guard_catches_the_remarks_it_is_for(remark: str) -> None:
    assert MACHINE_REMARKS.search(remark)


@pytest.mark.parametrize(
    "ordinary",
    ["这里的直觉是‘把一次工具往返当作一张收据’", "这里依次看：估算、正常路径", "本机的 llama.cpp"],
)
def test_the_guard_lets_ordinary_chinese_through(ordinary: str) -> None:
    assert not MACHINE_REMARKS.search(ordinary)
