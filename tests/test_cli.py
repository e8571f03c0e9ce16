"""`python -m mini_agent`: run as a reader runs it, in a subprocess; output and exit code."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from mini_agent import UserMessage, append_session, load_session
from mini_agent.cli import ELSEWHERE, EXIT_USAGE, build_parser, main
from mini_agent.live import chat
from mini_agent.messages import record_line
from mini_agent.teaching import demo
from mini_agent.teaching.text import english
from mini_agent.teaching.views import SessionView, TrimView, UnitsView
from mini_agent.visible import visible_line

from .helpers import multi_tool_history
from .platforms import MODE_BITS, PEAK_MEMORY, SYMLINKS, posix_only

ROOT = Path(__file__).resolve().parent.parent
SUBCOMMANDS = ["check", "show", "trim", "demo", "chat", "repair"]


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def cli(*args: str, cwd: Path) -> Run:
    done = subprocess.run(
        [sys.executable, "-m", "mini_agent", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
    )
    return Run(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    for message in multi_tool_history():
        append_session(path, message)
    return path


def lines(*rows: str) -> str:
    return "".join(row + "\n" for row in rows)


# --- help and usage -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command", [[], *([name] for name in SUBCOMMANDS)], ids=["top", *SUBCOMMANDS]
)
def test_every_command_has_help_that_documents_the_exit_codes(
    tmp_path: Path, command: list[str]
) -> None:
    run = cli(*command, "--help", cwd=tmp_path)
    assert run.code == 0 and run.err == ""
    assert run.out.startswith(f"usage: python -m mini_agent {' '.join(command)}".rstrip())
    for code in ("0  done", "1  a session problem", "2  usage error"):
        assert code in run.out


@pytest.mark.parametrize(
    "args",
    [[], ["nope"], ["check"], ["trim", "s.jsonl"], ["trim", "s.jsonl", "--max-chars", "0"],
     ["trim", "s.jsonl", "--max-chars", "ten"], ["demo"], ["show", "s.jsonl", "--bogus"]],
    ids=["no-command", "unknown-command", "no-file", "no-budget", "zero-budget", "text-budget",
         "no-session", "unknown-option"],
)  # fmt: skip
def test_usage_errors_exit_2(session: Path, args: list[str]) -> None:
    run = cli(*args, cwd=session.parent)
    assert run.code == EXIT_USAGE == 2 and run.out == ""
    assert "usage: python -m mini_agent" in run.err and "Traceback" not in run.err


def test_the_console_script_is_declared_and_runs(tmp_path: Path) -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^mini-agent = "mini_agent\.cli:program"$', pyproject, re.MULTILINE)
    script = Path(sys.executable).parent / "mini-agent"
    done = subprocess.run([script, "--help"], capture_output=True, encoding="utf-8", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("usage: mini-agent ")


# --- check -----------------------------------------------------------------------------------------


def test_check_counts_messages_by_role(session: Path) -> None:
    run = cli("check", "s.jsonl", cwd=session.parent)
    assert run == Run(0, "s.jsonl: 4 messages (1 user, 1 assistant, 2 tool), 353 chars\n", "")


def test_check_points_at_the_bad_line_with_a_visible_excerpt(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"role":"user","content":"x"}\n\n{"role":"user","content":"a\tb\x01c"\n')
    run = cli("check", "s.jsonl", cwd=tmp_path)
    assert run.code == 1 and run.out == ""
    assert run.err == lines(
        "s.jsonl:3: invalid session JSON at line 3: Invalid control character at column 28",
        '  3 | {"role":"user","content":"a\\tb\\x01c"',  # the line as it is, controls shown
    )


def test_check_names_a_bad_record(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"role":"user","content":"x"}\n{"role":"assistant","content":"y"}\n', encoding="utf-8"
    )
    run = cli("check", "s.jsonl", cwd=tmp_path)
    assert run.code == 1
    assert run.err.splitlines()[0] == (
        "s.jsonl:2: invalid session record at line 2: "
        "assistant needs toolCalls: an array of {id, name, input}"
    )


def test_check_shows_the_part_of_a_long_line_where_it_breaks(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"role":"user","content":"' + "x" * 500 + '"}}\n', encoding="utf-8")
    run = cli("check", "s.jsonl", cwd=tmp_path)
    excerpt = run.err.splitlines()[1]
    assert excerpt.startswith("  1 | …") and "}}" in excerpt and len(excerpt) < 90


def test_check_suggests_repair_for_a_torn_last_line(session: Path) -> None:
    with session.open("ab") as file:
        file.write(b'{"role":"assistant","content":"half')
    run = cli("check", "s.jsonl", cwd=session.parent)
    assert run.code == 1
    assert run.err.splitlines()[0].startswith("s.jsonl:5: invalid session JSON at line 5: ")
    assert run.err.splitlines()[2] == (
        "  the last line is incomplete (an interrupted write?): "
        "`python -m mini_agent repair s.jsonl` moves it to a backup file"
    )


def test_check_names_a_byte_order_mark_and_shows_it(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + lines('{"role":"user","content":"x"}').encode())
    run = cli("check", "s.jsonl", cwd=tmp_path)
    assert run.code == 1 and run.err == lines(
        "s.jsonl:1: invalid session JSON at line 1: "
        "byte-order mark (U+FEFF) at column 1; save as UTF-8 without BOM",
        '  1 | \\ufeff{"role":"user","content":"x"}',
    )


def test_check_escapes_format_characters_in_the_excerpt(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes('{"role":"user","content":"\u202eabc\u200b"} x\n'.encode())
    run = cli("check", "s.jsonl", cwd=tmp_path)
    assert run.err.splitlines()[1] == '  1 | {"role":"user","content":"\\u202eabc\\u200b"} x'


def test_check_offers_repair_only_for_a_record_cut_off(session: Path) -> None:
    complete = session.read_bytes()
    for tail, offered in [
        ('{"role":"user","content":"中'.encode()[:-1], True),  # cut inside a character
        (b'{"role":"user","content":"x"}\0\0\0\0', True),  # a record, then NULs a crash left
        (b'{"role":"user","content":"x"}x', False),
        (b'{"role":"user"oops', False),
    ]:
        session.write_bytes(complete + tail)
        run = cli("check", "s.jsonl", cwd=session.parent)
        assert run.code == 1 and ("repair s.jsonl" in run.err) == offered, tail
        assert (cli("repair", "s.jsonl", cwd=session.parent).code == 0) == offered, tail
        kept = tail.rstrip(b"\0") if tail.endswith(b"\0") else b""  # a whole record stays
        assert session.read_bytes() == (complete + kept if offered else complete + tail)


def test_excerpts_escape_every_invisible_character_and_never_cut_an_escape() -> None:
    hidden = "\ufeff\u202e\u200b\u00ad\u2028\x85\x00\ud800\U000e0001"
    assert visible_line("a" + hidden + "中") == (
        "a\\ufeff\\u202e\\u200b\\xad\\u2028\\x85\\x00\\ud800\\U000e0001中"
    )
    assert visible_line("\u3000 \u00a0é", 9) == "\u3000 \u00a0é"  # spaces one can see stay
    assert visible_line("ab\x00\x00\x00", 9) == "ab\\x00…"  # not "ab\\x00\\x…"
    assert visible_line("x" * 10, 10) == "x" * 10 and visible_line("x" * 11, 10) == "x" * 9 + "…"


MEASURE = """
import resource, sys
from mini_agent.cli import main
from mini_agent.session import SessionFormatError, load_session
if sys.argv[1] == "load":
    try:
        load_session(sys.argv[2])
    except SessionFormatError:
        pass
else:
    main(["check", sys.argv[2]])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def peak_kib(what: str, path: Path) -> int:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, what, str(path)],
        capture_output=True, encoding="utf-8", timeout=120, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.stdout.strip().isdigit(), done.stderr
    return int(done.stdout)


@posix_only(PEAK_MEMORY)
@pytest.mark.parametrize("start", [b"", b'{"role":"user","content":"'], ids=["zeros", "torn"])
def test_check_on_a_huge_bad_line_needs_no_more_memory_than_loading_it(
    tmp_path: Path, start: bytes
) -> None:
    path = tmp_path / "s.jsonl"
    with path.open("wb") as file:  # sparse: 160 MB of zeros that take no disk
        file.write(start)
        file.truncate(160 << 20)
    load, check = peak_kib("load", path), peak_kib("check", path)
    # quoting the line reads it a chunk at a time: nothing beyond what loading needed
    assert load > 300_000 and check <= 1.1 * load, (load, check)
    path.unlink()


@pytest.mark.parametrize(
    ("name", "message"),
    [("missing.jsonl", "missing.jsonl: No such file or directory"), (".", ".: Is a directory")],
)
def test_os_errors_exit_1_with_one_line(tmp_path: Path, name: str, message: str) -> None:
    for command in (["check", name], ["show", name], ["trim", name, "--max-chars", "9"],
                    ["repair", name]):  # fmt: skip
        run = cli(*command, cwd=tmp_path)
        assert run == Run(1, "", f"python -m mini_agent: {message}\n"), command


@posix_only(MODE_BITS)
def test_permission_denied_exits_1_without_a_traceback(
    session: Path, deny: Callable[[Path, int], None], capsys: pytest.CaptureFixture[str]
) -> None:
    deny(session, 0o200)  # no read permission (the kernel refuses: see the deny fixture)
    assert main(["check", str(session)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"python -m mini_agent: {session}: Permission denied\n"


# --- show and trim ----------------------------------------------------------------------------------


def test_show_prints_the_session_view(session: Path) -> None:
    run = cli("show", "s.jsonl", cwd=session.parent)
    with english():  # the CLI speaks English
        assert run == Run(0, repr(SessionView(multi_tool_history())) + "\n", "")
    assert run.out.startswith("4 messages, 353 chars\n  [0] user             read two files\n")


def test_show_units_groups_calls_with_their_results(session: Path) -> None:
    run = cli("show", "--units", "s.jsonl", cwd=session.parent)
    with english():
        assert run == Run(0, repr(UnitsView.of(multi_tool_history())) + "\n", "")
    assert "unit 2: [assistant(a,b) | tool a | tool b]" in run.out


def test_trim_shows_kept_and_dropped_units(session: Path) -> None:
    append_session(session, UserMessage("and now?"))
    run = cli("trim", "s.jsonl", "--max-chars", "360", cwd=session.parent)
    with english():
        assert run == Run(0, repr(TrimView(load_session(session), 360)) + "\n", "")
    assert run.out.splitlines() == [
        "budget 360 chars: kept 2 of 3 units, 4 of 5 messages, 347 chars used",
        "  dropped unit 1: [user]  43 chars",
        "  kept    unit 2: [assistant(a,b) | tool a | tool b]  310 chars",
        "  kept    unit 3: [user]  37 chars",
    ]


def test_trim_reports_the_chapters_budget_error(session: Path) -> None:
    run = cli("trim", "s.jsonl", "--max-chars", "100", cwd=session.parent)
    assert run.code == 1
    assert run.out.startswith("budget 100 chars: context budget cannot contain the smallest")
    assert run.err == (
        "s.jsonl: context budget cannot contain the smallest consistent message unit\n"
    )


def test_trim_of_an_empty_session_cannot_be_empty(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_bytes(b"")
    run = cli("trim", "s.jsonl", "--max-chars", "100", cwd=tmp_path)
    assert (run.code, run.err) == (1, "s.jsonl: context budget cannot be empty\n")


# --- demo ---------------------------------------------------------------------------------------------


def test_demo_runs_a_multi_tool_conversation_and_resumes_from_disk(tmp_path: Path) -> None:
    first = cli("demo", "--session", "d.jsonl", cwd=tmp_path)
    assert first == Run(
        0,
        lines(
            "d.jsonl: 0 messages on disk before this run",
            "user: read plan.txt and notes.txt",
            "[request 1] on disk: 1 messages, 56 chars; sent: 1 messages, 56 chars (no budget)",
            "[request 2] on disk: 4 messages, 480 chars; sent: 4 messages, 480 chars (no budget)",
            "assistant: plan.txt says to trim; notes.txt says whole units only",
            "d.jsonl: 5 messages on disk, 583 chars",
        ),
        "",
    )
    second = cli("demo", "--session", "d.jsonl", "--max-chars", "400", cwd=tmp_path)
    assert second == Run(
        0,
        lines(
            "d.jsonl: 5 messages on disk before this run",
            "user: which file mentions the budget?",
            "[request 1] on disk: 6 messages, 643 chars; sent: 2 messages, 163 chars (budget 400)",
            "[request 2] on disk: 8 messages, 962 chars; sent: 3 messages, 379 chars (budget 400)",
            "assistant: both do: plan.txt and notes.txt",
            "d.jsonl: 9 messages on disk, 1042 chars",
        ),
        "",
    )
    assert len(load_session(tmp_path / "d.jsonl")) == 9


def test_demo_records_an_unknown_tool_as_an_error_result(tmp_path: Path) -> None:
    for _ in range(3):
        run = cli("demo", "--session", "d.jsonl", cwd=tmp_path)
        assert run.code == 0
    assert "unknown tool: write" in (tmp_path / "d.jsonl").read_text(encoding="utf-8")
    assert "tool write-1!" in cli("show", "d.jsonl", cwd=tmp_path).out


def test_demo_stops_with_the_budget_error_and_keeps_the_session(tmp_path: Path) -> None:
    run = cli("demo", "--session", "d.jsonl", "--max-chars", "200", cwd=tmp_path)
    assert run.code == 1
    assert run.out.splitlines()[-1] == (
        "[request 1] on disk: 1 messages, 56 chars; sent: 1 messages, 56 chars (budget 200)"
    )
    assert run.err == (
        "d.jsonl: context budget cannot contain the smallest consistent message unit"
        " (budget 200 chars)\n"
    )
    assert cli("check", "d.jsonl", cwd=tmp_path).code == 0  # what was recorded still loads


def test_demo_refuses_a_damaged_session(session: Path) -> None:
    session.write_bytes(session.read_bytes() + b"{oops}\n")
    run = cli("demo", "--session", "s.jsonl", cwd=session.parent)
    assert run.code == 1 and run.err.startswith("s.jsonl:5: invalid session JSON at line 5")


# --- repair -------------------------------------------------------------------------------------------


def test_repair_moves_a_torn_last_line_to_a_backup(session: Path) -> None:
    complete = session.read_bytes()
    session.write_bytes(complete + b'{"role":"tool","content":"cut sho')
    run = cli("repair", "s.jsonl", cwd=session.parent)
    assert run == Run(
        0, "s.jsonl: cut the torn last line 5 (33 bytes) into s.jsonl.torn; 4 messages load\n", ""
    )
    assert session.read_bytes() == complete
    assert (session.parent / "s.jsonl.torn").read_bytes() == b'{"role":"tool","content":"cut sho'
    again = cli("repair", "s.jsonl", cwd=session.parent)
    assert again == Run(0, "s.jsonl: nothing to repair, 4 messages load\n", "")


def test_repair_never_overwrites_an_older_backup(session: Path) -> None:
    complete = session.read_bytes()
    for tail in (b'{"role":"us', b'{"ro'):
        session.write_bytes(complete + tail)
        assert cli("repair", "s.jsonl", cwd=session.parent).code == 0
    assert (session.parent / "s.jsonl.torn").read_bytes() == b'{"role":"us'
    assert (session.parent / "s.jsonl.torn.2").read_bytes() == b'{"ro'


@posix_only(SYMLINKS)
def test_repair_refuses_a_symlink_and_names_it(session: Path) -> None:
    complete = session.read_bytes()
    session.write_bytes(complete + b'{"ro')
    link = session.parent / "link.jsonl"
    link.symlink_to(session.name)
    run = cli("repair", "link.jsonl", cwd=session.parent)
    assert run.code == 1 and run.out == "" and "link.jsonl" in run.err
    assert "a symbolic link: sessions are not followed through links" in run.err
    assert link.is_symlink() and session.read_bytes() == complete + b'{"ro'


REFUSED = "s.jsonl: repair refused, file left untouched: "
ADVICE = (
    "; to keep what is readable, copy the file, then delete the damaged lines in an editor "
    "(`python -m mini_agent check FILE` names each)"
)


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (b'{"role":"us\n{"role":"user","content":"x"}\n',
         ["s.jsonl:5: invalid session JSON at line 5: Unterminated string starting at column 9",
          '  5 | {"role":"us',
          REFUSED + "line 5 is damaged, and it is not the last line: "
          "repair only cuts a torn last line" + ADVICE]),
        (b'{"role":"us\n{"role":"user","content":"x"}\n{"role":"us',
         ["s.jsonl:5: invalid session JSON at line 5: Unterminated string starting at column 9",
          '  5 | {"role":"us',
          REFUSED + "line 5 is damaged, not only the torn last line 7: "
          "repair only cuts a torn last line" + ADVICE]),
        (b'{"role":"nope","content":"x"}',
         ['s.jsonl:5: invalid session record at line 5: unknown role "nope"',
          '  5 | {"role":"nope","content":"x"}',
          REFUSED + "the last line 5 is not a torn record: it is complete JSON, but not a record"
          + ADVICE]),
        (b'{"role":"user","content":"x"}\0\0\0\0x',
         ["s.jsonl:5: invalid session JSON at line 5: Extra data at column 30",
          '  5 | {"role":"user","content":"x"}\\x00\\x00\\x00\\x00x',
          REFUSED + "the last line 5 is not a torn record: it holds a control byte (a NUL?), "
          "which no record holds" + ADVICE]),
        (b'"role":"user","content":"x"}',
         ["s.jsonl:5: invalid session JSON at line 5: Extra data at column 7",
          '  5 | "role":"user","content":"x"}',
          REFUSED + "the last line 5 is not a torn record: it does not start with `{`, "
          "as every record does" + ADVICE]),
    ],
    ids=["bad-line-before-the-last", "bad-line-before-a-torn-last", "complete-but-invalid-last",
         "record-NULs-then-more", "a-record-cut-at-its-start"],
)  # fmt: skip
def test_repair_refuses_other_damage_says_why_and_leaves_the_file(
    session: Path, damage: bytes, said: list[str]
) -> None:
    damaged = session.read_bytes() + damage
    session.write_bytes(damaged)
    run = cli("repair", "s.jsonl", cwd=session.parent)
    assert (run.code, run.out, run.err.splitlines()) == (1, "", said)
    assert session.read_bytes() == damaged
    assert sorted(p.name for p in session.parent.iterdir()) == ["s.jsonl"]


def test_an_all_zero_file_is_refused_not_cut_to_an_empty_session(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with path.open("wb") as file:
        file.truncate(1 << 20)  # what a crash can leave: the size grew, the data never came
    run = cli("repair", "s.jsonl", cwd=tmp_path)
    assert run.code == 1 and run.err.splitlines() == [
        "s.jsonl:1: invalid session JSON at line 1: Expecting value at column 1",
        "  1 | " + "\\x00" * 17 + "…",
        REFUSED + "the last line 1 is not a torn record: every byte of the file is NUL: "
        "no record survived; move the file away" + ADVICE,
    ]
    assert path.stat().st_size == 1 << 20 and sorted(tmp_path.iterdir()) == [path]


# --- big sessions ----------------------------------------------------------------------------------


def test_a_hundred_thousand_lines_check_and_show(tmp_path: Path) -> None:
    history = multi_tool_history()
    text = "".join(record_line(history[n % 4]) + "\n" for n in range(100_000))
    (tmp_path / "s.jsonl").write_text(text, encoding="utf-8")
    check = cli("check", "s.jsonl", cwd=tmp_path)
    assert check == Run(
        0, "s.jsonl: 100000 messages (25000 user, 25000 assistant, 50000 tool), 8825000 chars\n", ""
    )
    show = cli("show", "s.jsonl", cwd=tmp_path)
    assert show.code == 0 and show.err == ""
    rows = show.out.splitlines()
    assert len(rows) == 100_001 and rows[-1] == "  [99999] tool b           contents of b"


def test_show_piped_into_a_reader_that_stops_early_is_quiet(tmp_path: Path) -> None:
    text = "".join(record_line(UserMessage(f"message {n}")) + "\n" for n in range(50_000))
    (tmp_path / "s.jsonl").write_bytes(text.encode())
    process = subprocess.Popen(
        [sys.executable, "-m", "mini_agent", "show", "s.jsonl"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    # a text stream ends its lines as the system does: \r\n on Windows
    assert process.stdout.readline() == f"50000 messages, {len(text)} chars{os.linesep}".encode()
    process.stdout.close()  # like `| head -1`
    assert process.stderr.read() == b""
    assert process.wait(timeout=60) == 1


# --- plain argparse ------------------------------------------------------------------------------


def test_demo_and_chat_bring_their_own_arguments_and_run() -> None:
    parser = build_parser("mini-agent")
    args = parser.parse_args(["demo", "--session", "f", "--max-chars", "9"])
    assert (args.run, args.session, args.max_chars) == (demo.run, "f", 9)
    chat_args = ["chat", "--session", "f", "--base-url", "http://127.0.0.1:1/v1", "--model", "m"]
    args = parser.parse_args([*chat_args, "--timeout", "2.5"])
    assert (args.run, args.timeout) == (chat.run, 2.5)


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "soon"])
def test_a_timeout_that_is_not_a_positive_number_is_a_usage_error(
    tmp_path: Path, timeout: str
) -> None:
    run = cli("chat", "--session", "s.jsonl", "--base-url", "http://127.0.0.1:1/v1",
              "--model", "m", "--timeout", timeout, cwd=tmp_path)  # fmt: skip
    assert run.code == 2 and "argument --timeout:" in run.err
    assert not (tmp_path / "s.jsonl").exists()


# --- what the CLI imports, and whose streams it touches ----------------------------------------

IMPORTED = """
import sys
from mini_agent.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(" ".join(sorted(m for m in sys.modules if m.startswith(("mini_agent.teaching",
                                                              "mini_agent.live")))))
"""


@pytest.mark.parametrize(
    ("args", "imported"),
    [(["check", "s.jsonl"], ""), (["repair", "s.jsonl"], ""), (["--help"], ""),
     (["show", "s.jsonl"], "mini_agent.teaching.views"),
     (["demo", "--help"], "mini_agent.teaching.demo"),
     (["chat", "--help"], "mini_agent.live.chat")],
    ids=["check", "repair", "help", "show", "demo", "chat"],
)  # fmt: skip
def test_a_command_imports_only_what_it_runs(session: Path, args: list[str], imported: str) -> None:
    done = subprocess.run([sys.executable, "-c", IMPORTED, *args], cwd=session.parent,
                          capture_output=True, encoding="utf-8", timeout=60, check=True)  # fmt: skip
    modules = done.stdout.splitlines()[-1].split()
    assert (imported in modules) if imported else modules == [], modules
    assert "mini_agent.live.chat" not in modules or args[0] == "chat", modules
    assert "mini_agent.teaching.demo" not in modules or args[0] == "demo", modules


@pytest.mark.parametrize("name", sorted(ELSEWHERE))
def test_the_help_line_of_a_command_elsewhere_is_its_docstrings_first_line(name: str) -> None:
    module, help_line = ELSEWHERE[name]
    doc = {"demo": demo.__doc__, "chat": chat.__doc__}[name] or ""
    assert module == {"demo": demo.__name__, "chat": chat.__name__}[name]
    assert doc.strip().splitlines()[0] == help_line


def test_main_called_as_a_library_leaves_the_streams_alone(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["check", str(session)]) == 0
    assert sys.stdout is out and out.errors == "strict"


def test_the_program_never_fails_on_a_terminal_that_cannot_show_chinese(tmp_path: Path) -> None:
    append_session(tmp_path / "s.jsonl", UserMessage("记忆"))
    done = subprocess.run(
        [sys.executable, "-m", "mini_agent", "show", "s.jsonl"],
        cwd=tmp_path, capture_output=True, timeout=60,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
    )  # fmt: skip
    assert done.returncode == 0 and done.stderr == b""
    assert done.stdout.decode("ascii").splitlines()[1].endswith("user             \\u8bb0\\u5fc6")
