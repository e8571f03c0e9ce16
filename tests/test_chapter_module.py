"""The chapter's quotes (teaching/book.py) are the chapter's bytes; the notebooks' helpers
around them (source views, shown errors, injected mistakes) do what the notebooks say."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mini_agent import (
    AssistantMessage,
    Message,
    SessionFormatError,
    ToolCall,
    ToolMessage,
    UserMessage,
    agent,
    context,
    context_units,
    load_session,
    parse_session_message,
    session,
    store,
)
from teaching import book, mistakes
from teaching.errors import NoErrorRaised, show_error
from teaching.source import CHAPTER_FILES, FROM_THE_CHAPTER, MIN_COLUMN, show_source, source_of
from teaching.text import words
from teaching.unprivileged import run_unprivileged
from tests.chapter_reference import context_units as literal_units

from .platforms import FORK_AND_SETUID, posix_only

ROOT = Path(__file__).resolve().parent.parent
# The chapter is the book's text, not part of the kit: checked against it where it is present
# (CHAPTER_34_TEXT or the authors' shared folder), and always against the SHA-256 digests
# taken from the chapter's text when the quotes were made (chapter_quotes.sha256.json).
CHAPTER = Path(os.environ.get("CHAPTER_34_TEXT", "/work/shared/seed/chapter-34-session.txt"))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def quoted_items() -> list[tuple[str, str]]:
    excerpts = [(name, getattr(book, name).text) for name in book.__dict__ if _is(name)]
    tables = [
        (f"{name} line {i}", line)
        for name, table in vars(book).items()
        if isinstance(table, book.ChapterTable)
        for i, line in enumerate(table.lines())
    ]
    tests = [(f"test {t.chapter_says}", t.chapter_says) for t in book.CHAPTER_TESTS]
    return excerpts + tables + tests


def _is(name: str) -> bool:
    return isinstance(getattr(book, name), book.Excerpt)


DIGESTS_FILE = Path(__file__).with_name("chapter_quotes.sha256.json")


@pytest.mark.parametrize(("name", "text"), quoted_items(), ids=lambda value: str(value)[:40])
def test_every_quote_is_the_chapters_text_byte_for_byte(name: str, text: str) -> None:
    digests = json.loads(DIGESTS_FILE.read_text(encoding="utf-8"))
    assert digests[name] == digest(text), f"{name} differs from the chapter as first quoted"
    if CHAPTER.exists():
        assert CHAPTER.read_text(encoding="utf-8").count(text) >= 1


# A quotation of the chapter in the notebooks' prose: a blockquote line, or “…” / 「…」 right
# after a speaker (本章说、本章接着说、本章的原话、本章“、老z、小a 问、本章图里的 …) or opening a
# paragraph (after a blank line). Elsewhere a quoted phrase is the kit's own term
# (“照搬本章的 Python”). `……` marks an omission; backticks, bold and spacing are the
# notebook's typography, not the chapter's.
SPEAKER = re.compile(
    r"(?:(?:本章|老z|小a|正文)[^“”「」。\n]{0,10}?(?:说|问|原话\**|图里的|一步是|提醒|分工是)"
    r"|本章|老z|小a|^|\n\n)[ \t]*[：:]?[ \t]*$"  # a paragraph's start, not a wrapped line's
)
QUOTING = sorted((ROOT / "notebooks").glob("[0-9][0-9]*.ipynb"))  # every notebook


def chapter_quotations(text: str) -> list[str]:
    found, opened = [], []
    for at, char in enumerate(text):
        if char in "“「":
            opened.append(at)
        elif char in "”」" and opened:
            start = opened.pop()
            if not opened and SPEAKER.search(text[:start]):
                found.append(text[start + 1 : at])
    return found + [line[2:] for line in text.split("\n") if line.startswith("> ")]


def typeset_away(text: str) -> str:
    return re.sub(r"\s+", "", text.replace("`", "").replace("*", ""))


def misquoted(quotation: str, chapter: str) -> list[str]:
    """The pieces of `quotation` (between its `……`) that the chapter does not hold."""
    return [
        piece
        for piece in quotation.split("……")
        if typeset_away(piece) and typeset_away(piece) not in chapter
    ]


def test_the_quotation_finder_tells_a_quotation_from_a_term() -> None:
    text = "代码标题里的“照搬本章的 Python”。本章说：“先查公共前提”。\n\n“宁可失败，不装傻。”"
    assert chapter_quotations(text) == ["先查公共前提", "宁可失败，不装傻。"]
    chapter = typeset_away("宁可失败，不装傻。先查公共前提（对象）")
    assert misquoted("先查公共前提", chapter) == []
    assert misquoted("先查对象", chapter) == ["先查对象"]  # a paraphrase in quotation marks
    assert misquoted("宁可失败……先查公共前提", chapter) == []  # an omission, marked


def test_every_quotation_of_the_chapter_in_01_to_07a_is_its_text() -> None:
    quotations = [
        (f"{path.name} cell {index}", quotation)
        for path in QUOTING
        for index, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"])
        if cell["cell_type"] == "markdown"
        for quotation in chapter_quotations("".join(cell["source"]))
    ]
    assert len(quotations) > 40  # the finder still finds them
    if CHAPTER.exists():
        chapter = typeset_away(CHAPTER.read_text(encoding="utf-8"))
        wrong = [(where, q) for where, q in quotations if misquoted(q, chapter)]
        assert wrong == [], (
            "quote the chapter exactly, mark an omission with ……, or drop the quotes"
        )


def test_06_quotes_the_chapters_opening_dialogue_where_it_keeps_support_and_delivery_apart() -> (
    None
):
    cells = json.loads((ROOT / "notebooks" / "06_session_vs_context.ipynb").read_text("utf-8"))
    found = [
        quotation
        for cell in cells["cells"]
        if cell["cell_type"] == "markdown"
        for quotation in chapter_quotations("".join(cell["source"]))
    ]  # each held to the chapter's text by the test above
    assert "小a：“那这算不算‘已经交付了’？”" in found  # noqa: RUF001 -- the chapter's own quotes
    assert any("把‘函数支持’写成‘CLI 已交付’会混淆装配事实。”老z说" in q for q in found)  # noqa: RUF001
    assert any("“函数支持”和“CLI 已交付”是两件不同的事" in q for q in found)


def test_every_excerpt_and_table_is_listed_once() -> None:
    excerpts = [v for v in vars(book).values() if isinstance(v, book.Excerpt)]
    tables = [v for v in vars(book).values() if isinstance(v, book.ChapterTable)]
    assert list(book.EXCERPTS) == excerpts
    assert list(book.TABLES) == tables
    assert len(tables) == 7


def test_the_chapter_tests_map_to_pytest_ids_that_exist() -> None:
    source = (ROOT / "tests" / "test_chapter_cases.py").read_text(encoding="utf-8")
    ids = [pytest_id for test in book.CHAPTER_TESTS for pytest_id in test.pytest_ids]
    assert len(ids) == len(set(ids))
    for pytest_id in ids:
        function = pytest_id.split("::")[1].split("[")[0]
        assert f"def {function}(" in source, pytest_id
        if "[" in pytest_id:
            assert f'"{pytest_id.split("[")[1].rstrip("]")}"' in source, pytest_id
    functions = set(re.findall(r"^def (test_\w+)", source, re.M))
    mapped = {pytest_id.split("::")[1].split("[")[0] for pytest_id in ids}
    assert functions == mapped, "every chapter case is shown in 07's acceptance table"


def test_beside_adds_one_column_and_refuses_a_wrong_count() -> None:
    table = book.GUARANTEES.beside("本包", ["a", "b", "c"])
    assert list(table.columns) == ["机制", "当前保证", "未保证", "本包"]
    assert [row[-1] for row in table.rows] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="3 rows, but 2 cells"):
        book.GUARANTEES.beside("本包", ["a", "b"])


def test_source_view_shows_the_chapter_first_and_its_python_beside_it() -> None:
    view = show_source(book.CALLS, session.calls, mistakes.parse_with_precondition_in_user_branch)
    text = repr(view)
    assert text.index("function calls(value: unknown)") < text.index("def calls(value: object)")
    titles = re.findall(r"^── (.+) ──$", text, re.M)
    assert titles == [
        "本章 src/session.ts：calls()",
        "本章的代码，写成 Python（mini_agent/session.py）：calls",
        "故意写错的版本（teaching/mistakes.py）：parse_with_precondition_in_user_branch",
    ]
    html = view._repr_html_()
    assert "display:grid" in html and "&quot;input&quot; in item" in html
    # panels of at least MIN_COLUMN columns side by side, each wrapping its long lines
    assert (
        f"minmax(min(100%,{MIN_COLUMN}ch),1fr)" in html and html.count("white-space:pre-wrap") == 3
    )


def test_a_folded_view_keeps_the_chapter_open_and_closes_the_python() -> None:
    view = show_source(book.CALLS, session.calls, folded=True)
    html = view._repr_html_()
    assert html.count("<details>") == 1  # the Python, not the chapter's
    chapter, python = html.split("<details>")
    assert "function calls(value: unknown)" in chapter and "def calls" not in chapter
    assert words().folded_twin in python and "def calls" in python
    assert repr(view) == repr(show_source(book.CALLS, session.calls))


EXERCISED = {  # the notebook, and the functions its exercises ask the reader to write
    "01_discriminated_parsing.ipynb": ("session.discriminate", "session.calls"),
    "03_corrupted_records.ipynb": ("session.load_session",),
    "04_context_units.ipynb": ("context.units_newest_first",),
    "05_character_budget.ipynb": ("context.trim_context",),
}


@pytest.mark.parametrize("name", EXERCISED)
def test_code_an_exercise_asks_for_is_folded_wherever_it_is_shown(name: str) -> None:
    book_cells = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
    calls = [
        line
        for cell in book_cells
        if cell["cell_type"] == "code"
        for line in "".join(cell["source"]).splitlines()
        if line.startswith(("show_source(", "display(show_source("))
    ]
    for function in EXERCISED[name]:
        shown = [line for line in calls if re.search(rf"[(,] ?{re.escape(function)}[,)]", line)]
        assert shown, f"{name} never shows {function}"
        assert all("folded=True" in line for line in shown), shown


def test_the_chapters_python_is_titled_by_what_the_chapter_gives_of_it() -> None:
    def title(function: Callable[..., Any]) -> str:
        titles: list[str] = re.findall(r"^── (.+) ──$", repr(show_source(function)), re.M)
        return titles[0]

    # code the chapter prints
    for printed in (session.calls, session.append_session, context.units_newest_first):
        assert title(printed).startswith("本章的代码，写成 Python（"), printed
    # what it only draws, or only says
    for drawn in (session.load_session, context.trim_context, agent.run_agent):
        assert title(drawn).startswith("照老z 的图写的 Python（"), drawn
    assert title(context.estimate_context_chars) == (
        "照本章文字写的 Python（mini_agent/context.py）：estimate_context_chars（分隔开销取每条 +1）"
    )
    # the package's own machinery, beyond the chapter's files
    assert title(store.append_line).startswith("本包的实现（mini_agent/store.py）")
    assert all(f.__module__ in CHAPTER_FILES for f in FROM_THE_CHAPTER)


def test_a_drawing_is_titled_as_lao_z_s_never_as_a_file() -> None:
    drawings = [e for e in book.EXCERPTS if e.source is None and not e.spoken]
    assert {excerpt.title for excerpt in drawings} == {
        "loadSession 整条链路",
        "反向扫描的过程",
        "装预算的算法",
        "一份状态进 runAgent 后走哪条路",
    }
    spoken = [e.title for e in book.EXCERPTS if e.spoken]
    assert spoken == ["estimateContextChars"]  # the chapter gives neither its code nor a drawing
    for excerpt in book.EXCERPTS:
        heading = repr(excerpt).split("\n", 1)[0]
        kind = (
            "── 老z 的话：" if excerpt.spoken else "── 老z 的图：" if excerpt.source is None else ""
        )
        assert heading.startswith(kind or "── 本章 src/")
        assert "agent.ts" not in heading and "（图）" not in heading  # files the chapter names


def test_source_of_a_nested_block_stops_at_its_end() -> None:
    record = source_of(agent.run_agent, part="def record")
    assert record.splitlines()[0] == "def record(message: Message) -> None:"
    assert "append_session(session_path, message, fsync=fsync)" in record
    assert "UserMessage(prompt)" not in record
    with pytest.raises(ValueError, match="0 blocks"):
        source_of(agent.run_agent, part="def nowhere")


def test_show_error_shows_the_expected_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"role":"user","content":"x"}\n{"role":"user"\n', encoding="utf-8")
    shown = show_error(lambda: load_session(path), SessionFormatError)
    assert repr(shown).startswith("SessionFormatError: invalid session JSON at line 2\n")
    assert "invalid session JSON at line 2" in shown._repr_html_()


@pytest.mark.parametrize(
    ("line", "phrase"),
    [('{"role":"user"', "invalid session JSON at line 2"),
     ('{"role":"assistant","content":"x"}', "invalid session record at line 2")],
)  # fmt: skip
def test_show_error_puts_the_chapters_phrase_alone_first_and_marks_the_kits_detail(
    tmp_path: Path, line: str, phrase: str
) -> None:
    # 本章的原话单独一行；本包补充的英文细节在下一行，标明是本包的，再下一行是释义
    path = tmp_path / "s.jsonl"
    path.write_text('{"role":"user","content":"x"}\n' + line + "\n", encoding="utf-8")
    shown = show_error(lambda: load_session(path), SessionFormatError)
    first, detail, meaning = repr(shown).split("\n")
    assert first == f"SessionFormatError: {phrase}"
    assert detail.startswith("  本包补充：") and detail.removeprefix("  本包补充：") in str(
        shown.error
    )
    assert meaning.startswith("  释义：第 2 行")
    html = shown._repr_html_()
    assert f"SessionFormatError: {phrase}\n  本包补充：" in html


def test_show_error_fails_loudly_without_an_error_or_with_another_one(tmp_path: Path) -> None:
    with pytest.raises(NoErrorRaised):
        show_error(lambda: load_session(tmp_path / "missing.jsonl"), SessionFormatError)
    with pytest.raises(IsADirectoryError):
        show_error(lambda: load_session(tmp_path), SessionFormatError)


DISCRIMINATION_ROWS = [
    '{"role":"user","content":"x"}',
    '{"role":"user","content":null}',
    '{"role":"assistant","content":"x","toolCalls":[]}',
    '{"role":"assistant","content":null,"toolCalls":[]}',
    '{"role":"assistant","toolCalls":[]}',
    '{"role":"tool","content":"ok","toolCallId":"a","isError":false}',
    '{"role":"tool","content":7,"toolCallId":"a","isError":false}',
    '{"role":"nope","content":"x"}',
]


def test_moving_the_precondition_breaks_exactly_the_rows_without_a_str_content() -> None:
    wrong = [
        line
        for line in DISCRIMINATION_ROWS
        if mistakes.parse_with_precondition_in_user_branch(json.loads(line))
        != parse_session_message(json.loads(line))
    ]
    assert wrong == [
        '{"role":"assistant","content":null,"toolCalls":[]}',
        '{"role":"assistant","toolCalls":[]}',
        '{"role":"tool","content":7,"toolCallId":"a","isError":false}',
    ]


def read(call_id: str) -> ToolCall:
    return ToolCall(call_id, "read", {"path": call_id})


CLEAN: list[Message] = [
    UserMessage("q"),
    AssistantMessage("", [read("a"), read("b")]),
    ToolMessage("a", "A"),
    ToolMessage("b", "B"),
    AssistantMessage("done"),
]


def test_the_injected_unit_mistakes_agree_with_the_chapter_on_clean_histories() -> None:
    assert mistakes.units_without_index_check(CLEAN) == literal_units(CLEAN)
    assert mistakes.units_off_by_one(CLEAN) == literal_units(CLEAN) == context_units(CLEAN)


def test_dropping_the_index_check_loses_an_orphan_or_swallows_history() -> None:
    orphan_last: list[Message] = [*CLEAN, ToolMessage("x", "orphan")]
    assert mistakes.units_without_index_check(orphan_last) == [[orphan_last[-1]]]
    orphan_inside: list[Message] = [
        UserMessage("q"),
        ToolMessage("x", "orphan"),
        UserMessage("next"),
    ]
    assert mistakes.units_without_index_check(orphan_inside) == [[], [orphan_inside[-1]]]
    assert context_units(orphan_inside) == [[m] for m in orphan_inside]


def test_the_off_by_one_splits_an_assistant_at_index_zero_from_its_result() -> None:
    history: list[Message] = [AssistantMessage("", [read("a")]), ToolMessage("a", "A")]
    assert mistakes.units_off_by_one(history) == [[history[0]], [history[1]]]
    assert context_units(history) == [history]


@posix_only(FORK_AND_SETUID)
def test_an_unprivileged_read_of_a_mode_000_file_really_fails() -> None:
    # under /tmp, not pytest's 0700 base folder: only the file's own mode may refuse the read
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o755)
        path = Path(folder) / "locked.jsonl"
        path.write_text('{"role":"user","content":"x"}\n', encoding="utf-8")
        path.chmod(0)
        shown = run_unprivileged(lambda: show_error(lambda: load_session(path), PermissionError))
        assert shown.startswith("PermissionError: [Errno 13] Permission denied")
        path.chmod(0o644)
        assert run_unprivileged(lambda: len(load_session(path))) == "1"


@posix_only(FORK_AND_SETUID)
def test_a_failure_in_the_unprivileged_action_is_not_swallowed() -> None:
    with pytest.raises((RuntimeError, NoErrorRaised), match=r"NoErrorRaised|应当报错"):
        run_unprivileged(lambda: show_error(lambda: 1, OSError))
