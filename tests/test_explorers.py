"""The explorers, driven without a kernel: set `.value`, `.click()`, read what they show."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mini_agent import (
    AssistantMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
    context_units,
    estimate_context_chars,
    load_session,
    trim_context,
)
from mini_agent.session import record_line
from teaching.explorer_logic import (
    RunFrame,
    check_session_text,
    frame_text,
    scan_position_text,
)
from teaching.explorers import BudgetExplorer, RunStepper, SessionEditor, UnitScanStepper
from teaching.glosses import gloss_line
from teaching.samples import sample_session, sample_session_text
from teaching.style import palette
from teaching.text import request_line
from teaching.trace import scan_steps
from teaching.views import SessionView, TrimView
from teaching.watch import parse_session_text

from .helpers import multi_tool_history

# Session editor --------------------------------------------------------------------------


def test_parse_session_text_is_what_load_session_does(tmp_path: Path) -> None:
    text = sample_session_text() + "\n" + '{"role":"user","content":1}\n'
    path = tmp_path / "session.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError) as from_file:
        load_session(path)
    with pytest.raises(ValueError) as from_text:
        parse_session_text(text, path)
    assert str(from_text.value) == str(from_file.value)
    assert str(from_file.value).startswith("invalid session record at line 17")


def test_editor_shows_the_parsed_session_as_a_table() -> None:
    editor = SessionEditor()
    assert editor.summary == repr(SessionView(sample_session()))
    assert editor.view.value == SessionView(sample_session())._repr_html_()


def test_editor_names_the_physical_line_of_broken_json() -> None:
    editor = SessionEditor()
    lines = sample_session_text().split("\n")
    lines[1] = lines[1][:20]  # truncated, as a crash mid-write leaves it
    editor.text.value = "\n".join(lines)
    first, detail, meaning, second = editor.summary.splitlines()
    assert first == "invalid session JSON at line 2"  # the chapter's phrase, alone
    assert detail.startswith("  本包补充：Expecting property name")  # the kit's, marked
    assert meaning.startswith("  释义：第 2 行不是合法的 JSON：")  # the gloss 03's errors carry
    assert second == "  第 2 行：" + lines[1]
    assert palette().marked_line in editor.html  # the bad line is highlighted, kernel or not
    # the error sits above the text box, and the box shades line 2 itself
    assert "invalid session JSON at line 2\n  本包补充：" in editor.status.value
    marked = re.findall(
        r'<div class="mini-agent-line" style="[^"]+">.*?>(\d+)<', editor.gutter.value
    )
    assert marked == ["2"]


def test_editor_glosses_its_error_in_chinese_as_03s_shown_errors_do() -> None:
    # 95's stop 2, step 3: line 4's `,"toolCalls":[]` deleted
    lines = sample_session_text().split("\n")
    lines[3] = lines[3].replace(',"toolCalls":[]', "", 1)
    check = check_session_text("\n".join(lines))
    error, detail, meaning = check.status.splitlines()
    assert error == "invalid session record at line 4"  # the chapter's phrase, alone
    assert detail.startswith("  本包补充：assistant needs toolCalls")
    assert check.error is not None
    assert meaning == "  " + str(gloss_line(check.error))  # the one gloss show_error prints too
    assert meaning.startswith("  释义：第 4 行是 JSON，却不是一条合法的消息：assistant 必须带")
    editor = SessionEditor("\n".join(lines))
    assert "释义：第 4 行是 JSON" in editor.status.value
    editor.text.value = sample_session_text()
    assert "释义" not in editor.status.value  # a loadable session: its summary alone


def test_editor_numbers_physical_lines_beside_the_text_it_wraps_like_the_box() -> None:
    text = 'a<b>\n\n{"role":"user","content":"' + "长" * 300 + '"}'
    editor = SessionEditor(text)
    numbers = re.findall(r'class="mini-agent-number">(\d+)</span>', editor.gutter.value)
    assert numbers == ["1", "2", "3"]  # one per physical line, the blank one too
    assert "a&lt;b&gt;" in editor.gutter.value  # the same characters, so the same wrapping
    assert "长" * 300 in editor.gutter.value
    assert "invalid session JSON at line 1" in editor.status.value


def test_editor_counts_blank_lines_as_an_editor_does() -> None:
    editor = SessionEditor('{"role":"user","content":"x"}\n\n\n{"role":"nope","content":"x"}\n')
    assert editor.summary.splitlines()[:2] == [
        "invalid session record at line 4",
        '  本包补充：unknown role "nope"',
    ]


def test_editor_refuses_an_assistant_without_tool_calls() -> None:
    editor = SessionEditor('{"role":"assistant","content":"hi"}')
    assert editor.summary.startswith(
        "invalid session record at line 1\n  本包补充：assistant needs toolCalls"
    )


def test_editor_recovers_when_the_line_is_fixed() -> None:
    editor = SessionEditor("{")
    assert editor.summary.startswith("invalid session JSON at line 1")
    editor.text.value = '{"role":"user","content":"你好"}'
    assert editor.summary == repr(SessionView([UserMessage("你好")]))
    assert check_session_text(editor.text.value).error is None


# Unit-scan stepper -----------------------------------------------------------------------


def test_the_stepper_shows_the_chapters_drawing_step_by_step() -> None:
    messages = multi_tool_history()
    steps = list(scan_steps(messages))
    assert scan_position_text(messages, steps, 0) == "开始：index=3，units = []"
    assert scan_position_text(messages, steps, 1) == repr(steps[0])
    assert scan_position_text(messages, steps, 2).splitlines() == [
        *repr(steps[1]).splitlines(),
        "完成：共 2 个单元；trim_context 从最新的单元往前装，顺序是 "
        "[ [assistant(a,b), tool a, tool b], [user] ]",
    ]


def test_the_stepper_ends_with_exactly_the_packages_units() -> None:
    for messages in (sample_session(), multi_tool_history()):
        stepper = UnitScanStepper(messages)
        stepper.position.value = stepper.position.max
        assert stepper.step is not None
        assert [list(unit) for unit in stepper.step.units] == context_units(messages)


def test_an_orphan_result_stays_alone_and_no_assistant_is_invented() -> None:
    stepper = UnitScanStepper(sample_session())
    stepper.position.value = 4
    step = stepper.step
    assert step is not None and step.index == 9 and step.found is None and step.start == 9
    assert "没有 assistant 声明 id=lost-1，是孤立结果" in stepper.summary


def test_stepper_next_prev_and_play_move_one_position() -> None:
    stepper = UnitScanStepper(multi_tool_history())
    assert stepper.prev.disabled and not stepper.next.disabled
    stepper.next.click()
    assert stepper.summary.startswith("第 1 步：index=3 tool b")
    assert stepper.step is not None and stepper.step.found == 1
    colours = palette()
    assert colours.searched in stepper.view.value and colours.found_fill in stepper.view.value
    stepper.next.click()
    assert stepper.next.disabled
    assert stepper.summary.splitlines()[-1] == (
        "完成：共 2 个单元；trim_context 从最新的单元往前装，顺序是 "
        "[ [assistant(a,b), tool a, tool b], [user] ]"
    )
    stepper.next.click()  # at the end: stays
    assert stepper.position.value == 2
    stepper.prev.click()
    assert stepper.position.value == 1
    stepper.play.value = 0  # the play control drives the same position
    assert stepper.position.value == 0 and stepper.summary == "开始：index=3，units = []"


# Budget slider ---------------------------------------------------------------------------


def test_budget_slider_shows_what_trim_context_keeps() -> None:
    explorer = BudgetExplorer()
    explorer.slider.value = 800
    kept = trim_context(sample_session(), 800)
    assert explorer.trim.kept == kept
    assert explorer.summary == repr(TrimView(sample_session(), 800))
    assert explorer.summary.splitlines()[0] == (
        "预算 800 字符：保留 5/10 个单元、7/15 条消息，用了 651 字符"
    )
    kept_first = TrimView(sample_session(), 800, kept_first=True)
    assert explorer.view.value == kept_first._repr_html_()


def test_budget_slider_stops_at_the_first_unit_that_does_not_fit() -> None:
    explorer = BudgetExplorer(max_chars=400)  # the 348-char tool unit does not fit after 73
    assert explorer.summary.splitlines()[0] == (
        "预算 400 字符：保留 1/10 个单元、1/15 条消息，用了 73 字符"
    )


def test_budget_slider_shows_the_chapters_error_below_the_newest_unit() -> None:
    explorer = BudgetExplorer()
    explorer.slider.value = 72  # the newest unit takes 73
    assert explorer.summary.splitlines()[:3] == [
        "预算 72 字符：",
        "context budget cannot contain the smallest consistent message unit",
        "释义：预算连最新的那个一致单元都装不下",  # the chapter's English, and its gloss
    ]
    assert palette().error in explorer.view.value


def test_budget_slider_spans_one_char_to_the_whole_session() -> None:
    explorer = BudgetExplorer()
    assert explorer.slider.min == 1
    explorer.slider.value = explorer.slider.max
    assert explorer.trim.kept == sample_session()


def test_budget_slider_on_a_long_session_draws_only_the_units_around_the_cut() -> None:
    messages = sample_session() * 20  # 300 messages, 200 units
    explorer = BudgetExplorer(messages, max_chars=5000, window=3)
    every_row = repr(TrimView(messages, 5000)).splitlines()[1:]
    cut = next(i for i, row in enumerate(every_row) if row.startswith("  保留"))
    units = context_units(messages)
    older, newer = units[: cut - 3], units[cut + 3 :]
    assert explorer.summary.splitlines() == [
        TrimView(messages, 5000).summary(),
        f"  … 更早的 {len(older)} 个单元已丢弃，共 {sum(map(estimate_context_chars, older))} 字符",
        *every_row[cut - 3 : cut + 3],
        f"  … 更新的 {len(newer)} 个单元已保留，共 {sum(map(estimate_context_chars, newer))} 字符",
    ]
    assert explorer.view.value.count("border-radius:6px") == 6  # six unit boxes drawn


# Two-state run stepper -------------------------------------------------------------------


def test_run_stepper_puts_each_request_beside_the_disk_at_that_moment() -> None:
    stepper = RunStepper()
    titles = [frame.title for frame in stepper.frames]
    assert titles == ["运行前", "第 1 次请求", "第 2 次请求", "运行后"]
    for frame in stepper.frames[1:-1]:
        on_disk = parse_session_text("\n".join(frame.disk_lines))
        assert frame.sent == tuple(trim_context(on_disk, 600))
    assert [len(frame.disk_lines) for frame in stepper.frames] == [4, 5, 8, 9]


def test_run_stepper_marks_the_lines_the_model_received() -> None:
    stepper = RunStepper()
    stepper.next.click()
    stepper.next.click()
    assert stepper.frame.title == "第 2 次请求"
    lines = stepper.summary.splitlines()
    assert lines[0] == request_line(2, stepper.frame.disk, stepper.frame.sent or (), 600)
    assert lines[0] == "第 2 次请求：磁盘上 8 条消息，746 字符；发出 5 条消息，472 字符（预算 600）"
    assert [line[2] for line in lines[1:]] == [" ", " ", " ", ">", ">", ">", ">", ">"]
    assert "两个文件都读一下。" in stepper.sent.value


def test_run_stepper_without_budget_sends_everything() -> None:
    turns = [AssistantMessage("", (ToolCall("x", "missing", None),)), AssistantMessage("done")]
    stepper = RunStepper("go", turns, history=[UserMessage("earlier")])
    requests = [frame for frame in stepper.frames if frame.sent is not None]
    assert [len(frame.sent or ()) for frame in requests] == [2, 4]
    assert requests[-1].sent is not None
    assert requests[-1].sent[-1] == ToolMessage("x", "unknown tool: missing", is_error=True)
    stepper.position.value = 2
    assert stepper.summary.splitlines()[0].endswith("（不设预算）")


def test_a_frame_whose_input_is_not_the_disks_tail_is_not_marked() -> None:
    line = record_line(UserMessage("on disk"))
    frame = RunFrame("第 1 次请求", (line,), (UserMessage("something else"),), 1)
    assert frame.first_sent_line is None


def test_an_empty_session_steps_nowhere_and_has_no_context() -> None:
    stepper = UnitScanStepper([])
    assert stepper.next.disabled and stepper.prev.disabled
    assert stepper.summary == "开始：index=-1，units = []"
    budget = BudgetExplorer([])
    assert budget.summary == (
        "预算 1 字符：\ncontext budget cannot be empty\n释义：裁剪后一个单元也没有，上下文不能为空"
    )


# What every explorer promises ------------------------------------------------------------


@pytest.mark.parametrize("make", [SessionEditor, UnitScanStepper, BudgetExplorer, RunStepper])
def test_explorer_shows_its_summary_as_plain_text(make: type) -> None:
    explorer = make()
    bundle = explorer._repr_mimebundle_()
    assert bundle["text/plain"] == explorer.summary == repr(explorer)
    assert "application/vnd.jupyter.widget-view+json" in bundle


@pytest.mark.parametrize("make", [SessionEditor, UnitScanStepper, BudgetExplorer, RunStepper])
def test_a_reader_without_a_kernel_sees_a_static_view(make: type) -> None:
    bundle = make()._repr_mimebundle_()
    html = bundle["text/html"]
    assert html.startswith('<pre class="explorer-summary"') or 'class="mini-agent-view"' in html
    assert len(html) > 200  # the view itself, not a placeholder


@pytest.mark.parametrize("make", [SessionEditor, UnitScanStepper, BudgetExplorer, RunStepper])
def test_two_displays_differ_only_in_the_widget_model_id(make: type) -> None:
    first, second = make()._repr_mimebundle_(), make()._repr_mimebundle_()
    key = "application/vnd.jupyter.widget-view+json"
    assert first[key]["model_id"] != second[key]["model_id"]
    first[key].pop("model_id"), second[key].pop("model_id")
    assert first == second


def test_the_steppers_static_views_show_the_current_step_only() -> None:
    scan = UnitScanStepper(multi_tool_history())
    assert "开始" in scan._repr_mimebundle_()["text/html"]
    scan.next.click()
    html = scan._repr_mimebundle_()["text/html"]
    assert "第 1 步" in html and "第 2 步" not in html and "开始" not in html
    run = RunStepper()
    run.next.click()
    run.next.click()
    bundle = run._repr_mimebundle_()
    # the text is what the checked cell after the stepper prints at this position
    assert bundle["text/plain"] == frame_text(run.frames[2], 600) == run.summary
    html = bundle["text/html"]
    assert "第 2 次请求" in html and "两个文件都读一下。" in html  # the disk and the input
    assert all(title not in html for title in ("运行前", "第 1 次请求", "运行后"))


def test_widget_labels_are_chinese() -> None:
    stepper = UnitScanStepper()
    assert (stepper.prev.description, stepper.next.description) == ("◀ 上一步", "下一步 ▶")
    assert stepper.position.description == "步骤"
    assert RunStepper().position.description == "时刻"


def test_driving_explorers_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    budget, stepper, editor, run = (
        BudgetExplorer(),
        UnitScanStepper(),
        SessionEditor(),
        RunStepper(),
    )
    budget.slider.value = 10
    stepper.next.click()
    editor.text.value = "{"
    run.next.click()
    assert capsys.readouterr() == ("", "")
