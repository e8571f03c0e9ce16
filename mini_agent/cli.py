"""`python -m mini_agent` (or `mini-agent`): look at, trim and repair session files, and chat.
Every line printed goes through `visible`; every word is `cli_text`'s, argparse's too."""

import argparse
import contextlib
import importlib
import io
import os
import re
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO, NoReturn, TextIO

from . import cli_text as text
from . import store
from .cli_text import ARGPARSE, COMMANDS, positive_int
from .context import ContextBudgetError, context_units, estimate_context_chars
from .glosses import phrase_first
from .listing import SessionListing, TrimListing, UnitsListing, display_width
from .repair import RepairRefusedError, repair_session, why_repair_refuses
from .session import INVALID_JSON, SessionFormatError, parse_session_lines
from .visible import visible, visible_line, visible_text

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE = 0, 1, 2
# subcommands imported only when chosen, each with `add_arguments` and `run`
ELSEWHERE = {"chat": "mini_agent.live.chat"}
# the kit's own refusals of a path (a link, a file others may write …): not the system's error
REFUSALS = (store.SymlinkRefusedError, store.HardLinkRefusedError, store.UntrustedFileError,
            store.NotARegularFileError)  # fmt: skip


def say(said: str, file: TextIO | None = None) -> None:
    """Print `said`, lines kept and every other hidden character escaped."""
    print(visible_text(said), file=sys.stdout if file is None else file)


def format_error(err: SessionFormatError, prog: str = "python -m mini_agent") -> str:
    """`FILE:LINE: ` and the chapter's phrase, then `phrase_first`'s lines and the bad line."""
    path = visible(str(err.path))
    first, *rest = phrase_first(err)
    lines = [f"{path}:{err.line}: {visible(first)}", *(f"  {visible(line)}" for line in rest)]
    try:
        with open(err.path, "rb") as file:
            start = _line_start(file, err.line)
            if start is None:  # the file has shrunk meanwhile
                return "\n".join(lines)
            head = file.read(4 * ((err.column or 0) + 80)).partition(b"\n")[0]  # 4 bytes a char
            lines.append(f"  {err.line} | {excerpt(head, err.column)}")
            line = _Line(file, start)
            torn = err.phrase == INVALID_JSON and why_repair_refuses(err, line) is None
            if torn and not line.terminated:
                lines.append(text.torn_hint(f"{prog} repair {path}"))
    except OSError:
        pass
    return "\n".join(lines)


def _line_start(file: BinaryIO, number: int) -> int | None:
    """The offset where line `number` starts; `None` when the file has fewer."""
    for _ in range(number - 1):
        while not (piece := file.readline(store.CHUNK)).endswith(b"\n"):
            if not piece:
                return None
    return file.tell()


class _Line:
    """The line at `start`, a chunk at a time; `terminated`, once read, if a newline ended it."""

    def __init__(self, file: BinaryIO, start: int) -> None:
        self.file, self.start, self.terminated = file, start, False

    def __iter__(self) -> Iterator[bytes]:
        self.file.seek(self.start)
        while piece := self.file.readline(store.CHUNK):
            line = piece.removesuffix(b"\n")
            self.terminated = line != piece
            yield from [line] if line else []
            if self.terminated:
                return


def excerpt(line: bytes, column: int | None = None, limit: int = 72) -> str:
    """The line, shortened; when the error's column lies beyond the cut, the part around it."""
    skip = column - limit // 2 if column is not None and column > limit // 2 else 0
    try:
        shown = line.decode("utf-8")
    except UnicodeDecodeError as err:  # from its first bad byte: each byte past ASCII as \xNN
        shown = line[: err.start].decode() + line[err.start :].decode("ascii", "backslashreplace")
    if skip and len(shown) > limit:
        return "…" + visible_line(shown[skip : skip + limit], limit - 1)
    return visible_line(shown, limit)


def run_check(args: argparse.Namespace) -> int:
    messages = parse_session_lines(store.read_lines(args.file), args.file)
    roles: Counter[str] = Counter(message.role for message in messages)
    chars = estimate_context_chars(messages)
    by_role = "、".join(text.by_role(role, roles[role]) for role in ("user", "assistant", "tool"))
    say(text.check_summary(visible(args.file), len(messages), chars, by_role))
    return EXIT_OK


def run_show(args: argparse.Namespace) -> int:
    messages = parse_session_lines(store.read_lines(args.file), args.file)
    say(repr(UnitsListing(context_units(messages)) if args.units else SessionListing(messages)))
    return EXIT_OK


def run_trim(args: argparse.Namespace) -> int:
    view = TrimListing(parse_session_lines(store.read_lines(args.file), args.file), args.max_chars)
    say(repr(view))
    if view.failure is None:
        return EXIT_OK
    said = text.budget_error(visible(args.file), view.failure, args.max_chars, listed=True)
    say("\n".join(said), sys.stderr)  # the listing above has the chapter's phrase and 释义
    return EXIT_PROBLEM


def run_repair(args: argparse.Namespace) -> int:
    path = visible(args.file)
    try:
        report = repair_session(args.file)
    except RepairRefusedError as err:
        say(f"{format_error(err, args.prog)}\n{text.repair_refused(path, err.reason)}", sys.stderr)
        return EXIT_PROBLEM
    loaded = len(report.messages)
    if report.backup is None or report.cut_line is None:
        say(text.repair_nothing(path, loaded))
    else:
        backup = visible(report.backup.name)
        say(text.repair_cut(path, report.cut_line, len(report.cut), backup, loaded))
    return EXIT_OK


# --- argparse, in Chinese -------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"%(?:\((\w+)\))?[sr]")  # `%s`, `%r`, `%(name)s`
# what `english % values` prints, as a pattern; its placeholders' names; the Chinese around them
_TRANSLATIONS = [
    (re.compile("(.*?)".join(map(re.escape, _PLACEHOLDER.split(english)[::2])), re.S),
     _PLACEHOLDER.findall(english), _PLACEHOLDER.split(chinese)[::2])
    for english, chinese in ARGPARSE.items()
]  # fmt: skip


def argparse_text(message: str) -> str:
    """argparse's English `message` in `ARGPARSE`'s Chinese; one it lacks stays as it is."""
    for pattern, names, chinese in _TRANSLATIONS:
        match = pattern.fullmatch(message)
        if match is not None:
            said = zip(names, match.groups(), strict=True)
            values = [argparse_text(v) if name == "message" else v for name, v in said]
            return chinese[0] + "".join(map(str.__add__, values, chinese[1:]))
    return message


class HelpFormatter(argparse.RawTextHelpFormatter):
    """argparse's help laid out as written (`cli_text` wraps it), in `ARGPARSE`'s words."""

    USAGE = ARGPARSE["usage: "]
    SHIFT = display_width(USAGE) - len(USAGE)  # argparse aligns by `len(prefix)`
    HEADINGS = re.compile(f"^({ARGPARSE['positional arguments']}|{ARGPARSE['options']}):$", re.M)

    def __init__(self, prog: str, width: int | None = None, **kwargs: Any) -> None:
        width = width or shutil.get_terminal_size().columns - 2
        super().__init__(prog, width=width - self.SHIFT, **kwargs)  # the usage's 1st line is wider

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None = None) -> None:
        super().add_usage(usage, actions, groups, self.USAGE if prefix is None else prefix)

    def start_section(self, heading: str | None) -> None:
        super().start_section(ARGPARSE.get(heading, heading) if heading else heading)

    def format_help(self) -> str:
        said = self.HEADINGS.sub(r"\1：", super().format_help())
        if said.startswith(self.USAGE):  # its continued lines under its first option
            usage, end, rest = said.rstrip("\n").partition("\n\n")
            said = usage.replace("\n", "\n" + " " * self.SHIFT) + end + rest + "\n"
        return said


class CommandParser(argparse.ArgumentParser):
    """argparse's parser, in Chinese; a subcommand `elsewhere` is imported when chosen."""

    elsewhere: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs = {"formatter_class": HelpFormatter, **kwargs, "add_help": False}  # our own -h
        super().__init__(*args, **kwargs)
        self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS,
                          help=ARGPARSE["show this help message and exit"])  # fmt: skip

    def _load(self) -> None:
        if self.elsewhere is not None:
            module = importlib.import_module(self.elsewhere)
            self.elsewhere = None
            module.add_arguments(self)
            self.set_defaults(run=module.run)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self._load()  # argparse hands a chosen subcommand its arguments through this method
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        said = {"prog": self.prog, "message": visible(argparse_text(message))}
        self.exit(EXIT_USAGE, ARGPARSE["%(prog)s: error: %(message)s\n"] % said)


# --- the program ----------------------------------------------------------------------------


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    script = os.path.basename(sys.argv[0]) if sys.argv else ""  # the `mini-agent` script's?
    prog = prog or ("mini-agent" if script == "mini-agent" else "python -m mini_agent")
    parser = CommandParser(prog=prog, description=text.PROGRAM_DESCRIPTION, epilog=text.EXIT_CODES)
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=CommandParser
    )
    runs = {"check": run_check, "show": run_show, "trim": run_trim, "repair": run_repair}
    for name, (summary, description) in COMMANDS.items():
        sub = subparsers.add_parser(
            name, help=summary, description=description, epilog=text.EXIT_CODES
        )
        sub.set_defaults(run=runs.get(name), prog=parser.prog)
        if name in ELSEWHERE:
            sub.elsewhere = ELSEWHERE[name]
            continue
        sub.add_argument("file", metavar="FILE", help=text.FILE_HELP)
        if name == "show":
            sub.add_argument("--units", action="store_true", help=text.UNITS_HELP)
        if name == "trim":
            sub.add_argument("--max-chars", type=positive_int, required=True, metavar="N",
                             help=text.TRIM_BUDGET_HELP)  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """Run one subcommand (of `parser`); return its exit code. A library may call it."""
    parser = parser or build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except SessionFormatError as err:
        said = format_error(err, getattr(args, "prog", parser.prog))
    except ContextBudgetError as err:
        said = "\n".join(text.budget_error(parser.prog, err, getattr(args, "max_chars", None)))
    except BrokenPipeError:  # the reader stopped reading (`| head`): not worth a message, and
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):  # none at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PROBLEM
    except OSError as err:
        refused = isinstance(err, REFUSALS) or err.filename == ""  # the kit's refusal
        lead = text.REFUSED_FILE if refused else text.OS_ERROR
        detail = visible(str(err))
        if err.filename is not None and err.strerror:
            detail = f"{visible(str(err.filename) or repr(err.filename))}: {visible(err.strerror)}"
        lines = [text.os_error(parser.prog, lead, detail), *text.gloss_lines(err)]
        named = getattr(args, "file", None)
        if isinstance(err, FileNotFoundError) and named and err.filename == named:
            lines.append(text.MISSING_FILE)  # where load_session itself would return []
        said = "\n".join(lines)
    say(said, sys.stderr)
    return EXIT_PROBLEM


def program(entry: Callable[[], int] = main) -> NoReturn:
    """The process entry: its streams never fail on a character the terminal lacks, then `entry`."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    sys.exit(entry())
