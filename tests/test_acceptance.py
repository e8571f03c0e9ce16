"""07's 阶段验收 and 08's first cell: what a reader's environment lacks is said in Chinese."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from teaching import acceptance, extras

ROOT = Path(__file__).resolve().parent.parent


def test_without_pytest_the_acceptance_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pytest" else real(name, *a)
    )
    shown = repr(acceptance.run_acceptance(ROOT))
    assert "没有 pytest" in shown and "python kit.py lab" in shown


def test_outside_the_checkout_the_acceptance_says_where_to_open_it(tmp_path: Path) -> None:
    assert "找不到 tests/test_chapter_cases.py" in repr(acceptance.run_acceptance(tmp_path))


def test_a_notebook_copied_elsewhere_finds_the_tests_where_teaching_is_installed_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # 07 copied into a folder of the reader's own, run from there
    result = acceptance.run_acceptance()
    assert result.code == 0 and result.passed == 9, repr(result)


def test_without_the_tests_beside_the_package_the_acceptance_says_where_to_open_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(acceptance, "INSTALLED_FROM", tmp_path)  # a wheel: no tests/ beside it
    monkeypatch.chdir(ROOT)  # not found by the current folder either: only the package counts
    assert "找不到 tests/test_chapter_cases.py" in repr(acceptance.run_acceptance())


def test_a_failed_run_shows_pytest_s_last_lines_instead_of_hiding_the_cause() -> None:
    failed = acceptance.Acceptance(
        code=1,
        rows=(("agent.test.ts", "rejects malformed session records", "test_x", "没有运行"),),
        tail="E   ModuleNotFoundError: No module named 'hypothesis'",
    )
    shown = repr(failed)
    assert "pytest 退出码 1；1 个用例，通过 0 个" in shown
    assert "No module named 'hypothesis'" in shown and "No module named" in failed._repr_html_()


def test_the_acceptance_runs_the_chapter_s_nine_cases_and_passes_them() -> None:
    result = acceptance.run_acceptance(ROOT)
    assert result.code == 0 and len(result.rows) == result.passed == 9, repr(result)
    assert "pytest 的最后几行" not in repr(result)  # a passing run shows only the table


def test_the_command_shown_is_the_one_the_child_process_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[tuple[list[str], dict[str, str]]] = []
    real = subprocess.run

    def spy(command: list[str], **options: Any) -> Any:
        ran.append((command, options["env"]))
        return real(command, **options)

    monkeypatch.setattr(subprocess, "run", spy)  # the module acceptance calls it in
    shown = repr(acceptance.run_acceptance(ROOT)).splitlines()
    ((command, env),) = ran
    assert shown[0] == "命令：" + " ".join(["python", *command[1:]])
    for name, value in acceptance.ENV.items():
        assert env[name] == value and f"{name}={value}" in shown[1]


def test_a_file_the_chapter_does_not_name_is_marked_as_the_kit_s_inference() -> None:
    result = acceptance.run_acceptance(ROOT)
    inferred = [row for row in result.rows if row[0].endswith(acceptance.INFERRED)]
    assert [row[1] for row in inferred] == ["可核验显式 sessionPath 的追加与恢复"]
    assert acceptance.INFERRED_NOTE in repr(result)
    assert "推断" in result._repr_html_()


def test_08_names_every_package_of_the_bench_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    bench = project["optional-dependencies"]["bench"]
    names = {re.split(r"[<>=!~ \[;]", requirement, maxsplit=1)[0].lower() for requirement in bench}
    assert set(extras.BENCH_IMPORTS) == names


def test_08_says_in_chinese_what_is_missing_and_the_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert extras.missing({"matplotlib": "matplotlib", "nope": "no_such_module.sub"}) == ["nope"]
    monkeypatch.setitem(extras.BENCH_IMPORTS, "no-such-package", "no_such_module")
    with pytest.raises(ModuleNotFoundError, match=r"python kit\.py lab --bench") as raised:
        extras.require_bench()
    assert "no-such-package" in str(raised.value) and "当前环境里没有" in str(raised.value)
