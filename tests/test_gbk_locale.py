"""A Chinese Windows machine's code page, for real: the CLI, a session and a notebook under GBK.

Python before 3.15 takes the locale's encoding (GBK, cp936 on a Chinese Windows machine) for
every `open()` and pipe that names none, and for the console. glibc's `zh_CN.GBK` locale gives
a Linux machine the same setting (`python3 kit.py system` generates it), so these tests run the
kit there with PYTHONUTF8 and PYTHONIOENCODING unset, on Chinese, emoji and lone-surrogate
content: nothing crashes, session files stay UTF-8, and what GBK cannot show arrives escaped.
The kit's own children run with `-X warn_default_encoding -W error::EncodingWarning`, so an
`open()` without an encoding anywhere on their path fails here as well.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from mini_agent import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    load_session,
)

ROOT = Path(__file__).resolve().parent.parent
LOCALE = "zh_CN.GBK"
STRICT = ("-X", "warn_default_encoding", "-W", "error::EncodingWarning")
EMOJI = "\U0001f600"  # not in GBK
LONE = "\ud800"  # valid JSON (`"\ud800"`), not encodable anywhere

MESSAGES: list[Message] = [
    UserMessage(f"你好，读一下说明 {EMOJI} {LONE} €"),
    AssistantMessage("读文件", (ToolCall("c1", "read", {"path": "说明.txt", "备注": EMOJI}),)),
    ToolMessage("c1", f"内容：中文 {EMOJI}", is_error=False),
    AssistantMessage("读完了：中文"),
]


def gbk_env() -> dict[str, str]:
    """This environment with the locale set to GBK and nothing that forces UTF-8."""
    forced = ("LC_", "LANG", "PYTHONUTF8", "PYTHONIOENCODING")
    env = {key: value for key, value in os.environ.items() if not key.startswith(forced)}
    env.update(LANG=LOCALE, LC_ALL=LOCALE, PYTHONPATH=str(ROOT))
    return env


def run_gbk(*arguments: str, cwd: Path, strict: bool = True) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, *(STRICT if strict else ()), *arguments]
    return subprocess.run(command, env=gbk_env(), cwd=cwd, capture_output=True, timeout=300)


@pytest.fixture(scope="module", autouse=True)
def gbk_locale(tmp_path_factory: pytest.TempPathFactory) -> None:
    probe = "import locale, sys; print(locale.nl_langinfo(locale.CODESET), sys.stdout.encoding)"
    seen = run_gbk("-c", probe, cwd=tmp_path_factory.mktemp("probe"))
    codeset = seen.stdout.decode("ascii").split()
    if not codeset or codeset[0] != "GBK":
        pytest.skip(f"needs the {LOCALE} locale: python3 kit.py system (as root, Debian)")
    if sys.version_info < (3, 15):  # 3.15 turns UTF-8 mode on by default
        assert codeset[1] == "gbk", "the child's console encoding follows the locale"


def session_file(folder: Path, messages: Sequence[Message] = MESSAGES) -> Path:
    path = folder / "session.jsonl"  # ASCII: a Chinese name is argv bytes, not file content
    for message in messages:
        append_session(path, message)
    return path


def gbk_text(output: bytes) -> str:
    """What a GBK console shows: the bytes must be valid GBK (strict), or this raises."""
    return output.decode("gbk")


@pytest.mark.parametrize(
    "command",
    [["check"], ["show"], ["show", "--units"], ["trim", "--max-chars", "400"]],
    ids=lambda command: " ".join(command),
)
def test_the_cli_prints_chinese_and_escapes_what_gbk_lacks(
    tmp_path: Path, command: list[str]
) -> None:
    path = session_file(tmp_path)
    before = path.read_bytes()
    done = run_gbk("-m", "mini_agent", command[0], path.name, *command[1:], cwd=tmp_path)
    assert done.returncode == 0, gbk_text(done.stderr)
    assert done.stderr == b""  # no warning, no traceback
    shown = gbk_text(done.stdout)
    assert shown.splitlines()[0].endswith(SAID[" ".join(command)])  # the CLI's words, as they are
    if command[0] == "show" and "--units" not in command:
        assert "你好" in shown and "中文" in shown  # Chinese as itself, not escaped
        assert EMOJI not in shown and "\\U0001f600" in shown  # what GBK lacks: an escape
    assert path.read_bytes() == before  # reading never writes


SAID = {  # the end of the first line each command prints on the session above
    "check": "；按角色：user 1 条、assistant 2 条、tool 1 条",
    "show": "4 条消息，288 字符",  # UTF-16 units, as .length counts: each emoji is 2
    "show --units": "3 个单元",
    "trim --max-chars 400": "保留 3/3 个单元、4/4 条消息，用了 288 字符",
}


@pytest.mark.parametrize(
    ("command", "code"),
    [(["--help"], 0), (["-m", "teaching.demo", "--help"], 0), (["chat", "--help"], 0),
     (["repair", "torn.jsonl"], 0), (["trim", "session.jsonl"], 2),
     (["trim", "session.jsonl", "--max-chars", "10"], 1), (["check", "missing.jsonl"], 1)],
    ids=lambda value: " ".join(value) if isinstance(value, list) else str(value),
)  # fmt: skip
def test_the_clis_own_words_reach_a_gbk_console_as_themselves(
    tmp_path: Path, command: list[str], code: int
) -> None:
    session_file(tmp_path)
    (tmp_path / "torn.jsonl").write_bytes(b'{"role":"user","content":"x"}\n{"role":"us')
    program = [] if command[0] == "-m" else ["-m", "mini_agent"]
    done = run_gbk(*program, *command, cwd=tmp_path)
    assert done.returncode == code
    own = gbk_text(done.stderr if code else done.stdout)  # what the CLI says, not the file
    assert re.search("[\u4e00-\u9fff]{4}", own), own  # Chinese, and as itself:
    assert "\\u" not in own and "\\x" not in own, own  # nothing in it needed an escape


def test_a_bad_line_is_reported_under_gbk_with_its_content_escaped(tmp_path: Path) -> None:
    path = session_file(tmp_path, MESSAGES[:1])
    with path.open("a", encoding="utf-8", errors="surrogatepass") as file:
        file.write(f'{{"role":"用户","content":"坏行 {EMOJI}"}}\n')
    done = run_gbk("-m", "mini_agent", "check", path.name, cwd=tmp_path)
    assert done.returncode == 1
    said = gbk_text(done.stderr)
    assert "invalid session record at line 2" in said
    assert EMOJI not in said and "Traceback" not in said


def test_a_session_round_trip_under_gbk_writes_utf8(tmp_path: Path) -> None:
    script = tmp_path / "round_trip.py"
    script.write_text(
        "import sys\n"
        "from tests.test_gbk_locale import MESSAGES\n"
        "from mini_agent import append_session, load_session\n"
        "for message in MESSAGES:\n"
        "    append_session(sys.argv[1], message)\n"
        "assert load_session(sys.argv[1]) == MESSAGES\n"
        "print('同一会话', len(MESSAGES))\n",
        encoding="utf-8",
    )
    done = run_gbk(str(script), "gbk.jsonl", cwd=tmp_path)
    assert done.returncode == 0, gbk_text(done.stderr)
    assert gbk_text(done.stdout) == f"同一会话 {len(MESSAGES)}\n"
    written = (tmp_path / "gbk.jsonl").read_bytes()
    written.decode("utf-8")  # strict: the file is UTF-8 whatever the locale
    here = tmp_path / "here"
    here.mkdir()
    assert written == session_file(here).read_bytes()  # the bytes a UTF-8 machine writes
    assert load_session(tmp_path / "gbk.jsonl") == MESSAGES


def test_the_demo_under_gbk_resumes_and_writes_utf8(tmp_path: Path) -> None:
    for arguments in (["--max-chars", "2000"], [], ["--max-chars", "2000"]):
        done = run_gbk("-m", "teaching.demo", "--session", "demo.jsonl", *arguments, cwd=tmp_path)
        assert done.returncode == 0, gbk_text(done.stderr)
        assert "这次运行前磁盘上有" in gbk_text(done.stdout)
    written = (tmp_path / "demo.jsonl").read_bytes()
    written.decode("utf-8")
    assert sum(isinstance(m, UserMessage) for m in load_session(tmp_path / "demo.jsonl")) == 3


READ_A_GBK_FILE = """\
import sys
from pathlib import Path
from mini_agent import AssistantMessage, ScriptedClient, Tool, ToolCall, run_agent

def read(tool_input):
    return Path(tool_input["path"]).read_text(encoding="utf-8")  # a file tool names its encoding

Path("说明.txt").write_bytes("中文说明：会话是一串 JSON 行".encode("gbk"))
client = ScriptedClient([
    AssistantMessage("读说明", (ToolCall("c1", "read", {"path": "说明.txt"}),)),
    AssistantMessage("这个文件不是 UTF-8"),
])
run_agent("读一下说明.txt", client=client, tools=[Tool("read", "读一个文件", read)],
          session_path=sys.argv[1])
"""


def test_a_tool_reading_a_gbk_file_records_an_error_result_not_mojibake(tmp_path: Path) -> None:
    script = tmp_path / "read_gbk.py"
    script.write_text(READ_A_GBK_FILE, encoding="utf-8")
    done = run_gbk(str(script), "read.jsonl", cwd=tmp_path)
    assert done.returncode == 0, gbk_text(done.stderr)
    written = (tmp_path / "read.jsonl").read_bytes()
    written.decode("utf-8")  # strict
    result = load_session(tmp_path / "read.jsonl")[2]
    assert isinstance(result, ToolMessage) and result.is_error
    assert result.content.startswith("UnicodeDecodeError: 'utf-8' codec can't decode byte 0xd6")
    mojibake = "中文说明".encode("gbk").decode("utf-8", errors="replace")
    assert mojibake not in written.decode("utf-8") and "\ufffd" not in written.decode("utf-8")


def test_a_notebook_runs_under_gbk_and_prints_what_it_stores(tmp_path: Path) -> None:
    (notebook,) = sorted((ROOT / "notebooks").glob("02_*.ipynb"))
    nbval = ["--nbval", "--nbval-current-env", "--nbval-sanitize-with", "tests/sanitize.cfg"]
    done = run_gbk(
        "-m", "pytest", "-q", "-p", "no:cacheprovider", *nbval, str(notebook.relative_to(ROOT)),
        cwd=ROOT,
        strict=False,  # third-party code (Jupyter) is not the kit's to hold to this
    )  # fmt: skip
    assert done.returncode == 0, gbk_text(done.stdout)[-3000:]
