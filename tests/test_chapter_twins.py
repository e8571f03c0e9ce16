"""The chapter's code transcribed (`mini_agent.chapter`) and the kit agree wherever the
difference table of docs/ARCHITECTURE.md says the kit does what the chapter does.

The test walks the table: every row whose decision is the chapter's ("chapter: …", "chapter
for ≤ 0; …", "chapter on reading; …") must have a check below that feeds the same input to the
twin and to the kit; a new such row without one fails here. Rows decided for the kit are the
differences the notebooks teach, and the twin keeps the chapter's side of them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from mini_agent import (
    AssistantMessage,
    ContextBudgetError,
    Message,
    ScriptedClient,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    estimate_context_chars,
    load_session,
    parse_session_message,
    run_agent,
    trim_context,
)
from mini_agent.chapter import agent as chapter_agent
from mini_agent.chapter import context as chapter_context
from mini_agent.chapter import session as chapter_session
from mini_agent.json_form import JSON
from mini_agent.messages import record_line
from teaching import demo06

ROOT = Path(__file__).resolve().parent.parent


def difference_rows() -> dict[str, str]:
    """The difference table's rows: the difference's name -> its decision and reason."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = text[text.index("| difference | the chapter's TypeScript |") :].split("\n\n")[0]
    rows = {}
    for line in table.splitlines():
        if line.startswith("| **"):
            cells = [cell.strip() for cell in line.strip("|").split(" | ")]
            rows[cells[0].strip("*").replace("`", "")] = cells[3]
    return rows


def decided_for_the_chapter(decision: str) -> bool:
    return re.match(r"chapter\b", decision) is not None


def _outcome(
    trim: Callable[[list[Message], int], object], messages: list[Message], budget: int
) -> object:
    try:
        return trim(messages, budget)
    except ContextBudgetError as err:
        return f"ContextBudgetError: {err}"


def budget_of_zero_or_less(tmp_path: Path) -> None:
    history: list[Message] = [UserMessage("hi"), AssistantMessage("hello")]
    for budget in (0, -1, -100):
        for messages in (history, []):
            twin = _outcome(chapter_context.trim_context, messages, budget)
            kit = _outcome(trim_context, messages, budget)
            assert twin == kit and str(twin).startswith("ContextBudgetError: context budget")


CHAPTERS_EXTRA_KEY = (
    '{"role":"assistant","content":"","toolCalls":'
    '[{"id":"a","name":"n","input":{},"type":"function"}]}'
)


def extra_keys_in_tool_calls(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(CHAPTERS_EXTRA_KEY + "\n", encoding="utf-8")
    twin, kit = chapter_session.load_session(path), load_session(path)
    assert twin == kit
    assert chapter_session.json_stringify(twin[0]) == record_line(kit[0]) == CHAPTERS_EXTRA_KEY
    assert chapter_context.estimate_context_chars(twin) == estimate_context_chars(kit) == 99


def big_ints(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    inputs = [2**53, 2**53 + 1, -(2**53) - 1, 10**30]
    calls = ",".join(f'{{"id":"c{i}","name":"n","input":{n}}}' for i, n in enumerate(inputs))
    path.write_text(f'{{"role":"assistant","content":"","toolCalls":[{calls}]}}\n', "utf-8")
    twin, kit = chapter_session.load_session(path), load_session(path)
    assert twin == kit
    read = [call.input for message in twin for call in getattr(message, "tool_calls", ())]
    assert read == [2**53, float(2**53 + 1), float(-(2**53) - 1), float(10**30)]


def surrogate_pairs(tmp_path: Path) -> None:
    pair = "\ud83d\ude00"  # 😀 as JavaScript holds it: two UTF-16 units, in Python two code points
    tool = Tool("smile", "returns a smile", lambda _input: f"ok {pair}")
    turns = [AssistantMessage("", [ToolCall("s", "smile", {})]), AssistantMessage("done")]
    files = []
    for run, name in ((chapter_agent.run_agent, "twin"), (run_agent, "kit")):
        path = tmp_path / f"{name}.jsonl"
        run("smile", client=ScriptedClient(turns), tools=[tool], session_path=path)
        files.append(path.read_bytes())
    assert files[0] == files[1] and "ok 😀".encode() in files[0]


def cached_lines(tmp_path: Path) -> None:
    call_input: dict[str, JSON] = {"path": "a.txt"}
    messages = [AssistantMessage("", [ToolCall("a", "read", call_input)])]
    before = estimate_context_chars(messages)
    assert chapter_context.estimate_context_chars(messages) == before
    call_input["path"] = "a-much-longer-name.txt"  # a tool input changed after it was made
    assert chapter_context.estimate_context_chars(messages) == estimate_context_chars(messages)
    assert estimate_context_chars(messages) == before + len("-much-longer-name")
    path, twin_path = tmp_path / "kit.jsonl", tmp_path / "twin.jsonl"
    append_session(path, messages[0])
    chapter_session.append_session(twin_path, messages[0])
    assert path.read_bytes() == twin_path.read_bytes()


def test_the_twin_names_the_index_of_a_message_it_cannot_serialize_as_the_kit_does() -> None:
    cycle: dict[str, JSON] = {}
    cycle["self"] = cycle
    inputs: list[object] = [cycle, {"paths": {"a.txt"}}, {"callback": print}]
    for value in inputs:
        history: list[Message] = [UserMessage("hi")] * 4
        history.append(AssistantMessage("", [ToolCall("c", "tool", value)]))  # type: ignore[arg-type]
        errors = []
        for estimate in (chapter_context.estimate_context_chars, estimate_context_chars):
            with pytest.raises(ValueError, match=r"^message 4 cannot be serialized to JSON: ") as e:
                estimate(history)
            errors.append((str(e.value), type(e.value.__cause__)))
        assert errors[0] == errors[1], value


def test_the_twin_counts_utf16_units_as_javascript_and_the_kit_code_points() -> None:
    emoji: list[Message] = [UserMessage("😀")]
    # node: JSON.stringify({role: "user", content: "😀"}).length + 1 === 31
    assert chapter_context.estimate_context_chars(emoji) == 31
    assert estimate_context_chars(emoji) == 30  # the row "code points vs UTF-16"
    within_the_bmp: list[Message] = [UserMessage("你好，世界"), ToolMessage("a", "é\t\u2028")]
    assert chapter_context.estimate_context_chars(within_the_bmp) == estimate_context_chars(
        within_the_bmp
    )
    # so a budget can keep the kit's unit and refuse the twin's
    assert trim_context(emoji, 30) == emoji
    with pytest.raises(ContextBudgetError):
        chapter_context.trim_context(emoji, 30)


def test_the_twin_writes_nan_as_null_where_the_kit_refuses_it() -> None:
    history: list[Message] = [AssistantMessage("", [ToolCall("c", "calc", {"x": math.nan})])]
    line = '{"role":"assistant","content":"","toolCalls":[{"id":"c","name":"calc","input":{"x":null}}]}'
    assert chapter_context.estimate_context_chars(history) == len(line) + 1
    with pytest.raises(ValueError, match=r"^message 0 cannot be serialized to JSON: "):
        estimate_context_chars(history)


def test_the_twins_json_stringify_writes_numbers_as_javascript_does() -> None:
    numbers: dict[str, JSON] = {"a": 1.0, "b": 1e16, "c": 1e-7, "d": 1e-5, "e": -0.0, "1": 2}
    message = AssistantMessage("", [ToolCall("c", "calc", numbers)])
    assert (
        chapter_session.json_stringify(message)
        == record_line(message)
        == (
            '{"role":"assistant","content":"","toolCalls":[{"id":"c","name":"calc","input":'
            '{"1":2,"a":1,"b":10000000000000000,"c":1e-7,"d":0.00001,"e":0}}]}'
        )
    )


CHECKS: dict[str, Callable[[Path], None]] = {
    "budget types": budget_of_zero_or_less,
    "extra keys in tool calls": extra_keys_in_tool_calls,
    "big ints": big_ints,
    "surrogate pairs": surrogate_pairs,
    "cached lines": cached_lines,
}


def test_every_row_decided_for_the_chapter_has_a_twin_check() -> None:
    chapters = {
        name for name, decision in difference_rows().items() if decided_for_the_chapter(decision)
    }
    assert chapters == set(CHECKS), "a row where the kit does as the chapter: add its check here"


@pytest.mark.parametrize("row", sorted(CHECKS))
def test_the_twin_and_the_kit_agree_on_the_row(row: str, tmp_path: Path) -> None:
    assert decided_for_the_chapter(difference_rows()[row])
    CHECKS[row](tmp_path)


@pytest.mark.parametrize(
    "line", [CHAPTERS_EXTRA_KEY, '{"role":"tool","content":"x","toolCallId":"a","isError":true}']
)
def test_the_twin_parses_as_the_kit_parses(line: str) -> None:
    assert chapter_session.parse_session_message(json.loads(line)) == parse_session_message(
        json.loads(line)
    )


def test_on_06_s_runs_the_twin_agent_writes_the_file_and_sends_the_requests_the_kit_does(
    tmp_path: Path,
) -> None:
    seen = []
    for run, name in ((chapter_agent.run_agent, "twin"), (run_agent, "kit")):
        path = tmp_path / f"{name}.jsonl"
        clients = []
        for stage in (demo06.FIRST_RUN, demo06.RESTART):
            client = ScriptedClient(stage.turns)
            run(
                stage.prompt,
                client=client,
                tools=demo06.TOOLS,
                session_path=path,
                context_max_chars=700,
            )
            clients.append(client.requests)
        seen.append((path.read_bytes(), clients))
    assert seen[0] == seen[1]
