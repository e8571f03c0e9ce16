"""The kit's sample sessions: session files in `teaching/sample_sessions/`, found, not listed.

Every `.jsonl` in that folder is a sample: the notebooks' list (`sample_listing()`, shown in 00),
`python -m teaching.samples` (the command line to try each one), and the browser edition's
`samples/` folder and first page all take the files they find there. Drop a file in and it is
everywhere; docs/ADAPTING.md says how. A name says what loading it gives: `broken-json-line-N`
and `broken-record-line-N` fail with the chapter's phrase at line N, any other loads
(`expected_failure`, checked by the tests and the site build).

`session.jsonl` is the realistic one the explorers use: several turns, a one-tool and two
two-tool units (one result an error), a tool result whose assistant is gone (an orphan),
Chinese text beside the English of files and tool output — every shape `context_units` and
`trim_context` treat differently. `chapter-picture.jsonl` is the history the chapter draws.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from mini_agent.json_form import JSON
from mini_agent.session import Message, SessionFormatError, load_session
from mini_agent.tools import as_object

SAMPLE_FOLDER = Path(__file__).resolve().with_name("sample_sessions")
WHERE = "teaching/sample_sessions"  # the folder as a reader at the repository's root names it
BROKEN = re.compile(r"broken-(?P<kind>json|record)-line-(?P<line>\d+)\.jsonl")


def sample_files() -> list[Path]:
    """Every sample session file, by name."""
    return sorted(SAMPLE_FOLDER.glob("*.jsonl"))


def load_sample(name: str) -> list[Message]:
    """The messages of the sample file `name` (e.g. "session.jsonl"), read by `load_session`."""
    return load_session(SAMPLE_FOLDER / name)


def sample_session() -> list[Message]:
    """Fifteen messages in ten units (oldest first): see `context_units(sample_session())`."""
    return load_sample("session.jsonl")


def chapter_picture() -> list[Message]:
    """The history the chapter draws: `[user] [assistant{calls:a,b}] [tool a] [tool b]`.

    Notebook 04 walks the unit scan over it, and the browser test presses its stepper.
    """
    return load_sample("chapter-picture.jsonl")


def sample_session_text() -> str:
    """The sample session as a session file holds it: one JSON line per message."""
    return (SAMPLE_FOLDER / "session.jsonl").read_text(encoding="utf-8")


def expected_failure(name: str) -> str | None:
    """The chapter's phrase loading `name` must fail with, by its name; None: it must load."""
    broken = BROKEN.fullmatch(name)
    if broken is None:
        return None
    kind = {"json": "JSON", "record": "record"}[broken["kind"]]
    return f"invalid session {kind} at line {broken['line']}"


def what_loading_says(path: Path) -> str:
    """What `load_session` says of a file: how many messages, or its error."""
    try:
        return f"{len(load_session(path))} 条消息"
    except SessionFormatError as error:
        return str(error)


def says_as_named(name: str, says: str) -> bool:
    """Whether what loading the file `name` said (`what_loading_says`) is what its name says."""
    phrase = expected_failure(name)
    return says.startswith(phrase) if phrase else says.endswith(" 条消息")


def sample_listing() -> str:
    """Each sample file, what loading it says, and the command that shows it in a terminal."""
    files = sample_files()
    lines = [
        f"{WHERE}/ 里的 {len(files)} 个示例会话（load_session 读它时说的话；命令在仓库根目录运行）："
    ]
    for path in files:
        lines.append(f"  {path.name}：{what_loading_says(path)}")
        lines.append(f"    python -m mini_agent check {WHERE}/{path.name}")
    return "\n".join(lines)


def file_reader(files: Mapping[str, str]) -> Callable[[JSON], str]:
    """A read tool's `run` over a fake file table (the demos' tools): `{"path": name}` gives
    `files[name]`; an unknown name raises `FileNotFoundError`, as reading a real file would."""

    def read_file(tool_input: JSON) -> str:
        arguments = as_object(tool_input)  # 模型给的输入是不可信的 JSON：先收窄成对象
        path = arguments.get("path") if arguments is not None else None
        if not isinstance(path, str):  # 再断言字段
            raise ValueError("read needs {path: string}")
        if path not in files:
            raise FileNotFoundError(f"no such file: {path}")
        return files[path]

    # shown by name in 06's source header: `read_file`, not `file_reader.<locals>.read`
    read_file.__qualname__ = read_file.__name__
    return read_file


if __name__ == "__main__":  # python -m teaching.samples
    print(sample_listing())
    sys.exit(0)
