"""`python -m mini_agent` (or `mini-agent`): look at, trim, demo and repair session files.

Plain argparse: each subcommand is a parser with its arguments and a `run(args) -> int`
(`demo` and `chat` bring their own `add_arguments` and `run`). A command returns its exit
code, or raises: `main` turns a `SessionFormatError`, a `ContextBudgetError` or an `OSError`
into exit 1 with a message on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import codecs
import io
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import ModuleType
from typing import BinaryIO

from . import durable
from .arguments import positive_int
from .context import ContextBudgetError, estimate_context_chars
from .live import chat
from .messages import Message
from .repair import CHUNK, RepairRefusedError, repair_session, why_repair_refuses
from .session import INVALID_JSON, SessionFormatError, parse_session_bytes
from .teaching import demo
from .teaching.text import english
from .teaching.views import SessionView, TrimView, UnitsView
from .visible import visible_line

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE = 0, 1, 2
EXIT_CODES = """\
exit status:
  0  done (the session loads; the context fits; the repair is done or not needed)
  1  a session problem (invalid line, refused repair), a budget that cannot fit,
     or an OS error (missing file, permission, a directory …), told in one line on stderr
  2  usage error (unknown option, bad argument)"""
EXCERPT_CHARS = 72


# --- loading, with what an editor or CI needs to point at a bad line -----------------------


def read_session(path: str) -> list[Message]:
    """The session at `path`, as `load_session` reads it; but a missing file is an error
    here: someone named a file on the command line and would not want a silent `[]`."""
    return parse_session_bytes(durable.read_session_file(path), path)


def format_error(err: SessionFormatError, prog: str = "python -m mini_agent") -> str:
    """`FILE:LINE: message`, then the bad line shortened with its invisible characters shown.

    Reads the file again only to quote it, a chunk at a time: memory stays bounded however
    long the line. A file that has gone or shrunk meanwhile is not quoted.
    """
    lines = [f"{err.path}:{err.line}: {err}"]
    try:
        with open(err.path, "rb") as file:
            start = _line_start(file, err.line)
            if start is None:
                return lines[0]
            lines.append(f"  {err.line} | {excerpt(_Line(file, start), err.column)}")
            line = _Line(file, start)
            torn = err.phrase == INVALID_JSON and why_repair_refuses(err, line) is None
            if torn and not line.terminated:
                lines.append(
                    "  the last line is incomplete (an interrupted write?): "
                    f"`{prog} repair {err.path}` moves it to a backup file"
                )
    except OSError:
        pass
    return "\n".join(lines)


def _line_start(file: BinaryIO, number: int) -> int | None:
    """The offset where physical line `number` starts; `None` when the file has fewer."""
    offset, newlines = 0, 0
    while newlines < number - 1:
        chunk = file.read(CHUNK)
        if not chunk:
            return None
        count = chunk.count(b"\n")
        if newlines + count >= number - 1:
            at = -1
            for _ in range(number - 1 - newlines):
                at = chunk.index(b"\n", at + 1)
            return offset + at + 1
        newlines, offset = newlines + count, offset + len(chunk)
    return 0


class _Line:
    """The bytes of the line that starts at `start`, a chunk at a time, without its newline;
    `terminated` tells, once read to its end, whether a newline ended it."""

    def __init__(self, file: BinaryIO, start: int) -> None:
        self.file, self.start, self.terminated = file, start, False

    def __iter__(self) -> Iterator[bytes]:
        self.file.seek(self.start)
        while chunk := self.file.read(CHUNK):
            end = chunk.find(b"\n")
            if end >= 0:
                self.terminated = True
                if end:
                    yield chunk[:end]
                return
            yield chunk


def excerpt(line: Iterable[bytes], column: int | None = None, limit: int = EXCERPT_CHARS) -> str:
    """The line, shortened; when the error's column lies beyond the cut, the part around it.

    `line` gives the line's bytes in pieces; only as many are read as the excerpt shows.
    """
    skip = column - limit // 2 if column is not None and column > limit // 2 else 0
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    head, window, seen = "", "", 0  # text[:limit + 1], text[skip:skip + limit]

    def take(text: str) -> None:
        nonlocal head, window, seen
        head += text[: max(limit + 1 - seen, 0)]
        window += text[max(skip - seen, 0) : max(skip + limit - seen, 0)]
        seen += len(text)

    for piece in line:
        take(decoder.decode(piece))
        if seen > skip + limit:
            break
    else:
        take(decoder.decode(b"", final=True))
    if skip and len(head) > limit:
        return "…" + visible_line(window, limit - 1)
    return visible_line(head, limit)


# --- the built-in commands -----------------------------------------------------------------


def _file_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a session file (JSONL)")


def run_check(args: argparse.Namespace) -> int:
    messages = read_session(args.file)
    roles = Counter(message.role for message in messages)
    counts = ", ".join(f"{roles[role]} {role}" for role in ("user", "assistant", "tool"))
    chars = estimate_context_chars(messages)
    print(f"{args.file}: {len(messages)} messages ({counts}), {chars} chars")
    return EXIT_OK


def _show_arguments(parser: argparse.ArgumentParser) -> None:
    _file_argument(parser)
    parser.add_argument(
        "--units", action="store_true", help="group the messages into consistent units"
    )


def run_show(args: argparse.Namespace) -> int:
    messages = read_session(args.file)
    print(repr(UnitsView.of(messages) if args.units else SessionView(messages)))
    return EXIT_OK


def _trim_arguments(parser: argparse.ArgumentParser) -> None:
    _file_argument(parser)
    parser.add_argument(
        "--max-chars", type=positive_int, required=True, metavar="N", help="the budget"
    )


def run_trim(args: argparse.Namespace) -> int:
    view = TrimView(read_session(args.file), args.max_chars)
    print(repr(view))
    if view.error is not None:
        print(f"{args.file}: {view.error}", file=sys.stderr)
        return EXIT_PROBLEM
    return EXIT_OK


def run_repair(args: argparse.Namespace) -> int:
    try:
        report = repair_session(args.file)
    except RepairRefusedError as err:
        print(format_error(err, args.prog), file=sys.stderr)
        print(f"{args.file}: repair refused, file left untouched: {err.reason}", file=sys.stderr)
        return EXIT_PROBLEM
    print(report.summary())
    return EXIT_OK


# --- the program ----------------------------------------------------------------------------


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog or _program_name(),
        description="Chapter 34's session files (JSONL), from the command line.\n"
        "`COMMAND --help` tells more about each command.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(
        name: str, run: Callable[[argparse.Namespace], int], help: str, description: str
    ) -> argparse.ArgumentParser:
        sub = subparsers.add_parser(
            name,
            help=help,
            description=description,
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.set_defaults(run=run, prog=parser.prog)
        return sub

    _file_argument(
        command(
            "check",
            run_check,
            "check that every line loads; count the messages by role",
            "Load FILE strictly and count its messages by role. On a bad line, print\n"
            "FILE:LINE: and the chapter's error, then an excerpt of the line (control and\n"
            "format characters shown as escapes), as editors and CI annotations expect.",
        )
    )
    _show_arguments(
        command(
            "show",
            run_show,
            "show the session, one message a line (or --units)",
            "Print FILE's messages and the characters each takes on disk; with --units,\n"
            "the consistent units that trim_context keeps or drops whole.",
        )
    )
    _trim_arguments(
        command(
            "trim",
            run_trim,
            "show what a budget keeps and drops, unit by unit",
            "Print what trim_context(messages, N) would send: units kept and dropped and\n"
            "the characters used, or the chapter's budget error (exit 1).",
        )
    )
    demo.add_arguments(command("demo", demo.run, *_described_by(demo)))
    chat.add_arguments(command("chat", chat.run, *_described_by(chat)))
    _file_argument(
        command(
            "repair",
            run_repair,
            "cut a torn last line into a backup file; refuse other damage",
            "When the last line is a record cut off by an interrupted append (it starts\n"
            "with `{`, lacks its newline and breaks off), copy it to FILE.torn (FILE.torn.2,\n"
            "… if that exists), synced, then cut it off FILE in place and sync. Refuse any\n"
            "other damage (exit 1, FILE untouched). Nothing to cut: exit 0, FILE untouched.\n"
            "A failed repair leaves FILE as it was and nothing beside it; what a killed one\n"
            "left, the next run removes or uses.",
        )
    )
    return parser


def _described_by(module: ModuleType) -> tuple[str, str]:
    """A module's help line and description: its docstring's first line, and all of it."""
    doc = (module.__doc__ or "").strip()
    return doc.splitlines()[0], doc


def _program_name() -> str:
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name == "mini-agent" else "python -m mini_agent"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; return its exit code (argparse exits 2 itself on a usage error)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")  # never crash on a terminal's charset
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with english():  # the views `show` and `trim` print speak Chinese in notebooks
            code: int = args.run(args)
    except SessionFormatError as err:
        print(format_error(err, parser.prog), file=sys.stderr)
        return EXIT_PROBLEM
    except ContextBudgetError as err:
        print(f"{parser.prog}: {err}", file=sys.stderr)
        return EXIT_PROBLEM
    except BrokenPipeError:
        _silence_stdout()  # the reader stopped reading (`| head`): not worth a message
        return EXIT_PROBLEM
    except OSError as err:
        print(f"{parser.prog}: {_os_error(err)}", file=sys.stderr)
        return EXIT_PROBLEM
    return code


def _os_error(err: OSError) -> str:
    if err.filename is not None and err.strerror:
        return f"{err.filename}: {err.strerror}"
    return str(err)


def _silence_stdout() -> None:
    # Python would complain again when it flushes stdout at exit.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
