"""A failure that means "regenerate" says the command: a notebook cell whose fresh output
differs from the stored one (strict nbval's bare `reference_output == test_output`) gets a
section naming `python kit.py regenerate notebooks/NAME.ipynb`, and the run ends with one
command for every such notebook."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from tools.stale_outputs import regenerate_command

_stale: set[str] = set()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.failed and item.path.suffix == ".ipynb":
        _stale.add(item.path.name)
        report.sections.append(
            (
                "重新生成 / regenerate",
                "这个单元格重新运行的输出和笔记本里保存的不同。改动是有意的（改了笔记本、\n"
                "练习检查或示例会话），就重新生成它，连同输出一起提交：\n"
                f"    {regenerate_command(item.path.name)}",
            )
        )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _stale:
        terminalreporter.write_line(
            "保存的输出过时了的笔记本，重新生成：" + regenerate_command(*sorted(_stale)),
            yellow=True,
        )
