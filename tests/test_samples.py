"""teaching/samples.py: the sessions the notebooks and the explorers start from."""

from __future__ import annotations

from pathlib import Path

from mini_agent import ToolMessage, context_units, load_session
from teaching.samples import chapter_picture, sample_session, sample_session_text
from teaching.trace import label


def test_sample_session_has_every_shape_the_trimmer_treats_differently() -> None:
    messages = sample_session()
    units = context_units(messages)
    sizes = [len(unit) for unit in units]
    assert sizes == [1, 2, 1, 1, 3, 1, 1, 1, 3, 1]
    orphans = [u for u in units if len(u) == 1 and isinstance(u[0], ToolMessage)]
    assert orphans == [[ToolMessage("lost-1", "上次运行中断时留下的结果：tests passed")]]
    assert any(isinstance(m, ToolMessage) and m.is_error for m in messages)
    assert any(m.content.isascii() for m in messages)
    assert any(not m.content.isascii() for m in messages)


def test_sample_session_text_loads_back_as_the_sample(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(sample_session_text(), encoding="utf-8")
    assert load_session(path) == sample_session()


def test_chapter_picture_is_one_user_unit_and_one_two_tool_unit() -> None:
    units = context_units(chapter_picture())
    assert [[label(m) for m in unit] for unit in units] == [
        ["user"],
        ["assistant(a,b)", "tool a", "tool b"],
    ]
