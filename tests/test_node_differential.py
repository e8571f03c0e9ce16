"""The kit against real node: the chapter's session and context functions in JavaScript.

`tests/js/` transcribes the chapter's `session.ts` and `context.ts` (no npm packages). One
node process runs every case: seeded random histories written by both languages, each read
by the other, trimmed by both, and damaged files read by both. Where the kit differs from the
chapter on purpose, the difference is asserted as documented (docs/JSON_FORM.md), never skipped.
"""

from __future__ import annotations

import json
import math
import random
import shutil
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mini_agent import (
    AssistantMessage,
    ContextBudgetError,
    Message,
    SessionFormatError,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    estimate_context_chars,
    load_session,
    trim_context,
)
from mini_agent.json_form import JSON, MAX_DEPTH, js_string
from mini_agent.session import INVALID_JSON, INVALID_RECORD, record_line, to_record
from tests.chapter_reference import estimate_context_chars as chapter_estimate
from tests.chapter_reference import trim_context as chapter_trim

DRIVER = Path(__file__).with_name("js") / "driver.mjs"
HISTORIES, MESSAGES_PER_HISTORY, BUDGETS_PER_HISTORY = 400, 30, 3
DAMAGED_FILES, JS_NUMBER_LINES, ODD_NUMBER_FILES = 300, 2_000, 200

# --- seeded random values both languages can hold ---------------------------------------

_PIECES = [
    "a", "read", " ", "中文", "。", "，", "😀", "𠀋", '"', "\\", "\n", "\r", "\t", "\x00", "\x1f",
    "\x7f", "\u2028", "\u2029", "\ud800x", "x\udfff", "é", "{", "}", "[", "]", ":", ",", "1.5",
    "𝄞", "🧑‍💻",  # astral text: one code point here, two UTF-16 units in JavaScript
]  # fmt: skip
_EXTRA_CALL_KEYS = ["type", "index", "1", "0", "😀", "arguments"]  # kept, in the order written
_KEYS = ["path", "b", "1", "0", "10", "2", "4294967294", "4294967295", "01", "-1", "1.5",
         "", "键", "00", "9", "a b", "😀"]  # fmt: skip


def _text(rng: random.Random, pieces: int = 6) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, pieces)))


def _float(rng: random.Random) -> float:
    kind = rng.randrange(6)
    if kind == 0:  # any finite double, from its bits
        value: float = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        return value if math.isfinite(value) else 0.5
    if kind == 1:
        return rng.choice([0.0, -0.0, 1.0, -1.0, 1e16, 1e21, 1e-5, 1e-6, 1e-7, 1.5e-7, 123e-20,
                           5e-324, 1.7976931348623157e308, 2.0**53, 2.0**53 + 2, 0.1, 1e20,
                           1e-4, 9.999999999999999e-5, 1.5e16, 123456789.125])  # fmt: skip
    if kind == 2:
        return rng.randint(-(10**6), 10**6) / 1000
    if kind == 3:
        return rng.random() * 10.0 ** rng.randint(-30, 30)
    if kind == 4:
        return float(rng.randint(-(2**60), 2**60))
    return -rng.random()


def _int(rng: random.Random) -> int:
    kind = rng.randrange(4)
    if kind == 0:
        return rng.randint(-1000, 1000)
    if kind == 1:
        return rng.randint(-(2**53), 2**53)
    if kind == 2:
        return rng.choice([2**53, -(2**53), 2**53 - 1, 0, -1])
    return int(float(rng.randint(-(10**30), 10**30)))  # beyond 2^53 but a double: written as JS


def _value(rng: random.Random, depth: int = 0) -> JSON:
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return _text(rng)
    if kind == 1:
        return _float(rng)
    if kind == 2:
        return _int(rng)
    if kind == 3:
        return rng.choice([True, False, None])
    if kind in (4, 5):
        return _text(rng, 2)
    if kind in (6, 7):
        keys = rng.sample(_KEYS, rng.randint(0, 5))
        return {key: _value(rng, depth + 1) for key in keys}
    return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def _call(rng: random.Random) -> ToolCall:
    """A call, sometimes with extra keys anywhere among id, name and input (as a file may hold)."""
    fields: list[tuple[str, JSON]] = [("id", f"c{rng.randrange(40)}")]
    fields.append(("name", rng.choice(["read", "edit"])))
    fields.append(("input", _value(rng)))
    if rng.random() < 0.3:
        for key in rng.sample(_EXTRA_CALL_KEYS, rng.randint(1, 2)):
            fields.insert(rng.randint(0, len(fields)), (key, _value(rng)))
    return ToolCall.from_record(dict(fields))


def _history(rng: random.Random, count: int) -> list[Message]:
    messages: list[Message] = []
    open_calls: list[str] = []
    while len(messages) < count:
        kind = rng.randrange(4)
        if kind == 0:
            messages.append(UserMessage(_text(rng, 12)))
        elif kind == 1:
            calls = tuple(_call(rng) for _ in range(rng.randint(0, 3)))
            open_calls.extend(call.id for call in calls)
            messages.append(AssistantMessage(_text(rng, 8), calls))
        else:  # results mostly answer an open call, sometimes an orphan or a repeat
            known = open_calls and rng.random() < 0.8
            call_id = rng.choice(open_calls) if known else f"c{rng.randrange(40)}"
            messages.append(ToolMessage(call_id, _text(rng, 20), rng.random() < 0.1))
    return messages


def _transport(message: Message) -> str:
    """How a message travels to node: Python's own json (repr floats, ASCII), not the kit's."""
    return json.dumps(to_record(message), allow_nan=False)


def _trim_result(messages: list[Message], budget: int, trim: Any = trim_context) -> int | str:
    """`trim`'s answer as data: how many messages it keeps, or the error."""
    try:
        return len(trim(messages, budget))
    except ContextBudgetError as err:
        return str(err)


# --- damaged files --------------------------------------------------------------------


@dataclass
class Damage:
    kind: str
    data: bytes
    physical: int  # the physical line of the damage (Python's N)
    non_blank: int  # its number among non-blank lines (the chapter's N)
    phrase: str | None  # the phrase both report; None where the kit refuses alone


def _damage(rng: random.Random, lines: list[str], kind: str) -> Damage:
    good = list(lines)
    at = rng.randrange(len(good))
    record = json.loads(good[at])
    phrase: str | None = INVALID_JSON
    if kind == "truncated":
        good[at] = good[at][: rng.randint(1, len(good[at]) - 1)]
    elif kind == "bad role":
        good[at], phrase = json.dumps({**record, "role": "system"}), INVALID_RECORD
    elif kind == "missing field":
        drop = {"user": "content", "assistant": "toolCalls", "tool": "toolCallId"}[record["role"]]
        good[at], phrase = (
            json.dumps({k: v for k, v in record.items() if k != drop}),
            INVALID_RECORD,
        )
    elif kind == "isError 1":
        good[at] = json.dumps({"role": "tool", "content": "x", "toolCallId": "a", "isError": 1})
        phrase = INVALID_RECORD
    elif kind == "not an object":
        good[at], phrase = rng.choice(["[1,2]", "42", '"x"', "null", "true"]), INVALID_RECORD
    elif kind == "NaN":
        good[at] = '{"role":"user","content":"x","n":NaN}'
    elif kind == "spaces":
        good[at] = "   "
    elif kind == "BOM":
        good[at] = "\ufeff" + good[at]
    elif kind == "1e999":  # JSON.parse reads Infinity; the kit refuses it
        good[at], phrase = '{"role":"user","content":"x","n":1e999}', None
    elif kind == "400 digits":  # the same, for an integer
        good[at], phrase = '{"role":"user","content":"x","n":' + "7" * 400 + "}", None
    elif kind == "too deep":  # node reads any depth; the kit stops at MAX_DEPTH
        deep = "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1)
        good[at], phrase = '{"role":"user","content":"x","n":' + deep + "}", None
    # blank lines anywhere: the chapter skips and does not count them, the kit skips and counts
    for _ in range(rng.randint(0, 3)):
        where = rng.randint(0, len(good))
        good.insert(where, "")
        at += where <= at
    data = "".join(line + "\n" for line in good).encode("utf-8", "surrogatepass")
    if kind == "not UTF-8":  # node decodes U+FFFD and reads on; the kit refuses
        head = "".join(line + "\n" for line in good[:at]).encode("utf-8", "surrogatepass")
        data, phrase = head + b'{"role":"user","content":"\xff"}\n' + data[len(head) :], None
        good.insert(at, "x")
    non_blank = sum(1 for line in good[: at + 1] if line)
    return Damage(kind, data, at + 1, non_blank, phrase)


DAMAGE_KINDS = ["truncated", "bad role", "missing field", "isError 1", "not an object", "NaN",
                "spaces", "BOM", "1e999", "400 digits", "too deep", "not UTF-8"]  # fmt: skip


def _odd_number(rng: random.Random) -> str:
    """A number token neither language writes (`1.0`, `1E5`, `9007199254740993`, …)."""
    value = _float(rng)
    kind = rng.randrange(5)
    if kind == 0:
        return f"{value:.17g}".replace("inf", "1")
    if kind == 1:
        return f"{value:.{rng.randint(1, 25)}E}"
    if kind == 2:
        return str(rng.randint(2**53, 10**25) * rng.choice([1, -1]))
    if kind == 3:
        return rng.choice(["-0", "0.0", "1.0", "1e16", "0.10", "1E-7", "100e-9", "-0.0e5"])
    return repr(value)


# --- one node run for every case ------------------------------------------------------


@dataclass
class Run:
    histories: list[list[Message]] = field(default_factory=list)
    budgets: list[list[int]] = field(default_factory=list)
    damages: list[Damage] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    folder: Path = Path()


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed; as root, run: apt-get install -y nodejs")
    return node


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    node = _node()
    rng = random.Random(3410)
    folder = tmp_path_factory.mktemp("node")
    state = Run(folder=folder)
    jobs: list[dict[str, Any]] = []
    for number in range(HISTORIES):
        history = _history(rng, MESSAGES_PER_HISTORY)
        py_file = folder / f"py{number}.jsonl"
        for message in history:
            append_session(py_file, message)
        total = estimate_context_chars(history)
        budgets = [rng.randint(1, total + 50) for _ in range(BUDGETS_PER_HISTORY)]
        state.histories.append(history)
        state.budgets.append(budgets)
        jobs.append(
            {
                "op": "write",
                "path": str(folder / f"js{number}.jsonl"),
                "messages": [_transport(m) for m in history],
            }
        )
        jobs.append(
            {
                "op": "load",
                "path": str(py_file),
                "rewrite": str(folder / f"py{number}.js.jsonl"),
                "budgets": budgets,
            }
        )
    for number in range(DAMAGED_FILES):
        lines = [record_line(m) for m in _history(rng, 8)]
        damage = _damage(rng, lines, DAMAGE_KINDS[number % len(DAMAGE_KINDS)])
        (folder / f"bad{number}.jsonl").write_bytes(damage.data)
        state.damages.append(damage)
        jobs.append({"op": "load", "path": str(folder / f"bad{number}.jsonl")})
    for number in range(ODD_NUMBER_FILES):
        tokens = ",".join(_odd_number(rng) for _ in range(5))
        line = '{"role":"assistant","content":"","toolCalls":[{"id":"a","name":"n","input":[%s]}]}'
        (folder / f"odd{number}.jsonl").write_text(line % tokens + "\n", encoding="utf-8")
        jobs.append(
            {
                "op": "load",
                "path": str(folder / f"odd{number}.jsonl"),
                "rewrite": str(folder / f"odd{number}.js.jsonl"),
            }
        )
    # NaN and Infinity: JSON.stringify writes null; a surrogate pair: JavaScript's one character.
    jobs.append({"op": "nonfinite", "path": str(folder / "nonfinite.jsonl")})
    pair = {"role": "tool", "content": "\ud83d\ude00 \ud800", "toolCallId": "a", "isError": False}
    jobs.append(
        {"op": "write", "path": str(folder / "pair-js.jsonl"), "messages": [json.dumps(pair)]}
    )
    pair_text = js_string("\ud83d\ude00 \ud800")  # what a tool's result becomes in run_agent
    append_session(folder / "pair-py.jsonl", ToolMessage("a", pair_text))
    jobs.append(
        {
            "op": "numbers",
            "path": str(folder / "numbers.jsonl"),
            "seed": 34,
            "count": JS_NUMBER_LINES,
        }
    )
    # The newline guard: a last line without its newline, then one append in each language.
    for language in ("py", "js"):
        (folder / f"guard-{language}.jsonl").write_bytes((folder / "py0.jsonl").read_bytes()[:-1])
    append_session(folder / "guard-py.jsonl", UserMessage("after"))
    jobs.append(
        {
            "op": "write",
            "path": str(folder / "guard-js.jsonl"),
            "messages": [_transport(UserMessage("after"))],
        }
    )
    jobs += [{"op": "load", "path": str(folder / f"guard-{lang}.jsonl")} for lang in ("py", "js")]
    # CRLF files: "\r" ends every line, and one blank line is "\r" alone.
    crlf = (folder / "py1.jsonl").read_bytes().replace(b"\n", b"\r\n")
    (folder / "crlf.jsonl").write_bytes(crlf)
    (folder / "crlf-blank.jsonl").write_bytes(b"\r\n" + crlf)
    jobs += [
        {"op": "load", "path": str(folder / name)} for name in ("crlf.jsonl", "crlf-blank.jsonl")
    ]
    (folder / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    subprocess.run(
        [node, str(DRIVER), str(folder / "jobs.json"), str(folder / "out.json")],
        check=True,
        timeout=120,
    )
    state.results = json.loads((folder / "out.json").read_text(encoding="utf-8"))
    assert len(state.results) == len(jobs)
    return state


def _history_results(run: Run) -> list[dict[str, Any]]:
    return run.results[1 : 2 * HISTORIES : 2]  # the "load" job of each history


def _damage_results(run: Run) -> list[dict[str, Any]]:
    return run.results[2 * HISTORIES : 2 * HISTORIES + DAMAGED_FILES]


def test_every_line_is_byte_for_byte_what_node_writes(run: Run) -> None:
    lines = 0
    for number, history in enumerate(run.histories):
        py_bytes = (run.folder / f"py{number}.jsonl").read_bytes()
        js_bytes = (run.folder / f"js{number}.jsonl").read_bytes()
        assert py_bytes == js_bytes, f"history {number}"
        lines += len(history)
    numbers = run.folder / "numbers.jsonl"
    assert [record_line(m) + "\n" for m in load_session(numbers)] == numbers.read_text(
        encoding="utf-8"
    ).splitlines(keepends=True)  # JavaScript's own doubles and keys, read and written back
    lines += JS_NUMBER_LINES
    assert lines >= 10_000
    print(f"\n{lines} lines byte for byte as node writes them")


def test_files_written_by_one_language_keep_their_bytes_in_the_other(run: Run) -> None:
    for number, (history, result) in enumerate(
        zip(run.histories, _history_results(run), strict=True)
    ):
        py_file, js_file = run.folder / f"py{number}.jsonl", run.folder / f"js{number}.jsonl"
        assert result["count"] == len(history)
        # node read the kit's file and wrote the very same bytes
        assert (run.folder / f"py{number}.js.jsonl").read_bytes() == py_file.read_bytes()
        # the kit read node's file into the same messages, and writes the very same bytes
        loaded = load_session(js_file)
        assert loaded == history
        assert "".join(record_line(m) + "\n" for m in loaded).encode() == js_file.read_bytes()


def test_the_kit_and_the_reference_estimate_and_trim_as_node(run: Run) -> None:
    trims = astral = 0
    for history, budgets, result in zip(
        run.histories, run.budgets, _history_results(run), strict=True
    ):
        text = "".join(record_line(m) for m in history)
        astral += len(text.encode("utf-16-le")) // 2 > len(text)  # emoji: 2 UTF-16 units
        assert result["estimate"] == estimate_context_chars(history) == chapter_estimate(history)
        for budget, js in zip(budgets, result["trims"], strict=True):
            trims += 1
            assert (
                js == _trim_result(history, budget) == _trim_result(history, budget, chapter_trim)
            )
    assert trims >= 1_000 and astral > 0  # characters beyond U+FFFF were really met


def test_damaged_files_give_the_same_phrase_and_line(run: Run) -> None:
    refused = 0
    for number, (damage, result) in enumerate(zip(run.damages, _damage_results(run), strict=True)):
        path = run.folder / f"bad{number}.jsonl"
        with pytest.raises(SessionFormatError) as caught:
            load_session(path)
        assert caught.value.line == damage.physical, damage.kind  # the line an editor shows
        if damage.phrase is None:  # documented refusals: node reads these files
            assert caught.value.phrase == INVALID_JSON and "error" not in result, damage.kind
            refused += 1
            continue
        assert caught.value.phrase == damage.phrase, damage.kind
        # node: the same phrase, numbered among non-blank lines as the chapter's filter counts
        assert result == {"error": f"{damage.phrase} {damage.non_blank}"}, damage.kind
    print(f"\n{len(run.damages)} damaged files: {refused} refused by the kit alone, as documented")


def test_numbers_neither_language_writes_are_rewritten_alike(run: Run) -> None:
    first = 2 * HISTORIES + DAMAGED_FILES
    for number, result in enumerate(run.results[first : first + ODD_NUMBER_FILES]):
        path = run.folder / f"odd{number}.jsonl"
        assert result["count"] == 1, path.read_text(encoding="utf-8")
        ours = "".join(record_line(m) + "\n" for m in load_session(path))
        assert ours == (run.folder / f"odd{number}.js.jsonl").read_text(encoding="utf-8")


def test_the_newline_guard_is_the_documented_difference(run: Run) -> None:
    py_guard, js_guard = run.results[-4:-2]
    lines = MESSAGES_PER_HISTORY
    assert py_guard["count"] == lines + 1  # the kit added the missing newline first
    assert len(load_session(run.folder / "guard-py.jsonl")) == lines + 1
    assert js_guard == {"error": f"{INVALID_JSON} {lines}"}  # node glued two records
    with pytest.raises(SessionFormatError) as caught:
        load_session(run.folder / "guard-js.jsonl")
    assert (caught.value.phrase, caught.value.line) == (INVALID_JSON, lines)


def test_crlf_files_load_alike_except_a_bare_carriage_return(run: Run) -> None:
    crlf, crlf_blank = run.results[-2:]
    history = run.histories[1]
    assert crlf["count"] == len(history)
    assert load_session(run.folder / "crlf.jsonl") == history
    # documented: the kit takes "\r" alone for a CRLF blank line; JSON.parse("\r") fails
    assert load_session(run.folder / "crlf-blank.jsonl") == history
    assert crlf_blank == {"error": f"{INVALID_JSON} 1"}


def test_extra_call_keys_survive_both_ways_in_the_order_written(run: Run) -> None:
    extra = [
        call
        for history in run.histories
        for message in history
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls
        if call.extra
    ]
    assert len(extra) >= 100  # the byte-for-byte tests above ran over all of these
    moved = [call for call in extra if call.keys]  # an extra key before id, name or input
    assert moved and all(list(call.to_record()) == list(call.keys) for call in moved)


def test_the_chapters_example_of_an_extra_key_estimates_as_the_chapter_does(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    line = '{"role":"assistant","content":"","toolCalls":[{"id":"a","name":"n","input":{},"type":"function"}]}'
    path.write_text(line + "\n", encoding="utf-8")
    loaded = load_session(path)
    assert record_line(loaded[0]) == line
    assert estimate_context_chars(loaded) == len(line) + 1 == 99  # v2 dropped the key: 81


def test_nan_and_infinity_are_null_in_node_and_refused_by_the_kit(run: Run) -> None:
    (message,) = load_session(run.folder / "nonfinite.jsonl")
    assert isinstance(message, AssistantMessage)
    assert message.tool_calls[0].input == {"nan": None, "inf": None, "list": [None, 1]}
    for number in (math.nan, math.inf, -math.inf):  # the kit will not write a value it would lose
        odd = AssistantMessage("", (ToolCall("a", "n", {"x": number}),))
        with pytest.raises(ValueError, match="not JSON compliant"):
            append_session(run.folder / "nonfinite-py.jsonl", odd)
    assert not (run.folder / "nonfinite-py.jsonl").exists()


def test_a_surrogate_pair_is_written_as_node_writes_it(run: Run) -> None:
    js_bytes = (run.folder / "pair-js.jsonl").read_bytes()
    assert (run.folder / "pair-py.jsonl").read_bytes() == js_bytes
    assert (
        "😀".encode() in js_bytes and b"\\ud800" in js_bytes
    )  # the pair joined, the lone one escaped
