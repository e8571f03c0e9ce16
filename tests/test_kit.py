"""kit.py, the two commands: the tiers it runs, what it says it skipped, and when a skip fails.

The commands are run for real with `--dry-run` (it plans, probes the machine and reports, and
installs or runs nothing), with PATH emptied to stand for a machine without node, npm, locales
or a second Python.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import kit

from . import platforms

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
    assert "将运行 lint" in said and "将运行 unit" in said
    assert "跳过了本机跑不了的 1 个部分" in said
    assert "node" in said and f"补上：{kit.NODE_STEP}" in said  # Windows: Node.js's installer
    assert "apt-get" not in said  # the test command never installs system packages


def test_the_default_test_command_lists_every_part_this_machine_lacks() -> None:
    code, said = run_kit("test", "--dry-run")
    assert code == 0, said
    for name in ("node", "gbk", "pyodide", "site", "windows"):
        assert f"\n  {name} " in said, said
    skipped = int(said.split("跳过了本机跑不了的 ", 1)[1].split(" ", 1)[0])
    assert said.count("；补上：") == skipped  # each with the one command that enables it


def test_in_ci_or_with_strict_a_part_that_cannot_run_fails_the_run() -> None:
    for arguments, ci in ((["--quick"], "true"), (["--strict"], None), (["--only", "node"], None)):
        code, said = run_kit("test", *arguments, "--dry-run", ci=ci)
        assert code == 1, said
        assert "选中的每一部分都必须能在本机运行" in said
    code, said = run_kit("test", "--quick", "--dry-run", ci="false")
    assert code == 0, said


ARGPARSE_ENGLISH = ("usage:", "positional arguments", "options:", "show this help", "error:")


COMMANDS = (("lab",), ("test",), ("system",), ("site",), ("bench",), ("soak",), ("regenerate",))


@pytest.mark.parametrize("command", [(), *COMMANDS])
def test_every_help_speaks_chinese_fits_80_columns_and_ends_with_its_exit_codes(
    command: tuple[str, ...],
) -> None:
    code, said = run_kit(*command, "--help")
    assert code == 0, said
    assert (
        said.startswith("用法：python kit.py") and "选项：" in said and "显示这段帮助并退出" in said
    )
    for english in ARGPARSE_ENGLISH:
        assert english not in said, english
    assert max(kit.columns(line) for line in said.splitlines()) <= 80, said
    if command:  # each command's help ends with its exit codes, as the code returns them
        codes = said.split("退出码：", 1)[1]
        assert re.search(r"\b0\b", codes) and re.search(r"\b1\b|非 0", codes), said


def test_the_only_option_names_every_part_and_the_quick_tier() -> None:
    _, said = run_kit("test", "--help")
    helped = " ".join(said.split())  # as one line: argparse wraps it
    for name in kit.BY_NAME:
        assert re.search(rf"\b{name}\b", helped), name
    assert "--quick 就是 " + ",".join(kit.QUICK) in helped


@pytest.mark.parametrize(
    ("arguments", "chinese"),
    [
        ((), "错误：缺少必需的参数：COMMAND"),
        (("nope",), "错误：参数 COMMAND: 没有这个选择：'nope'（可选："),
        (("test", "--quick", "--only", "lint"), "错误：参数 --only: 不能和 --quick 同时使用"),
        (("test", "--only"), "错误：参数 --only: 后面要跟一个值"),
        (("system", "extra"), "错误：不认识的参数：extra"),
    ],
)
def test_a_usage_error_is_said_in_chinese_with_the_usage(
    arguments: tuple[str, ...], chinese: str
) -> None:
    code, said = run_kit(*arguments)
    assert code == 2 and said.startswith("用法：python kit.py"), said
    assert chinese in said and "error:" not in said and "invalid choice" not in said, said


def test_lab_help_names_the_options_a_reader_needs_and_lab_passes_them_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, said = run_kit("lab", "--help")
    assert code == 0 and "--no-browser" in said and "--port N" in said, said
    assert "其余参数原样" in said  # and the rest goes to JupyterLab, as before
    commands: list[list[str]] = []

    def run(command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        commands.append(command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(kit, "ensure_env", lambda env, extras: Path("python"))
    monkeypatch.setattr(subprocess, "run", run)
    arguments = ["lab", "--no-browser", "--port", "9999", "--ServerApp.ip=127.0.0.1"]
    args, rest = kit.build_parser().parse_known_args(arguments)
    args.rest = rest
    assert kit.lab(args) == 0
    (command,) = commands
    assert {"--no-browser", "--port=9999", "--ServerApp.ip=127.0.0.1"} <= set(command)


def test_the_step_that_enables_a_part_is_a_command_this_system_can_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    assert kit.python_command() == "py"
    assert "kit.py system" not in kit.system_step() and "Debian" in kit.system_step()
    monkeypatch.setattr(sys, "platform", "darwin")
    assert kit.python_command() == "python3" and "kit.py system" not in kit.system_step()
    monkeypatch.setattr(sys, "platform", "linux")
    assert kit.system_step() == "python3 kit.py system（在 Debian 上以 root 运行）"


def test_an_unknown_part_is_a_usage_error() -> None:
    code, said = run_kit("test", "--only", "lint,nope", "--dry-run")
    assert code == 1 and "没有这个部分：nope" in said


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


def test_a_posix_only_skip_passes_a_strict_run_and_is_counted_by_reason(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_marked="""
        import pytest
        from tests.platforms import posix_only

        @posix_only("SIGKILL: Windows has none")
        def test_kills():
            pass

        @posix_only("SIGKILL: Windows has none")
        def test_kills_again():
            pass

        def test_needs_a_browser():
            pytest.skip("no Chromium here")
        """
    )
    options = ("-p", "tests.platforms", "-p", "tests.strict_skips", "--fail-on-skip")
    monkeypatch.setitem(platforms.MARKS, "posix_only", ("POSIX-only: ", lambda: False))
    here = pytester.runpytest_inprocess(*options)
    here.assert_outcomes(passed=2, failed=1)  # not Windows: the marked tests run
    assert "platform skips" not in here.stdout.str()
    monkeypatch.setitem(platforms.MARKS, "posix_only", ("POSIX-only: ", lambda: True))
    windows = pytester.runpytest_inprocess(*options)
    windows.assert_outcomes(skipped=2, failed=1)  # the unmarked skip still fails
    windows.stdout.fnmatch_lines(
        ["platform skips: 2, by reason:", "    2 POSIX-only: SIGKILL: Windows has none"]
    )


def test_a_platform_mark_without_a_reason_is_refused() -> None:
    with pytest.raises(ValueError, match="names its reason"):
        platforms.posix_only(" ")


def test_the_system_step_brings_wine_mingw_and_both_chinese_locales() -> None:
    assert {"wine", "wine64", "gcc-mingw-w64-x86-64-win32"} <= set(kit.DEBIAN_PACKAGES)
    assert kit.LOCALES == {"zh_CN.GBK": "GBK", "zh_CN.UTF-8": "UTF-8"}
    assert kit.BY_NAME["windows"].tier == "full" and kit.BY_NAME["windows"].enable == kit.SYSTEM


def test_a_windows_process_sees_code_page_936_and_none_of_this_pythons_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("PYTHONIOENCODING", "PYTHONUTF8", "VIRTUAL_ENV", "LC_ALL", "CI"):
        monkeypatch.setenv(name, "x")
    env = kit.wine_environment()
    assert not {"PYTHONIOENCODING", "PYTHONUTF8", "VIRTUAL_ENV", "LC_ALL", "CI"} & set(env)
    assert env["LANG"] == "zh_CN.UTF-8" and env["WINEDEBUG"] == "-all"
    assert env["WINEPREFIX"] == str(kit.WINDOWS_CACHE / "prefix")
    assert kit.winpath(Path("/work/kit/会话.jsonl")) == "Z:\\work\\kit\\会话.jsonl"


def test_the_windows_figures_are_found_in_the_windows_output() -> None:
    output = [
        "tests\\test_visible.py ....ss..                    [ 98%]",
        "platform skips: 3, by reason:",
        "    2 POSIX-only: mode bits: Windows keeps only a read-only flag",
        "    1 Wine cannot show: root ignores the read-only attribute",
        "  - 3 nothing to do with it",
        "=========== 1020 passed, 3 skipped in 233.10s (0:03:53) ===========",
    ]
    assert [line for line in output if kit.PLATFORM_SKIPS.match(line)] == output[1:4]
    assert [line for line in output if kit._is_pytest_summary(line)] == output[-1:]
    assert kit.WINESERVER_DUMP.match(b"0x565266d98c10:2: Async thread=0x565266da3310\n")
    assert not any(kit.WINESERVER_DUMP.match(line.encode()) for line in output)


@platforms.posix_only("the windows part runs Wine on Linux, from a git checkout")
def test_the_windows_clone_holds_the_checkouts_files_and_drops_removed_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kit, "WINDOWS_CACHE", tmp_path)
    (tmp_path / "kit").mkdir()
    (tmp_path / "kit" / "gone.py").write_bytes(b"old")
    (tmp_path / "kit-files.txt").write_text("gone.py\n", encoding="utf-8")
    clone = kit.windows_checkout()
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode("utf-8")
    for name in filter(None, tracked.split("\0")):
        if name == kit.MEASURED:  # as committed: the site part may be rewriting it meanwhile
            assert (clone / name).read_bytes() == kit.committed_timings()
        elif (ROOT / name).is_file():
            assert (clone / name).read_bytes() == (ROOT / name).read_bytes(), name
    assert not (clone / "gone.py").exists()
    assert not (clone / ".venv-dev").exists() and not (clone / ".git").exists()


@platforms.posix_only("the windows part runs Wine on Linux")
def test_a_wine_prefix_that_fails_to_boot_once_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """wineboot failed once on a busy machine and worked when run again: kit.py tries twice.
    A stand-in `wine` fails its first boot (exit 53, like the one seen) and makes the prefix's
    system32 on the second; the shim DLL is then built by the real mingw-w64 when it is there."""
    if shutil.which("x86_64-w64-mingw32-gcc") is None:
        pytest.skip("mingw-w64 builds the prefix's DLL: python kit.py system installs it")
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "wine").write_text(
        "#!/bin/sh\n"
        'count="$WINEPREFIX.boots"; echo x >> "$count"\n'
        'if [ "$(wc -l < "$count")" -eq 1 ]; then echo first boot fails; exit 53; fi\n'
        'mkdir -p "$WINEPREFIX/drive_c/windows/system32"\n',
        encoding="utf-8",
    )
    (tools / "wineserver").write_text('#!/bin/sh\necho "$@" >> "$WINEPREFIX.stopped"\n', "utf-8")
    for tool in tools.iterdir():
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(kit, "WINDOWS_CACHE", tmp_path)
    kit.wine_prefix("prefix")
    system32 = tmp_path / "prefix" / "drive_c" / "windows" / "system32"
    assert (system32 / "bcryptprimitives.dll").is_file()
    assert (tmp_path / "prefix.boots").read_text("utf-8").count("x") == 2
    stopped = (tmp_path / "prefix.stopped").read_text("utf-8").split()
    assert stopped == ["-k"]  # the first boot's Wine server


def test_a_windows_clone_keeps_lf_line_ends() -> None:
    # Git for Windows converts to \r\n unless told; the windows part's copy has what git stores
    lines = (ROOT / ".gitattributes").read_text(encoding="utf-8").splitlines()
    assert "* text=auto eol=lf" in lines
