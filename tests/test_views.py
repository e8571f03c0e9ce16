"""views.py: what notebooks show, in plain text (what nbval compares) and HTML."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import escape
from pathlib import Path

import pytest

from mini_agent import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from teaching.style import palette, set_display
from teaching.trace import label
from teaching.views import (
    FileView,
    RunView,
    ScanView,
    SessionView,
    SideBySide,
    Table,
    TrimView,
    UnitsView,
    shorten,
)

from .helpers import multi_tool_history


def history() -> list[Message]:
    return [UserMessage("old question"), *multi_tool_history()]


def test_labels_name_calls_results_and_errors() -> None:
    user, assistant, tool_a, _ = multi_tool_history()
    assert [label(user), label(assistant), label(tool_a)] == ["user", "assistant(a,b)", "tool a"]
    assert label(ToolMessage("x", "boom", is_error=True)) == "tool x!"
    assert label(AssistantMessage("plain")) == "assistant"


def test_shorten_makes_control_characters_visible_and_clips() -> None:
    assert shorten("a\nb\tc\x00") == "a\\nb\\tc\\u0000"
    assert shorten("x" * 100, 10) == "x" * 9 + "…"
    assert shorten("中文😀") == "中文😀"


def test_session_view_lists_every_message() -> None:
    assert repr(SessionView(multi_tool_history())) == "\n".join(
        [
            "4 条消息，353 字符",
            "  [0] user             read two files",
            '  [1] assistant(a,b)   reading both → a:read({"path":"a.txt"}), b:read({"path":"b.txt"})',
            "  [2] tool a           contents of a",
            "  [3] tool b           contents of b",
        ]
    )


def test_session_view_lines_up_two_digit_indexes() -> None:
    rows = repr(SessionView([UserMessage(f"q{n}") for n in range(11)])).splitlines()
    assert rows[1] == "  [ 0] user             q0"
    assert rows[11] == "  [10] user             q10"


def test_a_long_label_widens_its_column_so_the_next_one_still_lines_up() -> None:
    both = [ToolCall("read-1", "read", {}), ToolCall("read-2", "read", {})]
    messages: list[Message] = [
        UserMessage("q"),
        AssistantMessage("x", both),
        ToolMessage("read-1", "a"),
        ToolMessage("read-2", "b", True),
    ]
    rows = repr(SessionView(messages)).splitlines()[1:]
    assert rows[1] == "  [1] assistant(read-1,read-2) x → read-1:read({}), read-2:read({})"
    start = len("  [1] assistant(read-1,read-2) ")  # every row's text starts there
    assert [row[start:] for row in rows[::2]] == ["q", "a"] and rows[3][start:] == "b"
    run = repr(RunView(messages, [messages])).splitlines()
    table = run[run.index(next(row for row in run if row.lstrip().startswith("#"))) :]
    assert len({len(row.split("●")[0]) for row in table[1:]}) == 1  # the marks line up too


def test_units_view_counts_one_unit() -> None:
    view = UnitsView.of([UserMessage("alone")])
    assert repr(view).splitlines()[0] == "1 个单元"
    assert "<p>1 个单元</p>" in view._repr_html_()


def test_units_view_boxes_each_unit() -> None:
    view = UnitsView.of(history())
    assert repr(view) == "\n".join(
        [
            "3 个单元",
            "  单元 1: [user]  41 字符",
            "  单元 2: [user]  43 字符",
            "  单元 3: [assistant(a,b) | tool a | tool b]  310 字符",
        ]
    )
    assert view._repr_html_().count("border-radius:6px") == 3  # one box per unit


def test_trim_view_marks_kept_and_dropped_units() -> None:
    view = TrimView(history(), 360)
    assert view.kept == history()[1:]
    assert view.error is None and view.failure is None
    assert repr(view).splitlines() == [
        "预算 360 字符：保留 2/3 个单元、4/5 条消息，用了 353 字符",
        "  丢弃 单元 1: [user]  41 字符",
        "  保留 单元 2: [user]  43 字符",
        "  保留 单元 3: [assistant(a,b) | tool a | tool b]  310 字符",
    ]


def test_trim_view_shows_the_chapters_error_when_nothing_fits() -> None:
    view = TrimView(history(), 100)
    assert view.kept is None
    assert view.failure is not None and view.failure.needed == 310  # the newest unit
    assert view.summary() == (
        "预算 100 字符：\ncontext budget cannot contain the smallest consistent message unit\n"
        "释义：预算连最新的那个一致单元都装不下"
    )
    html = view._repr_html_()
    assert f"color:{palette().error}" in html
    assert "message unit<br>\n释义：预算连最新的那个一致单元都装不下</p>" in html  # one line each


def test_trim_view_error_draws_only_the_unit_that_cannot_fit() -> None:
    # on a projector the error and the unit it is about fit on one screen (00's budget 60)
    html = TrimView(history(), 100)._repr_html_()
    assert html.count("border-radius:6px") == 1  # the newest unit's box, no other
    assert "单元 3 · 310 字符 · 比预算还大" in html
    assert "… 更早的 2 个单元也没有发出，共 84 字符" in html
    assert html.index("context budget cannot contain") < html.index("单元 3")


@pytest.mark.parametrize("budget", [400.5, "400", True])
def test_trim_view_shows_a_budget_that_is_no_int_with_its_meaning(budget: object) -> None:
    # 00 invites the reader to change TrimView(messages, 60): 400.5 is shown, not raised, and
    # as typed: "400" between quotes, not as the number 400
    view = TrimView(history(), budget)  # type: ignore[arg-type]
    assert view.kept is None and view.failure is None
    name = type(budget).__name__
    assert view.summary() == (
        f"预算 {budget!r} 字符：\nmax_chars must be an int, not {name}\n释义：预算必须是整数，这里是 {name}"
    )
    html = view._repr_html_()
    assert "比预算还大" not in html and "border-radius:6px" not in html  # no unit is about it


@pytest.mark.parametrize("options", [{}, {"kept_first": True}, {"fold_dropped": True}])
def test_trim_view_of_a_zero_budget_draws_its_error(options: dict[str, bool]) -> None:
    html = TrimView(history(), 0, **options)._repr_html_()  # was a ZeroDivisionError
    assert "context budget cannot contain the smallest consistent message unit" in html


def test_fold_dropped_counts_the_dropped_units_in_one_line_above_the_kept() -> None:
    # 00's side-by-side view: the kept units (what the instructor points at) fit on a projector
    view = TrimView(history(), 360, fold_dropped=True)
    html = view._repr_html_()
    notes = re.findall(r"单元 \d+ · \d+ 字符 · [^<]+", html)
    assert notes == ["单元 2 · 43 字符 · 保留", "单元 3 · 310 字符 · 保留"]  # no dropped box
    assert html.index("… 更早的 1 个单元已丢弃，共 41 字符") < html.index("单元 2")
    assert repr(view) == repr(TrimView(history(), 360))  # the plain text lists every unit
    everything = TrimView(history(), 10_000, fold_dropped=True)._repr_html_()
    assert "已丢弃" not in everything  # nothing dropped: no line for it


def test_kept_first_puts_the_unit_that_did_not_fit_right_under_the_kept() -> None:
    messages = [*history(), UserMessage("newest")]  # units: [user] [user] [a(a,b)…] [user]
    view = TrimView(messages, 100, kept_first=True)
    html = view._repr_html_()
    notes = re.findall(r"单元 \d+ · \d+ 字符 · [^<]+", html)
    assert notes == [
        "单元 4 · 35 字符 · 保留",
        "单元 3 · 310 字符 · 丢弃：第一个装不下的，从这里停下",
        "单元 2 · 43 字符 · 丢弃",
        "单元 1 · 41 字符 · 丢弃",
    ]
    assert repr(view) == repr(TrimView(messages, 100))  # the plain text keeps the order


def test_html_is_escaped() -> None:
    html = SessionView([UserMessage("<script>alert(1)</script>")])._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_error_results_are_flagged_in_html() -> None:
    html = SessionView([ToolMessage("a", "boom", is_error=True)])._repr_html_()
    assert "isError" in html


def test_tool_inputs_are_shown_compactly() -> None:
    message = AssistantMessage("", (ToolCall("a", "grep", {"pattern": "x" * 50}),))
    assert repr(SessionView([message])).splitlines()[1].endswith("…)")


def test_table_aligns_chinese_and_ascii_columns() -> None:
    table = Table(["条件", "result"], [["合法 user", UserMessage("x")], ["role 未知", None]])
    assert repr(table).splitlines() == [
        "条件       result",
        "---------  ------------------------",
        "合法 user  UserMessage(content='x')",
        "role 未知  None",
    ]
    assert ">None</code>" in table._repr_html_()


@pytest.mark.parametrize(
    ("cell", "code"),
    [
        ("不是对象（数组）", False),  # Chinese prose
        ('role === "user" 且前提满足', False),  # prose that quotes code
        ("动手试：边改边看错误信息（SessionEditor）", False),
        ("rejects malformed session records", False),  # English prose
        ("invalid session record at line 2: tool needs isError: a boolean", False),
        ("5", False),
        ("0:05", False),
        ('{"role":"user","content":"记忆续上了"}', True),  # JSON, Chinese inside
        ("[]", True),
        ('"user"', True),
        ("UserMessage(content='读一下 a.txt')", True),  # a repr
        ("(ToolCall(id='a', name='now', input=None),)", True),
        ("None", True),
        ("null", True),
        ("no-such-file.jsonl", True),  # a file name
        ("test_rejects_malformed_session_records[bad role]", True),
        ("tab\\tnewline\\n", True),
    ],
)
def test_only_code_cells_are_monospaced(cell: str, code: bool) -> None:
    html = Table(["x"], [[cell]])._repr_html_()
    assert ("<code" in html) is code, cell
    assert escape(cell) in html  # the text itself, unchanged


def test_backticks_mark_the_code_inside_a_prose_cell() -> None:
    table = Table(["x"], [["先用 `trim_context` 裁剪，再看 `units`"]])
    html = table._repr_html_()
    assert "先用 <code style='font-size:1em'>trim_context</code> 裁剪，再看 " in html
    assert html.count("<code") == 2
    assert repr(table).splitlines()[-1] == "先用 `trim_context` 裁剪，再看 `units`"


def test_file_view_numbers_physical_lines_and_marks_one() -> None:
    view = FileView('{"a":1}\n\n[1,', "s.jsonl", mark=3)
    assert repr(view).splitlines() == [
        "s.jsonl：3 行，12 字符，文件末尾没有换行",
        '   1 | {"a":1}',
        "   2 |",
        ">  3 | [1,",
    ]
    assert view._repr_html_().count(palette().marked_line) == 1


def test_clipped_file_view_keeps_one_row_per_line_and_the_whole_line_in_a_tooltip() -> None:
    # in 00's narrow column a sideways scrollbar hid every line after ~25 characters
    text = '{"role":"user","content":"<长>"}\n{}\n'
    clipped, whole = FileView(text, "s.jsonl", clip=True), FileView(text, "s.jsonl")
    html = clipped._repr_html_()
    assert "table-layout:fixed;width:100%" in html
    assert html.count("text-overflow:ellipsis") == 2  # every line cut at the column's edge
    assert "title='{&quot;role&quot;:&quot;user&quot;,&quot;content&quot;:&quot;&lt;长&gt;" in html
    assert "text-overflow" not in whole._repr_html_()  # elsewhere the lines scroll as before
    assert repr(clipped) == repr(whole)


def test_side_by_side_shares_the_width_by_weight() -> None:
    both = SideBySide(("a", FileView("x\n")), ("b", [1]), weights=(2, 3))
    assert re.findall(r"flex:(\d+) 1 0", both._repr_html_()) == ["2", "3"]
    assert re.findall(r"flex:(\d+) 1 0", SideBySide(("a", 1), ("b", 2))._repr_html_()) == [
        "1",
        "1",
    ]
    with pytest.raises(ValueError, match="2 panels need 2 weights"):
        SideBySide(("a", 1), ("b", 2), weights=(1,))


def test_file_view_of_a_path_shows_only_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"x\n")
    view = FileView.of(path)
    assert view.lines == ["x"]
    assert str(tmp_path) not in repr(view) + view._repr_html_()
    assert repr(FileView("")) == "0 行，0 字符"


def test_side_by_side_shows_every_panel_in_text_and_html() -> None:
    both = SideBySide(("disk", FileView("x\n")), ("model", [1]))
    assert repr(both) == "── disk ──\n1 行，2 字符\n   1 | x\n\n── model ──\n[1]"
    html = both._repr_html_()
    assert (
        "<h4 style='margin:0 0 4px;font-size:1.1em'>disk</h4>" in html
        and "<pre style='font-size:1em'>[1]</pre>" in html
    )


def test_unit_numbers_line_up_from_ten_units_on() -> None:
    many: list[Message] = [UserMessage(f"q{n}") for n in range(10)]
    rows = repr(UnitsView.of(many)).splitlines()
    assert rows[1].startswith("  单元  1: [user]") and rows[10].startswith("  单元 10: [user]")
    trim_rows = repr(TrimView(many, 10_000)).splitlines()
    assert trim_rows[1].startswith("  保留 单元  1:") and trim_rows[10].startswith(
        "  保留 单元 10:"
    )


def test_visible_line_escapes_only_what_cannot_be_seen() -> None:
    from teaching.views import visible_line

    line = '{"role":"user","content":"a\\\\b 中\tc\x01\x7f\u2028"}'
    assert visible_line(line) == '{"role":"user","content":"a\\\\b 中\\tc\\x01\\x7f\\u2028"}'
    assert visible_line("x" * 100, 10) == "x" * 9 + "…"


# --- a projector: scale, contrast, alignment, legible dropped units -----------------------


@pytest.fixture
def projector() -> Iterator[None]:
    set_display(1.5, "high")
    yield
    set_display()


def every_view() -> list[object]:
    messages = history()
    return [
        SessionView(messages),
        UnitsView.of(messages),
        TrimView(messages, 360),
        ScanView(messages),
        RunView(messages, [messages[:1], messages]),
        FileView("x\n"),
        Table(["a"], [["b"]]),
        SideBySide(("x", FileView("y\n"))),
    ]


def test_every_view_draws_at_the_display_scale_and_contrast(projector: None) -> None:
    for view in every_view():
        html = view._repr_html_()  # type: ignore[attr-defined]
        assert html.startswith('<div class="mini-agent-view" style="font-size:calc('), view
        assert "font-size:calc(var(--jp-content-font-size1, 14px) * 1.5)" in html, view
        assert "color:#000000" in html, view  # the high-contrast text colour
    set_display()
    for view in every_view():
        html = view._repr_html_()  # type: ignore[attr-defined]
        assert "* 1);" in html and "* 1.5)" not in html, view


def test_a_view_inside_a_view_is_not_scaled_twice(projector: None) -> None:
    # sizes are the notebook's text size times the scale, never a share of the parent's
    html = SideBySide(("a", SessionView(history())))._repr_html_()
    assert html.count("font-size:calc(") == 2
    assert "%" not in "".join(re.findall(r"font-size:[^;'\"]*", html))


def test_code_and_tables_follow_the_scale_as_jupyterlab_would_not() -> None:
    for view in every_view():
        html = view._repr_html_()  # type: ignore[attr-defined]
        assert "<code>" not in html and "<table>" not in html and "<pre>" not in html, view


def test_the_display_switch_leaves_the_plain_text_alone(projector: None) -> None:
    texts = [repr(view) for view in every_view()]
    set_display()
    assert texts == [repr(view) for view in every_view()]


def test_the_display_switch_echoes_one_chinese_line() -> None:
    assert repr(set_display(1.5, "high")) == "显示：放大 1.5 倍，高对比度"
    assert repr(set_display()) == "显示：默认大小，普通对比度"


def test_a_bad_display_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="scale"):
        set_display(40)
    with pytest.raises(ValueError, match="contrast"):
        set_display(1, "loud")  # type: ignore[arg-type]


def test_message_cells_are_left_aligned_as_jupyterlab_would_not() -> None:
    for view in (SessionView(history()), RunView(history(), [history()])):
        cells = re.findall(r"<td style='([^']*)'>(?:<span|<code)", view._repr_html_())
        assert cells and all("text-align:left" in style for style in cells)


def test_dropped_units_are_dashed_not_faded() -> None:
    html = TrimView(history(), 360)._repr_html_()
    assert "opacity" not in html
    assert html.count("border-style:dashed") == 1  # unit 1, the one dropped
    assert f"color:{palette().dropped_text}" in html


def test_shorten_cuts_between_characters_never_inside_an_escape() -> None:
    cut = shorten("a" * 56 + "\x01bcdef", 60)
    assert cut == "a" * 56 + "…"  # \u0001 (6 characters) no longer fits whole
    assert len(cut) <= 60 and "\\u0" not in cut
    assert shorten("ab\ncd", 4) == "ab…"  # not "ab\…"
