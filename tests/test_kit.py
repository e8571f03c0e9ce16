"""kit.py, the two commands: the tiers it runs, what it says it skipped, and when a skip fails.

The commands are run for real with `--dry-run` (it plans, probes the machine and reports, and
installs or runs nothing), with PATH emptied to stand for a machine without node, npm, locales
or a second Python.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kit

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def run_kit(*arguments: str, path: str = "", ci: str | None = None) -> tuple[int, str]:
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env["PATH"] = path  # "" : a machine with nothing on PATH (no node, npm, locale, python3.12)
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run(
        [sys.executable, str(ROOT / "kit.py"), *arguments],
        env=env,
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_the_quick_tier_is_lint_types_unit_and_node() -> None:
    assert kit.QUICK == ("lint", "types", "unit", "node")
    for name in ("lint", "types", "unit"):  # nothing to install: they run everywhere
        assert kit.BY_NAME[name].needs() is None


def test_every_test_file_a_part_names_exists_and_belongs_to_one_part() -> None:
    named = [path for part in kit.PARTS for path in part.tests if path != "tests"]
    assert len(named) == len(set(named))
    for path in named:
        assert (ROOT / path).exists(), f"{path}: renamed? kit.py's parts name it"


def test_the_quick_tier_ignores_the_full_tiers_files_and_warns_on_default_encodings() -> None:
    quick = [kit.BY_NAME[name] for name in kit.QUICK]
    arguments = kit.pytest_arguments(quick, strict=False)
    assert arguments[:2] == ["-X", "warn_default_encoding"]
    ignored = {argument.split("=", 1)[1] for argument in arguments if argument.startswith("--i")}
    assert ignored == {
        "tests/test_faults.py",
        "tests/test_repair.py",
        "tests/test_browser.py",
        "tests/test_cheatsheet.py",
        "tests/test_classroom.py",
        "tests/test_gbk_locale.py",
        "tests/test_notebooks_twice.py",
        "tests/test_pyodide.py",
        "tests/test_reader_env.py",
        "tests/test_site.py",
    }
    assert "--nbval" not in arguments and "notebooks" not in arguments


def test_no_test_file_that_drives_a_browser_or_runs_notebooks_is_in_the_quick_tier() -> None:
    # the quick tier is what a contributor runs on every change: no Chromium, no kernels
    full = {path for part in kit.PARTS if part.tier == "full" for path in part.tests}
    heavy = re.compile(r"sync_playwright|NotebookClient|--print-to-pdf|CHROMIUM")
    for path in sorted((kit.ROOT / "tests").glob("test_*.py")):
        name = f"tests/{path.name}"
        if heavy.search(path.read_text(encoding="utf-8")) and name != "tests/test_kit.py":
            assert name in full, f"{name} drives a browser or runs notebooks: give it a full part"


def test_the_full_tier_runs_every_test_and_notebook_in_one_pytest() -> None:
    arguments = kit.pytest_arguments(kit.PARTS, strict=True)
    assert not [argument for argument in arguments if argument.startswith("--ignore")]
    assert {"tests", "notebooks", "--nbval", "--fail-on-skip"} <= set(arguments)


def test_a_reader_without_node_is_told_what_was_skipped_and_how_to_enable_it() -> None:
    code, said = run_kit("test", "--quick", "--dry-run")
    assert code == 0, said
    assert "would run lint" in said and "would run unit" in said
    assert "skipped 1 part(s)" in said
    assert "node" in said and "enable: python3 kit.py system" in said
    assert "apt-get" not in said  # the test command never installs system packages


def test_the_default_test_command_lists_every_part_this_machine_lacks() -> None:
    code, said = run_kit("test", "--dry-run")
    assert code == 0, said
    for name in ("node", "gbk", "pyodide", "site"):
        assert f"\n  {name} " in said, said
    skipped = int(said.split("skipped ", 1)[1].split(" ", 1)[0])
    assert said.count("; enable: ") == skipped  # each with the one command that enables it


def test_in_ci_or_with_strict_a_part_that_cannot_run_fails_the_run() -> None:
    for arguments, ci in ((["--quick"], "true"), (["--strict"], None), (["--only", "node"], None)):
        code, said = run_kit("test", *arguments, "--dry-run", ci=ci)
        assert code == 1, said
        assert "every selected part must run here" in said
    code, said = run_kit("test", "--quick", "--dry-run", ci="false")
    assert code == 0, said


def test_an_unknown_part_is_a_usage_error() -> None:
    code, said = run_kit("test", "--only", "lint,nope", "--dry-run")
    assert code == 1 and "no such part: nope" in said


def test_only_the_system_step_runs_apt_get() -> None:
    tree = ast.parse((ROOT / "kit.py").read_text(encoding="utf-8"))
    callers = {
        function.name
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Constant) and node.value == "apt-get"
    }
    assert callers == {"system"}


def test_the_reader_environment_asks_for_no_test_or_benchmark_tool() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    wanted = [requirement for extra in kit.READER_EXTRAS for requirement in extras[extra]]
    names = {re.split(r"[<>=!~ \[;]", requirement, maxsplit=1)[0].lower() for requirement in wanted}
    # pytest is there on purpose: 07's 阶段验收 runs the chapter's tests with it (npm test)
    assert names and not names & {"playwright", "mypy", "ruff", "langchain-core", "nbval"}
    assert "test" not in kit.READER_EXTRAS and "bench" not in kit.READER_EXTRAS


SKIPPING = """\
import pytest

def test_needs_a_browser():
    pytest.skip("no Chromium here")

def test_runs():
    pass
"""


def test_a_strict_run_fails_on_a_skipped_test_and_says_why(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_skipping=SKIPPING)
    relaxed = pytester.runpytest_inprocess("-p", "tests.strict_skips")
    relaxed.assert_outcomes(passed=1, skipped=1)
    strict = pytester.runpytest_inprocess("-p", "tests.strict_skips", "--fail-on-skip")
    strict.assert_outcomes(passed=1, failed=1)
    strict.stdout.fnmatch_lines(["*skipped in a strict run (--fail-on-skip): *no Chromium here*"])
