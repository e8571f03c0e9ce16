"""07's 阶段验收: the chapter's named tests, run with pytest as the chapter runs `npm test`.

`run_acceptance()` runs `tests/test_chapter_cases.py` in a child process with the notebook's
own Python and shows, test by test, the chapter's name beside pytest's verdict. Whatever keeps
it from running (the browser, no checkout, no pytest) is said in Chinese with the way out, and
a failed run shows pytest's last lines: a cause is never hidden behind "没有运行".
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mini_agent.visible import visible_text

from .book import CHAPTER_TESTS, ChapterTest
from .style import page, visible_html
from .views import Table

CASES = "tests/test_chapter_cases.py"
# the checkout `teaching` is installed from (editable, by `python kit.py lab`): its tests are
# found there wherever the notebook was copied; a wheel has no tests/ beside it
INSTALLED_FROM = Path(__file__).resolve().parents[1]
# --noconftest: tests/conftest.py sets up the kit's own test tools (hypothesis, a loopback
# model server), which the reader's environment (`python kit.py lab`) does not install and
# the chapter's cases do not use.
PYTEST = ("-m", "pytest", "--noconftest", "-q", "-rA", "--color=no", "-p", "no:cacheprovider")
ENV = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # no plugin is needed, and none is loaded
VERDICTS = {"PASSED": "通过", "FAILED": "失败", "ERROR": "出错"}
NOT_RUN = "没有运行"
TAIL_LINES = 12

IN_THE_BROWSER = (
    "浏览器里不能启动子进程运行 pytest：这个单元格要在 JupyterLab 里（工具包的仓库中）运行。"
)
NO_CHECKOUT = (
    f"找不到 {CASES}：请在工具包的仓库里打开这本笔记本（python kit.py lab）再运行这个单元格。"
)
NO_PYTEST = (
    "这个单元格用 pytest 运行本章点名的测试，当前的 Python 环境里没有 pytest。"
    "关掉 JupyterLab，在仓库根目录重新运行 python kit.py lab（它会补装 pytest），再打开这本笔记本；"
    "或者在这个环境里运行 python -m pip install pytest。"
)


def find_checkout(start: Path) -> Path | None:
    """The kit's checkout that holds the chapter's cases: `start` or one of its parents."""
    for folder in (start, *start.parents):
        if (folder / CASES).is_file():
            return folder
    return None


def command_line() -> str:
    """The command the child process runs, as a reader types it at the checkout's root (with
    `ENV` set: `environment()` says it)."""
    return " ".join(("python", *PYTEST, CASES))


def environment() -> str:
    """The variables the child process gets beyond the notebook's own, and why."""
    names = " ".join(f"{name}={value}" for name, value in ENV.items())
    return f"环境变量：{names}（不自动加载这个环境里装的其他 pytest 插件）"


INFERRED = "（推断）"
INFERRED_NOTE = (
    f"标“{INFERRED}”的文件名是本包的推断：本章只说“现有测试通过 fake client 直接调用 runAgent，"
    "可核验显式 sessionPath 的追加与恢复”，没有说是哪个测试文件。"
)


def _file(test: ChapterTest) -> str:
    return test.file + (INFERRED if test.file_inferred else "")


@dataclass(frozen=True)
class Acceptance:
    """The chapter's tests and pytest's verdict on each, or why they could not run."""

    why_not: str = ""  # non-empty: nothing ran, and this says why and what to do
    code: int | None = None  # pytest's exit code
    rows: tuple[tuple[str, str, str, str], ...] = ()  # file, the chapter's words, id, verdict
    tail: str = ""  # pytest's last lines, shown when the run did not pass

    @property
    def passed(self) -> int:
        return sum(row[-1] == VERDICTS["PASSED"] for row in self.rows)

    def summary(self) -> str:
        if self.why_not:
            return self.why_not
        return f"pytest 退出码 {self.code}；{len(self.rows)} 个用例，通过 {self.passed} 个"

    def table(self) -> Table:
        return Table(["本章的测试文件", "本章的说法", "pytest 用例", "结果"], self.rows)

    def _inferred(self) -> bool:
        return any(row[0].endswith(INFERRED) for row in self.rows)

    def _failed(self) -> bool:
        return bool(self.tail) and (self.code != 0 or self.passed < len(self.rows))

    def __repr__(self) -> str:
        if self.why_not:
            return visible_text(self.why_not)
        parts = [f"命令：{command_line()}", environment(), self.summary(), "", repr(self.table())]
        if self._inferred():
            parts += ["", INFERRED_NOTE]
        if self._failed():
            parts += ["", "pytest 的最后几行：", self.tail]
        return visible_text("\n".join(parts))

    def _repr_html_(self) -> str:
        if self.why_not:
            return page(f"<p>{visible_html(self.why_not)}</p>")
        tail = ""
        if self._failed():
            tail = f"<p>pytest 的最后几行：</p><pre>{visible_html(self.tail)}</pre>"
        note = f"<p>{visible_html(INFERRED_NOTE)}</p>" if self._inferred() else ""
        return page(
            f"<p>命令：<code>{visible_html(command_line())}</code><br>"
            f"{visible_html(environment())}</p>"
            f"<p>{visible_html(self.summary())}</p>{self.table()._repr_html_()}{note}{tail}"
        )


def run_acceptance(start: Path | None = None) -> Acceptance:
    """Run the chapter's cases with this Python's pytest, from the checkout above `start`
    (by default the one `teaching` is installed from, not the notebook's folder)."""
    if sys.platform == "emscripten":
        return Acceptance(IN_THE_BROWSER)
    if start is None:
        root = INSTALLED_FROM if (INSTALLED_FROM / CASES).is_file() else None
    else:
        root = find_checkout(start)
    if root is None:
        return Acceptance(NO_CHECKOUT)
    if importlib.util.find_spec("pytest") is None:
        return Acceptance(NO_PYTEST)
    run = subprocess.run(
        [sys.executable, *PYTEST, CASES],
        cwd=root,
        env={**os.environ, **ENV},
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    verdicts = {
        test_id: VERDICTS[status]
        for status, test_id in re.findall(
            r"^(PASSED|FAILED|ERROR) (tests/\S+?(?:\[[^\]]*\])?)(?: - .*)?$", run.stdout, re.M
        )
    }
    rows = tuple(
        (_file(test), test.chapter_says, test_id.split("::", 1)[1], verdicts.get(test_id, NOT_RUN))
        for test in CHAPTER_TESTS
        for test_id in test.pytest_ids
    )
    output = (run.stdout + run.stderr).rstrip("\n").split("\n")
    return Acceptance(code=run.returncode, rows=rows, tail="\n".join(output[-TAIL_LINES:]))
