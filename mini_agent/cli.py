"""`python -m mini_agent` (or `mini-agent`): look at, trim, demo and repair session files.

Plain argparse: each subcommand is a parser with its arguments and a `run(args) -> int`
(`demo` and `chat` bring their own `add_arguments` and `run`, imported only when chosen). A
command returns its exit code, or raises: `main` turns a `SessionFormatError`, a
`ContextBudgetError` or an `OSError` into exit 1 with a message on stderr, never a traceback.
Every line it prints goes through `visible`: a file's or a model's text, and a path, can hold
ESC or U+202E, and a terminal would act on them.
"""

from __future__ import annotations

import argparse
import codecs
import importlib
import io
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, BinaryIO, NoReturn, TextIO

from . import durable
from .cli_arguments import positive_int
from .context import ContextBudgetError, estimate_context_chars
from .durable import CHUNK
from .messages import Message
from .repair import RepairRefusedError, repair_session, why_repair_refuses
from .session import INVALID_JSON, SessionFormatError, parse_session_lines
from .visible import visible, visible_line, visible_text

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE = 0, 1, 2
EXIT_CODES = """\
exit status:
  0  done (the session loads; the context fits; the repair is done or not needed)
  1  a session problem (invalid line, refused repair), a budget that cannot fit,
     or an OS error (missing file, permission, a directory …), told in one line on stderr
  2  usage error (unknown option, bad argument)"""
EXCERPT_CHARS = 72
# Subcommands whose code lives elsewhere (`demo` in the notebooks' apparatus, `chat` in the
# live client): imported only when chosen, so their help line is written here, equal to the
# first line of the module's docstring (a test checks).
ELSEWHERE = {
    "demo": (
        "mini_agent.teaching.demo",
        "run a scripted multi-tool conversation on a session file; run it again to resume",
    ),
    "chat": (
        "mini_agent.live.chat",
        "talk to a live OpenAI-compatible model: the chapter's loop, assembled by hand",
    ),
}


def say(text: str, file: TextIO | None = None) -> None:
    """Print `text` (lines kept, every other hidden character escaped): the CLI's one print."""
    print(visible_text(text), file=sys.stdout if file is None else file)


# --- loading, with what an editor or CI needs to point at a bad line -----------------------


def read_session(path: str) -> list[Message]:
    """The session at `path`, as `load_session` reads it; but a missing file is an error
    here: someone named a file on the command line and would not want a silent `[]`."""
    return parse_session_lines(durable.read_lines(path), path)


def format_error(err: SessionFormatError, prog: str = "python -m mini_agent") -> str:
    """`FILE:LINE: message`, then the bad line shortened with its invisible characters shown.

    Reads the file again only to quote it, a chunk at a time: memory stays bounded however
    long the line. A file that has gone or shrunk meanwhile is not quoted.
    """
    path = visible(str(err.path))
    lines = [f"{path}:{err.line}: {visible(str(err))}"]
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
                    f"`{prog} repair {path}` moves it to a backup file"
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
    say(f"{visible(args.file)}: {len(messages)} messages ({counts}), {chars} chars")
    return EXIT_OK


def _show_arguments(parser: argparse.ArgumentParser) -> None:
    _file_argument(parser)
    parser.add_argument(
        "--units", action="store_true", help="group the messages into consistent units"
    )


def run_show(args: argparse.Namespace) -> int:
    from .teaching.text import english
    from .teaching.views import SessionView, UnitsView

    messages = read_session(args.file)
    with english():  # the views speak Chinese in notebooks
        say(repr(UnitsView.of(messages) if args.units else SessionView(messages)))
    return EXIT_OK


def _trim_arguments(parser: argparse.ArgumentParser) -> None:
    _file_argument(parser)
    parser.add_argument(
        "--max-chars", type=positive_int, required=True, metavar="N", help="the budget"
    )


def run_trim(args: argparse.Namespace) -> int:
    from .teaching.text import english
    from .teaching.views import TrimView

    view = TrimView(read_session(args.file), args.max_chars)
    with english():
        say(repr(view))
    if view.error is not None:
        say(f"{visible(args.file)}: {visible(view.error)}", sys.stderr)
        return EXIT_PROBLEM
    return EXIT_OK


def run_repair(args: argparse.Namespace) -> int:
    try:
        report = repair_session(args.file)
    except RepairRefusedError as err:
        say(format_error(err, args.prog), sys.stderr)
        reason = visible(err.reason)
        say(f"{visible(args.file)}: repair refused, file left untouched: {reason}", sys.stderr)
        return EXIT_PROBLEM
    say(visible(report.summary()))
    return EXIT_OK


# --- the program ----------------------------------------------------------------------------


class CommandParser(argparse.ArgumentParser):
    """argparse's parser, with two differences: a usage error quotes the command line through
    `visible` and exits `EXIT_USAGE`; and a subcommand whose code lives elsewhere (`elsewhere`,
    a module with `add_arguments` and `run`) imports it only when it is chosen."""

    elsewhere: str | None = None
    _loaded = False

    def _load(self) -> None:
        if self.elsewhere is not None and not self._loaded:
            module = importlib.import_module(self.elsewhere)
            module.add_arguments(self)
            self.description = (module.__doc__ or "").strip()
            self.set_defaults(run=module.run)
            self._loaded = True

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._load()  # argparse hands a chosen subcommand its arguments through this method
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._load()
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {visible(message)}\n")


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = CommandParser(
        prog=prog or _program_name(),
        description="Chapter 34's session files (JSONL), from the command line.\n"
        "`COMMAND --help` tells more about each command.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=CommandParser
    )

    def command(
        name: str, run: Callable[[argparse.Namespace], int] | None, help: str, description: str
    ) -> CommandParser:
        sub = subparsers.add_parser(
            name,
            help=help,
            description=description,
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.set_defaults(run=run, prog=parser.prog)
        return sub

    def elsewhere(name: str) -> None:
        module, help = ELSEWHERE[name]
        command(name, None, help, help).elsewhere = module

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
    elsewhere("demo")
    elsewhere("chat")
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


def _program_name() -> str:
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name == "mini-agent" else "python -m mini_agent"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; return its exit code (the parser exits `EXIT_USAGE` itself on a
    usage error). Touches no global state: a library may call it."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
    except SessionFormatError as err:
        say(format_error(err, parser.prog), sys.stderr)
        return EXIT_PROBLEM
    except ContextBudgetError as err:
        say(f"{parser.prog}: {visible(str(err))}", sys.stderr)
        return EXIT_PROBLEM
    except BrokenPipeError:
        _silence_stdout()  # the reader stopped reading (`| head`): not worth a message
        return EXIT_PROBLEM
    except OSError as err:
        say(f"{parser.prog}: {_os_error(err)}", sys.stderr)
        return EXIT_PROBLEM
    return code


def program() -> NoReturn:
    """The process entry (`python -m mini_agent`, the `mini-agent` script): this process's
    own streams never fail on a character its terminal's encoding lacks, then `main`."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    sys.exit(main())


def _os_error(err: OSError) -> str:
    if err.filename is not None and err.strerror:
        return f"{visible(str(err.filename))}: {visible(err.strerror)}"
    return visible(str(err))


def _silence_stdout() -> None:
    # Python would complain again when it flushes stdout at exit.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
