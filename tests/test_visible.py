"""One escaping everywhere: a session full of what a screen hides, acts on or misreads,
rendered through every view, explorer and CLI command; none of it may arrive raw.

"Raw" is decided here from the Unicode database (categories Cc, Cf, Zl, Zp, Cs, and the
blank Hangul filler), not by asking `visible.py`: the test does not trust the code it checks.
Each check also finds the payload *escaped* in the output, so that a view that drops the
text altogether cannot pass.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_agent import AssistantMessage, ToolCall, ToolMessage, UserMessage, append_session
from mini_agent.model_client import ScriptedClient
from mini_agent.session import Message, SessionFormatError, load_session
from mini_agent.visible import visible, visible_json, visible_line, visible_text
from teaching.errors import show_error
from teaching.exercises import CheckReport, CheckResult, outcome_of, shown
from teaching.source import show_source
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

from .platforms import HOSTILE_NAMES, posix_only

ESC_TITLE = "\x1b]0;pwned\x07"  # sets a terminal's title
CLEAR = "\x1b[2J\x9b2J"  # clears the screen (7-bit and C1 CSI)
RLO = "\u202e"  # `‮gnp.exe` displays as `exe.png`
HIDDEN = "\u200b\u2028\ufeff\u3164"  # zero width, line separator, BOM, Hangul filler
SURROGATE = "\ud800"  # JSON allows it; UTF-8 cannot carry it
HTML = "<script>alert(1)</script><b onclick='x'>&amp;"
PAYLOAD = f"{HTML}{RLO}gnp.exe{ESC_TITLE}{CLEAR}{HIDDEN}"

# a record whose role is valid JSON (ESC written `\u001b`) but no role: its error quotes it
BAD_ROLE_LINE = f'{{"role":"{HTML}{RLO}\\u001b]0;x\\u0007","content":"x"}}'


class View(Protocol):
    def _repr_html_(self) -> str: ...


class Explorer(Protocol):
    @property
    def summary(self) -> str: ...

    @property
    def html(self) -> str: ...


RAW_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs"}
BLANK = {"\u3164"}


def raw_in(text: str, keep: str = "\n") -> list[str]:
    """The characters of `text` a screen would hide or act on (`keep`: layout allowed)."""
    return sorted(
        {
            char
            for char in text
            if char not in keep and (unicodedata.category(char) in RAW_CATEGORIES or char in BLANK)
        }
    )


def assert_text_safe(text: str, keep: str = "\n\t") -> None:
    assert raw_in(text, keep) == [], text
    assert "\\x1b" in text or "\\u001b" in text, text  # the payload is there, escaped
    assert "\\u202e" in text, text


def assert_html_safe(html: str) -> None:
    html.encode("utf-8")  # sendable: a lone surrogate would raise UnicodeEncodeError here
    assert raw_in(html, keep="\n\t") == [], html
    assert "<script" not in html and "<b onclick" not in html, html
    assert "&lt;script&gt;" in html and "\\u202e" in html, html


def hostile_session() -> list[Message]:
    """Every field a file or a model fills, holding the payload."""
    call_id = f"call{ESC_TITLE}{RLO}{SURROGATE}"
    return [
        UserMessage(f"read {PAYLOAD}"),
        AssistantMessage(
            f"reading {PAYLOAD}",
            (
                ToolCall(call_id, f"read{CLEAR}{RLO}", {f"pa{RLO}th": PAYLOAD, "n": [HIDDEN]}),
                ToolCall("orphan-to-be", "read", {}),
            ),
        ),
        ToolMessage(call_id, f"contents {PAYLOAD}", True),
        ToolMessage(f"lost{RLO}{ESC_TITLE}", f"orphan {PAYLOAD}"),
        UserMessage(f"and now? {SURROGATE}{RLO}{HTML}"),  # the newest: all an error view draws
    ]


# --- views ---------------------------------------------------------------------------------


def views(messages: list[Message], tmp_path: Path) -> Iterator[tuple[str, View]]:
    path = tmp_path / f"s{RLO}.jsonl"
    for message in messages:
        append_session(path, message)
    yield "session", SessionView(messages)
    yield "units", UnitsView.of(messages)
    total = sum(len(m.line) + 1 for m in messages)
    yield "trim-all", TrimView(messages, total)
    yield "trim-some", TrimView(messages, total - 1)
    yield "trim-none", TrimView(messages, 1)
    yield "trim-window", TrimView(messages, total - 1, window=1)
    yield "trim-folded", TrimView(messages, total - 1, fold_dropped=True)
    yield "scan", ScanView(messages)
    client = ScriptedClient([])
    client.requests.append(list(messages[:3]))
    client.requests.append(list(messages[3:]))
    yield "run", RunView.of(path, client)
    yield "file", FileView.of(path, mark=2)
    yield "file-raw", FileView(f"{PAYLOAD}\n{{}}\n", f"n{ESC_TITLE}{RLO}", 1)
    yield "file-clip", FileView(f"{PAYLOAD}\n{{}}\n", f"n{ESC_TITLE}{RLO}", 1, clip=True)
    yield "table", Table([f"col{RLO}", "b"], [[PAYLOAD, f"`{PAYLOAD}`"], [1, f"{RLO}{HTML}"]])
    yield "side", SideBySide((f"left{RLO}{ESC_TITLE}", SessionView(messages)), ("r", PAYLOAD))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(BAD_ROLE_LINE + "\n", encoding="utf-8")
    yield "error", show_error(lambda: load_session(bad), SessionFormatError)
    outcome = outcome_of(lambda: load_session(bad))  # a reader's function, failing
    yield "report", CheckReport("t", (CheckResult("c", False, shown(outcome)),), (PAYLOAD,))
    yield "source", show_source(hostile_session, (f"chapter{RLO}", f"code {PAYLOAD}\n\tnext"))


@pytest.fixture
def rendered(tmp_path: Path) -> list[tuple[str, View]]:
    return list(views(hostile_session(), tmp_path))


def test_every_view_shows_nothing_raw_in_text_or_html(rendered: list[tuple[str, View]]) -> None:
    for name, view in rendered:
        text = repr(view)
        assert raw_in(text, keep="\n\t") == [], (name, text)
        html = view._repr_html_()
        assert_html_safe(html)
        assert "\\u202e" in text, (name, text)


def test_the_session_view_html_is_sendable_with_a_lone_surrogate_in_a_call_id() -> None:
    view = SessionView([AssistantMessage("", (ToolCall(SURROGATE, "n", {}),))])
    assert "\\ud800" in view._repr_html_().encode("utf-8").decode("utf-8")


# --- explorers -----------------------------------------------------------------------------


def explorers() -> Iterator[tuple[str, Callable[[], Explorer]]]:
    widgets = pytest.importorskip("ipywidgets")
    assert widgets is not None
    from teaching.explorers import (
        BudgetExplorer,
        RunStepper,
        SessionEditor,
        UnitScanStepper,
    )

    messages = hostile_session()
    lines = "\n".join(message.line for message in messages)
    yield "editor-valid", lambda: SessionEditor(lines)
    yield "editor-bad-line", lambda: SessionEditor(lines + "\n" + PAYLOAD)
    yield "editor-bad-role", lambda: SessionEditor(BAD_ROLE_LINE)
    yield "budget", lambda: BudgetExplorer(messages)
    yield "budget-error", lambda: BudgetExplorer(messages, 1)
    yield "scan", lambda: UnitScanStepper(messages)
    turns = [
        AssistantMessage(f"calling {PAYLOAD}", (ToolCall(f"x{RLO}{ESC_TITLE}", PAYLOAD, {}),)),
        AssistantMessage(f"done {PAYLOAD}"),
    ]
    yield "run", lambda: RunStepper(f"go {PAYLOAD}", turns, history=messages[:1])


@pytest.mark.parametrize("name", ["editor-valid", "editor-bad-line", "editor-bad-role",
                                  "budget", "budget-error", "scan", "run"])  # fmt: skip
def test_every_explorer_shows_nothing_raw_at_any_position(name: str) -> None:
    explorer = dict(explorers())[name]()
    position = getattr(explorer, "position", None)
    for at in range(position.max + 1) if position is not None else [None]:
        if at is not None:
            assert position is not None
            position.value = at
        summary, html = explorer.summary, explorer.html
        assert raw_in(summary, keep="\n") == [], (name, at, summary)
        html.encode("utf-8")
        assert raw_in(html, keep="\n\t") == [], (name, at, html)
        assert "<script" not in html and "<b onclick" not in html, (name, at)
    assert "\\u202e" in summary + html, name


# --- the CLI --------------------------------------------------------------------------------

NAME = os.fsencode(f"s{ESC_TITLE}{RLO}gnp.") + b"\xff.jsonl"  # not even UTF-8
hostile_name = posix_only(HOSTILE_NAMES)


def cli(*args: str | bytes, cwd: Path, module: str = "mini_agent") -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=cwd, capture_output=True, timeout=60
    )
    # strict: what the CLI sends a terminal is UTF-8, whatever the file held
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / os.fsdecode(NAME)
    for message in hostile_session():
        append_session(path, message)
    return tmp_path


def assert_cli_safe(run: tuple[int, str, str], code: int) -> None:
    assert run[0] == code, run
    both = run[1] + run[2]
    assert raw_in(both) == [], both
    assert "\\x1b" in both and "\\u202e" in both, both


@pytest.mark.parametrize(
    ("args", "code"),
    [(["check"], 0), (["show"], 0), (["show", "--units"], 0), (["trim", "--max-chars", "99999"], 0),
     (["trim", "--max-chars", "400"], 0), (["trim", "--max-chars", "9"], 1), (["repair"], 0)],
    ids=["check", "show", "show-units", "trim-all", "trim-some", "trim-error", "repair"],
)  # fmt: skip
@hostile_name
def test_every_command_prints_nothing_raw(folder: Path, args: list[str], code: int) -> None:
    assert_cli_safe(cli(*args, NAME, cwd=folder), code)


@hostile_name
def test_errors_and_paths_print_nothing_raw(folder: Path) -> None:
    path = folder / os.fsdecode(NAME)
    load_session(path)  # the file is good so far
    with path.open("a", encoding="utf-8") as file:
        file.write(BAD_ROLE_LINE + "\n")
    assert_cli_safe(cli("check", NAME, cwd=folder), 1)  # a bad role quoted from the file
    assert_cli_safe(cli("repair", NAME, cwd=folder), 1)  # refused, with the same quote
    with path.open("a", encoding="utf-8") as file:
        file.write(f'{{"role":"user","content":"{RLO}{ESC_TITLE}')  # torn
    assert_cli_safe(cli("show", NAME, cwd=folder), 1)
    assert_cli_safe(cli("check", NAME + b".missing", cwd=folder), 1)  # an OS error's path
    assert_cli_safe(cli("show", NAME, f"--bogus{RLO}\x1b", cwd=folder), 2)  # a usage error


@hostile_name
def test_repair_of_a_torn_line_prints_its_paths_escaped(folder: Path) -> None:
    with (folder / os.fsdecode(NAME)).open("a", encoding="utf-8") as file:
        file.write(f'{{"role":"user","content":"{RLO}')
    run = cli("repair", NAME, cwd=folder)
    assert_cli_safe(run, 0)
    assert "已把写到一半的最后一行（第 6 行，" in run[1]


@hostile_name
def test_the_demo_prints_its_path_escaped(tmp_path: Path) -> None:
    run = cli("--session", NAME, cwd=tmp_path, module="teaching.demo")
    assert_cli_safe(run, 0)
    assert run[1].splitlines()[0].endswith(": 这次运行前磁盘上有 0 条消息")


# --- the escaping itself -------------------------------------------------------------------


def test_visible_escapes_each_kind_and_keeps_what_can_be_seen() -> None:
    assert visible(f"a{ESC_TITLE}\n\t{RLO}{HIDDEN}{SURROGATE}\U000e0001") == (
        "a\\x1b]0;pwned\\x07\\n\\t\\u202e\\u200b\\u2028\\ufeff\\u3164\\ud800\\U000e0001"
    )
    seen = 'x "q" \\ 中文 \u3000\u00a0é 😀 ❤\ufe0f'  # quotes, backslash, spaces, VS16 emoji
    assert visible(seen) == visible_text(seen) == visible_line(seen) == seen
    assert visible_text(f"a\n\tb{RLO}") == "a\n\tb\\u202e"  # lines and tabs kept


ESCAPE_CUT = re.compile(r"\\(?:x[0-9a-f]?|u[0-9a-f]{0,3}|U[0-9a-f]{0,7}|)…")  # `\u00…`


@pytest.mark.parametrize("limit", range(1, 40))
def test_no_cut_splits_an_escape(limit: int) -> None:
    text = f"ab{ESC_TITLE}{RLO}\x00\U000e0001{SURROGATE}\u2028" * 3
    for cut in (visible_line(text, limit), shorten(text, limit)):
        assert len(cut) <= limit and not ESCAPE_CUT.search(cut), cut
    # inside a JSON string: what is kept must still decode, so no escape was cut
    body = ('\\u0000\\u001b\\"x\\\\' + f"{RLO}\u2028\U000e0001") * 3
    shown = visible_json(body, limit)
    assert len(shown) <= limit and raw_in(shown) == [], shown
    kept = json.loads(f'"{shown.removesuffix("…")}"')
    assert json.loads(f'"{body}"').startswith(kept), shown


def test_a_tool_call_preview_never_cuts_an_escape() -> None:
    message = AssistantMessage("", (ToolCall("a", "n", {"k": "\x00" * 40}),))
    row = repr(SessionView([message])).splitlines()[1]
    assert "a:n(" in row and not ESCAPE_CUT.search(row), row
    assert row.endswith('{"k":"\\u0000\\u0000\\u0000…)'), row


def test_a_tool_call_preview_shows_rlo_escaped() -> None:
    message = AssistantMessage("", (ToolCall("a", "n", {"file": f"{RLO}gnp.exe"}),))
    assert '{"file":"\\u202egnp.exe"}' in repr(SessionView([message]))


# --- the quick paths agree with the character-by-character rule ----------------------------

ALPHABET = st.sampled_from(
    list('ab "\\{}:,u0中文😀\u3000\u00a0\ufe0f')
    + list(f"{ESC_TITLE}{RLO}{HIDDEN}{SURROGATE}\n\t\r\x00\x85\u00ad\u115f\u2065\U000e0001")
)


def oracle_piece(char: str) -> str:
    """The rule, written out again: escape what the Unicode database calls invisible."""
    hidden = (
        unicodedata.category(char) in RAW_CATEGORIES
        or char in "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0"
        or ord(char) in (0x2065, *range(0xFFF0, 0xFFF9), *range(0xE0000, 0xE1000))
    )
    if not hidden:
        return char
    named = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
    code = ord(char)
    if char in named:
        return named[char]
    return f"\\x{code:02x}" if code < 0x100 else (
        f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    )  # fmt: skip


def oracle_fit(pieces: list[str], limit: int) -> str:
    if sum(map(len, pieces)) <= limit:
        return "".join(pieces)
    kept: list[str] = []
    for piece in pieces:
        if sum(map(len, kept)) + len(piece) > limit - 1:
            break
        kept.append(piece)
    return "".join(kept) + "…"


@given(st.text(ALPHABET, max_size=40), st.integers(1, 30))
def test_visible_line_and_visible_agree_with_the_rule(text: str, limit: int) -> None:
    pieces = [oracle_piece(char) for char in text]
    assert visible(text) == "".join(pieces)
    assert visible_line(text, limit) == oracle_fit(pieces, limit)


@given(st.text(ALPHABET, max_size=30), st.integers(1, 40))
def test_visible_json_agrees_with_the_rule(text: str, limit: int) -> None:
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    pieces = re.findall(r"\\u[0-9a-fA-F]{4}|\\.|.", body, re.DOTALL)
    expected = [
        piece
        if len(piece) > 1 or oracle_piece(piece) == piece
        else json.dumps(piece)[1:-1]  # ensure_ascii: JSON's own \uXXXX, pairs beyond U+FFFF
        for piece in pieces
    ]
    assert visible_json(body) == "".join(expected)
    assert visible_json(body, limit) == oracle_fit(expected, limit)
