"""`python -m mini_agent` (or `mini-agent`): look at, trim and repair session files, and chat.

Plain argparse: each subcommand is a parser with its arguments and a `run(args) -> int`
(`chat` brings its own `add_arguments` and `run`, imported only when chosen). A
command returns its exit code, or raises: `main` turns a `SessionFormatError`, a
`ContextBudgetError` or an `OSError` into exit 1 with a message on stderr, never a traceback.
Every line it prints goes through `visible`: a file's or a model's text, and a path, can hold
ESC or U+202E, and a terminal would act on them.

It speaks Chinese, its readers' language: every word is in `cli_text`, argparse's own
ones too (`ARGPARSE`, applied by `CommandParser` and `HelpFormatter` below: argparse's module
and the process's gettext are left alone).
"""

from __future__ import annotations

import argparse
import codecs
import importlib
import io
import os
import re
import shutil
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, BinaryIO, NoReturn, TextIO

from . import cli_text as text
from . import store
from .cli_arguments import positive_int
from .cli_text import ARGPARSE, COMMANDS
from .context import ContextBudgetError, estimate_context_chars
from .glosses import phrase_first
from .listing import SessionListing, TrimListing, UnitsListing
from .messages import Message
from .repair import RepairRefusedError, repair_session, why_repair_refuses
from .session import INVALID_JSON, SessionFormatError, parse_session_lines
from .store import (
    CHUNK,
    HardLinkRefusedError,
    NotARegularFileError,
    SymlinkRefusedError,
    UntrustedFileError,
)
from .visible import visible, visible_line, visible_text

EXIT_OK, EXIT_PROBLEM, EXIT_USAGE = 0, 1, 2
EXCERPT_CHARS = 72
# Subcommands whose code lives elsewhere (`chat` in the live client): imported only when
# chosen; each has `add_arguments` (its options and its description) and `run`. Their help
# line is in `COMMANDS`, like every other command's.
ELSEWHERE = {"chat": "mini_agent.live.chat"}
# The kit's own refusals of a path (a link, a file others may write …): not the system's error.
REFUSALS = (SymlinkRefusedError, HardLinkRefusedError, UntrustedFileError, NotARegularFileError)


def say(text: str, file: TextIO | None = None) -> None:
    """Print `text` (lines kept, every other hidden character escaped): the CLI's one print."""
    print(visible_text(text), file=sys.stdout if file is None else file)


# --- loading, with what an editor or CI needs to point at a bad line -----------------------


def read_session(path: str) -> list[Message]:
    """The session at `path`, as `load_session` reads it; but a missing file is an error
    here: someone named a file on the command line and would not want a silent `[]`."""
    return parse_session_lines(store.read_lines(path), path)


def format_error(err: SessionFormatError, prog: str = "python -m mini_agent") -> str:
    """`FILE:LINE: ` and the chapter's phrase alone, then, indented, the kit's detail
    (`本包补充：`) and the 释义 (`glosses.phrase_first`, as notebooks show it), then the bad
    line shortened with its invisible characters shown.

    Reads the file again only to quote it, a chunk at a time: memory stays bounded however
    long the line. A file that has gone or shrunk meanwhile is not quoted.
    """
    path = visible(str(err.path))
    head, *rest = phrase_first(err)
    lines = [f"{path}:{err.line}: {visible(head)}", *(f"  {visible(line)}" for line in rest)]
    try:
        with open(err.path, "rb") as file:
            start = _line_start(file, err.line)
            if start is None:
                return "\n".join(lines)
            lines.append(f"  {err.line} | {excerpt(_Line(file, start), err.column)}")
            line = _Line(file, start)
            torn = err.phrase == INVALID_JSON and why_repair_refuses(err, line) is None
            if torn and not line.terminated:
                lines.append(text.torn_hint(f"{prog} repair {path}"))
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
    parser.add_argument("file", metavar="FILE", help=text.FILE_HELP)


def run_check(args: argparse.Namespace) -> int:
    messages = read_session(args.file)
    roles: Counter[str] = Counter(message.role for message in messages)
    chars = estimate_context_chars(messages)
    say(text.check_summary(visible(args.file), len(messages), chars, roles))
    return EXIT_OK


def _show_arguments(parser: argparse.ArgumentParser) -> None:
    _file_argument(parser)
    parser.add_argument("--units", action="store_true", help=text.UNITS_HELP)


def run_show(args: argparse.Namespace) -> int:
    messages = read_session(args.file)
    say(repr(UnitsListing.of(messages) if args.units else SessionListing(messages)))
    return EXIT_OK


def _trim_arguments(parser: argparse.ArgumentParser) -> None:
    _file_argument(parser)
    parser.add_argument(
        "--max-chars", type=positive_int, required=True, metavar="N", help=text.TRIM_BUDGET_HELP
    )


def run_trim(args: argparse.Namespace) -> int:
    view = TrimListing(read_session(args.file), args.max_chars)
    say(repr(view))
    if view.failure is not None:
        lines = text.budget_error(visible(args.file), view.failure, args.max_chars)
        say("\n".join(lines), sys.stderr)
        return EXIT_PROBLEM
    return EXIT_OK


def run_repair(args: argparse.Namespace) -> int:
    path = visible(args.file)
    try:
        report = repair_session(args.file)
    except RepairRefusedError as err:
        say(format_error(err, args.prog), sys.stderr)
        refused = text.repair_refused(path, visible(err.reason))
        say("\n".join([refused, *text.gloss_lines(err.reason)]), sys.stderr)
        return EXIT_PROBLEM
    loaded = len(report.messages)
    if report.backup is None or report.cut_line is None:
        say(text.repair_nothing(path, loaded))
    else:  # the library's own summary is English: the CLI says it in its words
        backup = visible(report.backup.name)
        say(text.repair_cut(path, report.cut_line, len(report.cut), backup, loaded))
    return EXIT_OK


# --- argparse, in Chinese -------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"%(?:\((\w+)\))?[sr]")  # the `%s`, `%r`, `%(name)s` of a template
_HEADINGS = re.compile(
    f"^({re.escape(ARGPARSE['positional arguments'])}|{re.escape(ARGPARSE['options'])}):$",
    re.M,
)


def _names(template: str) -> list[str]:
    """The template's placeholders in order: a named one by its name, `%s` by its place."""
    return [name or f"_{index}" for index, name in enumerate(_PLACEHOLDER.findall(template))]


def _as_pattern(template: str) -> re.Pattern[str]:
    """What `template % values` can print, each placeholder a group named as in `_names`."""
    pieces = _PLACEHOLDER.split(template)[::2]  # the text between the placeholders
    groups = [f"(?P<{name}>.*?)" for name in _names(template)]
    joined = "".join(re.escape(p) + g for p, g in zip(pieces, [*groups, ""], strict=True))
    return re.compile(joined, re.S)


def _fill(template: str, values: dict[str, str]) -> str:
    """`template` with each placeholder replaced by its value, as printed text (a `%r` one
    holds the quotes argparse already put around it)."""
    filled = iter(values[name] for name in _names(template))
    return _PLACEHOLDER.sub(lambda _: next(filled), template)


_ARGPARSE_PATTERNS = [(_as_pattern(english), chinese) for english, chinese in ARGPARSE.items()]


def argparse_text(message: str) -> str:
    """argparse's English `message` in `ARGPARSE`'s Chinese, the values it quotes kept (an
    argument's own message translated in turn); a message the table lacks stays as it is."""
    for pattern, chinese in _ARGPARSE_PATTERNS:
        match = pattern.fullmatch(message)
        if match is not None:
            values = match.groupdict()
            if "message" in values:
                values["message"] = argparse_text(values["message"])
            return _fill(chinese, values)
    return message


def columns(text: str) -> int:
    """How many terminal columns `text` takes: a wide (CJK) character two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


class HelpFormatter(argparse.RawTextHelpFormatter):
    """argparse's help laid out as written (`cli_text` wraps its texts by hand: a Chinese
    character takes two columns, which argparse's wrapping cannot know), in `ARGPARSE`'s words;
    a Chinese heading ends with `：`."""

    USAGE = ARGPARSE["usage: "]
    SHIFT = columns(USAGE) - len(USAGE)  # argparse aligns the usage's lines by `len(prefix)`

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if len(args) < 4:  # argparse passes `prog` only, and names the rest
            width = kwargs.get("width") or shutil.get_terminal_size().columns - 2
            kwargs["width"] = width - self.SHIFT  # the usage's first line is that much wider
        super().__init__(*args, **kwargs)

    def add_usage(
        self,
        usage: str | None,
        actions: Iterable[argparse.Action],
        groups: Iterable[Any],
        prefix: str | None = None,
    ) -> None:
        super().add_usage(usage, actions, groups, self.USAGE if prefix is None else prefix)

    def start_section(self, heading: str | None) -> None:
        super().start_section(ARGPARSE.get(heading, heading) if heading else heading)

    def format_help(self) -> str:
        said = _HEADINGS.sub(r"\1：", super().format_help())  # argparse writes ":" after it
        if said.startswith(self.USAGE):  # its continued lines under its first option
            usage, end, rest = said.rstrip("\n").partition("\n\n")
            said = usage.replace("\n", "\n" + " " * self.SHIFT) + end + rest + "\n"
        return said


class CommandParser(argparse.ArgumentParser):
    """argparse's parser, with three differences: it speaks Chinese (its formatter, its own
    `-h`, its usage errors through `argparse_text`); a usage error quotes the command line
    through `visible` and exits `EXIT_USAGE`; and a subcommand whose code lives elsewhere
    (`elsewhere`, a module with `add_arguments` and `run`) imports it only when it is chosen."""

    elsewhere: str | None = None
    _loaded = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        add_help = kwargs.get("add_help", True)
        kwargs["add_help"] = False  # argparse's -h would say its help in English
        super().__init__(*args, **kwargs)
        if add_help:  # argparse's own -h, in our words
            self.add_argument(
                "-h",
                "--help",
                action="help",
                default=argparse.SUPPRESS,
                help=ARGPARSE["show this help message and exit"],
            )

    def _load(self) -> None:
        if self.elsewhere is not None and not self._loaded:
            module = importlib.import_module(self.elsewhere)
            module.add_arguments(self)
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
        shown = visible(argparse_text(message))
        self.exit(
            EXIT_USAGE,
            ARGPARSE["%(prog)s: error: %(message)s\n"] % {"prog": self.prog, "message": shown},
        )


# --- the program ----------------------------------------------------------------------------


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = CommandParser(
        prog=prog or _program_name(), description=text.PROGRAM_DESCRIPTION, epilog=text.EXIT_CODES
    )
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=CommandParser
    )

    def command(name: str, run: Callable[[argparse.Namespace], int] | None) -> CommandParser:
        said = COMMANDS[name]
        sub = subparsers.add_parser(
            name, help=said.help, description=said.description, epilog=text.EXIT_CODES
        )
        sub.set_defaults(run=run, prog=parser.prog)
        return sub

    _file_argument(command("check", run_check))
    _show_arguments(command("show", run_show))
    _trim_arguments(command("trim", run_trim))
    for name, module in ELSEWHERE.items():
        command(name, None).elsewhere = module
    _file_argument(command("repair", run_repair))
    return parser


def _program_name() -> str:
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name == "mini-agent" else "python -m mini_agent"


def main(argv: Sequence[str] | None = None, parser: argparse.ArgumentParser | None = None) -> int:
    """Run one subcommand (of `parser`, a parser whose arguments carry their `run`; by
    default this program's); return its exit code (the parser exits `EXIT_USAGE` itself on a
    usage error). Touches no global state: a library may call it."""
    parser = parser or build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
    except SessionFormatError as err:
        say(format_error(err, getattr(args, "prog", parser.prog)), sys.stderr)
        return EXIT_PROBLEM
    except ContextBudgetError as err:
        budget = getattr(args, "max_chars", None)
        say("\n".join(text.budget_error(parser.prog, err, budget)), sys.stderr)
        return EXIT_PROBLEM
    except BrokenPipeError:
        _silence_stdout()  # the reader stopped reading (`| head`): not worth a message
        return EXIT_PROBLEM
    except OSError as err:
        lines = [_os_error(parser.prog, err), *text.gloss_lines(err)]
        named = getattr(args, "file", None)
        if isinstance(err, FileNotFoundError) and named is not None and err.filename == named:
            lines.append(text.MISSING_FILE)  # where load_session itself would return []
        say("\n".join(lines), sys.stderr)
        return EXIT_PROBLEM
    return code


def program(entry: Callable[[], int] = main) -> NoReturn:
    """The process entry (`python -m mini_agent`, the `mini-agent` script, or another
    program's `entry`): this process's own streams never fail on a character its terminal's
    encoding lacks, then `entry`."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    sys.exit(entry())


def _os_error(prog: str, err: OSError) -> str:
    """One line: a Chinese lead-in (the system's error, or the kit refusing the file), then
    what was said, in the system's or the refusal's words."""
    lead = text.REFUSED_FILE if isinstance(err, REFUSALS) else text.OS_ERROR
    if err.filename is not None and err.strerror:
        detail = f"{visible(str(err.filename))}: {visible(err.strerror)}"
    else:
        detail = visible(str(err))
    return text.os_error(prog, lead, detail)


def _silence_stdout() -> None:
    # Python would complain again when it flushes stdout at exit.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass
