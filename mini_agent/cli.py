"""`python -m mini_agent` (or `mini-agent`): look at, trim, demo and repair session files.

Every subcommand is a `Command`: a name, a help line, `add_arguments(parser)` and
`run(args) -> int`. A module that exposes those two functions becomes a subcommand with one
line in `COMMANDS`, e.g. `module_command("mini_agent.chat")`; `demo` is registered that way.
A command returns its exit code, or raises: `main` turns a `SessionFormatError`, a
`ContextBudgetError` or an `OSError` into exit 1 with a message on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .arguments import positive_int
from .context import ContextBudgetError, estimate_context_chars
from .messages import Message
from .repair import repair_session
from .session import INVALID_JSON, SessionFormatError, parse_session_bytes
from .teaching.text import english
from .teaching.views import SessionView, TrimView, UnitsView, visible_line

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE = 0, 1, 2
EXIT_CODES = """\
exit status:
  0  done (the session loads; the context fits; the repair is done or not needed)
  1  a session problem (invalid line, refused repair), a budget that cannot fit,
     or an OS error (missing file, permission, a directory …), told in one line on stderr
  2  usage error (unknown option, bad argument)"""
EXCERPT_CHARS = 72


@dataclass(frozen=True)
class Command:
    """One subcommand: `run` returns an exit code or raises one of the errors `main` maps."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    description: str = ""  # the subcommand's --help text; `help` when empty


def module_command(module_name: str) -> Command:
    """The subcommand a module provides: named after the module, helped by its docstring's
    first line, with the module's `add_arguments(parser)` and `run(args) -> int`."""
    module = importlib.import_module(module_name)
    doc = (module.__doc__ or "").strip()
    return Command(
        name=module_name.rpartition(".")[2],
        help=doc.splitlines()[0] if doc else "",
        add_arguments=module.add_arguments,
        run=module.run,
        description=doc,
    )


# --- loading, with what an editor or CI needs to point at a bad line -----------------------


def read_session(path: str) -> list[Message]:
    """The session at `path`, strictly; unlike `load_session`, a missing file is an error
    here: someone named a file on the command line and would not want a silent `[]`."""
    with open(path, "rb") as file:
        return parse_session_bytes(file.read(), path)


def format_error(err: SessionFormatError, prog: str = "python -m mini_agent") -> str:
    """`FILE:LINE: message`, then the bad line shortened with its control characters shown.

    Reads the file again only to quote it; a file that has gone meanwhile is not quoted.
    """
    lines = [f"{err.path}:{err.line}: {err}"]
    try:
        data = Path(err.path).read_bytes()
    except OSError:
        return lines[0]
    physical = data.split(b"\n")
    if err.line <= len(physical):
        text = physical[err.line - 1].decode("utf-8", errors="replace")
        lines.append(f"  {err.line} | {excerpt(text, _column(err))}")
    torn = err.line == len(physical) and not data.endswith(b"\n") and err.phrase == INVALID_JSON
    if torn:
        lines.append(
            "  the last line is incomplete (an interrupted write?): "
            f"`{prog} repair {err.path}` moves it to a backup file"
        )
    return "\n".join(lines)


def _column(err: SessionFormatError) -> int | None:
    cause = err.__cause__
    return getattr(cause, "colno", None)


def excerpt(text: str, column: int | None = None, limit: int = EXCERPT_CHARS) -> str:
    """The line, shortened; when the error's column lies beyond the cut, the part around it."""
    if column is not None and column > limit // 2 and len(text) > limit:
        start = column - limit // 2
        return "…" + visible_line(text[start:], limit - 1)
    return visible_line(text, limit)


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
    except SessionFormatError as err:
        print(format_error(err, args.prog), file=sys.stderr)
        print(
            f"{args.file}: not a torn last line; repair refused, file left untouched",
            file=sys.stderr,
        )
        return EXIT_PROBLEM
    print(report.summary())
    return EXIT_OK


COMMANDS: tuple[Command, ...] = (
    Command(
        "check",
        "check that every line loads; count the messages by role",
        _file_argument,
        run_check,
        "Load FILE strictly and count its messages by role. On a bad line, print\n"
        "FILE:LINE: and the chapter's error, then an excerpt of the line (control\n"
        "characters shown as JSON escapes), as editors and CI annotations expect.",
    ),
    Command(
        "show",
        "show the session, one message a line (or --units)",
        _show_arguments,
        run_show,
        "Print FILE's messages and the characters each takes on disk; with --units,\n"
        "the consistent units that trim_context keeps or drops whole.",
    ),
    Command(
        "trim",
        "show what a budget keeps and drops, unit by unit",
        _trim_arguments,
        run_trim,
        "Print what trim_context(messages, N) would send: units kept and dropped and\n"
        "the characters used, or the chapter's budget error (exit 1).",
    ),
    module_command("mini_agent.teaching.demo"),
    module_command("mini_agent.live.chat"),
    Command(
        "repair",
        "cut a torn last line into a backup file; refuse other damage",
        _file_argument,
        run_repair,
        "When exactly the last line is incomplete and lacks its newline, move it to\n"
        "FILE.torn (FILE.torn.2, … if that exists) and replace FILE atomically by its\n"
        "complete lines (temporary file, fsync, rename). Refuse any damage before the\n"
        "last line (exit 1, FILE untouched). Nothing to cut: exit 0, FILE untouched.",
    ),
)


# --- the program ----------------------------------------------------------------------------


def build_parser(
    commands: Sequence[Command] = COMMANDS, prog: str | None = None
) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog or _program_name(),
        description="Chapter 34's session files (JSONL), from the command line.\n"
        "`COMMAND --help` tells more about each command.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in commands:
        sub = subparsers.add_parser(
            command.name,
            help=command.help,
            description=command.description or command.help,
            epilog=EXIT_CODES,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_arguments(sub)
        sub.set_defaults(run=command.run, prog=parser.prog)
    return parser


def _program_name() -> str:
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name == "mini-agent" else "python -m mini_agent"


def main(argv: Sequence[str] | None = None, *, commands: Sequence[Command] = COMMANDS) -> int:
    """Run one subcommand; return its exit code (argparse exits 2 itself on a usage error)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")  # never crash on a terminal's charset
    parser = build_parser(commands)
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
