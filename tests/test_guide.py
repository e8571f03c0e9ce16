"""The guide notebook maps every section of the chapter to the notebook that teaches it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parent.parent / "notebooks" / "00_guide.ipynb"

CHAPTER_SECTIONS = [
    "JSONL 的判别式读取",
    "写入与恢复的正常路径",
    "损坏记录的错误路径",
    "上下文单元而不是消息切片",
    "单位构造的逐步过程",
    "字符预算的正常和失败路径",
    "会话与上下文的责任边界",
    "设计代价与走查",
    "正常和失败序列",
    "小结",
    "阶段验收",
]


def map_rows() -> list[str]:
    cells = json.loads(GUIDE.read_text(encoding="utf-8"))["cells"]
    text = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    return [line for line in text.splitlines() if line.startswith("| ")]


@pytest.mark.parametrize("section", CHAPTER_SECTIONS)
def test_guide_maps_every_chapter_section_to_a_notebook(section: str) -> None:
    rows = [row for row in map_rows() if row.startswith(f"| {section} |")]
    assert len(rows) == 1, f"no row for {section} in the guide's map"
    notebook = rows[0].split("|")[2].strip().lstrip("[")
    assert notebook[:2].isdigit(), rows[0]


def test_the_guide_links_only_to_notebooks_that_exist() -> None:
    for row in map_rows():
        if "](" in row:
            target = row.split("](")[1].split(")")[0]
            assert (GUIDE.parent / target).exists(), target


CHEATSHEET = GUIDE.parent / "cheatsheet.md"


def test_the_guide_links_the_instructor_path_and_the_cheat_sheet() -> None:
    links = "\n".join(map_rows())
    assert "](95_instructor.ipynb)" in links and "](cheatsheet.md)" in links


def test_the_cheat_sheet_quotes_every_error_phrase_exactly() -> None:
    from mini_agent.context import EMPTY_CONTEXT, SMALLEST_UNIT_TOO_BIG
    from mini_agent.session import INVALID_JSON, INVALID_RECORD

    text = CHEATSHEET.read_text(encoding="utf-8")
    for phrase in (
        f"{INVALID_JSON} N",
        f"{INVALID_RECORD} N",
        SMALLEST_UNIT_TOO_BIG,
        EMPTY_CONTEXT,
    ):
        assert f"`{phrase}`" in text, phrase
    assert "`unknown tool: NAME`" in text


def test_every_python_name_in_the_cheat_sheet_exists() -> None:
    import re

    import mini_agent
    from mini_agent import session

    text = CHEATSHEET.read_text(encoding="utf-8")
    table = text.split("## TypeScript → Python 名字对照")[1].split("\n## ")[0]
    rows = [row.replace("\\|", "") for row in table.splitlines() if row.startswith("| `")]
    python_side = [row.split("|")[2] for row in rows]
    names = {name for cell in python_side for name in re.findall(r"`([a-z_]+)\(", cell)}
    assert names >= {"parse_session_message", "load_session", "append_session", "trim_context"}
    for name in names - {"record", "calls"}:
        assert hasattr(mini_agent, name), name
    for name in ("record", "calls"):  # the chapter's narrowing helpers, in session.py
        assert name in names and callable(getattr(session, name))
    assert "mini_agent/session.py" in text  # where the chapter's code is


def test_the_cheat_sheet_says_session_calls_is_a_type_guard() -> None:
    from mini_agent.session import calls

    text = CHEATSHEET.read_text(encoding="utf-8")
    assert "`TypeGuard`，返回 `True`/`False`" in text
    assert calls([]) is True and calls({}) is False
    assert calls([{"id": "a", "name": "n", "input": None}]) is True
    assert calls([{"id": "a"}]) is False
