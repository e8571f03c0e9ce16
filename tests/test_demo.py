"""`python -m teaching.demo`: the notebooks' scripted multi-tool conversation, on the
command line's parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_agent import load_session
from teaching import demo

from .test_cli import Run, cli, lines
from .test_cli import session as session  # the fixture


def demo_cli(*args: str, cwd: Path) -> Run:
    return cli(*args, cwd=cwd, module="teaching.demo")


def test_the_demo_has_help_and_usage_errors_in_chinese(tmp_path: Path) -> None:
    helped = demo_cli("--help", cwd=tmp_path)
    assert helped.code == 0 and helped.out.startswith("用法：python -m teaching.demo")
    assert "\n退出码：\n" in helped.out
    run = demo_cli(cwd=tmp_path)  # no --session
    assert run.code == 2 and run.out == "" and "Traceback" not in run.err
    assert run.err.startswith("用法：python -m teaching.demo") and ": 错误：" in run.err


def test_demo_runs_its_scripts_resuming_from_disk_and_records_an_unknown_tool(
    tmp_path: Path,
) -> None:
    first = demo_cli("--session", "d.jsonl", cwd=tmp_path)
    assert first == Run(
        0,
        lines(
            "d.jsonl: 这次运行前磁盘上有 0 条消息",
            "user: 读一下 plan.txt 和 notes.txt",
            "第 1 次请求：磁盘上 1 条消息，53 字符；发出 1 条消息，53 字符（不设预算）",
            "第 2 次请求：磁盘上 4 条消息，395 字符；发出 4 条消息，395 字符（不设预算）",
            "assistant: plan.txt 说要裁剪；notes.txt 说只保留整个单元",
            "d.jsonl: 磁盘上现在有 5 条消息，476 字符",
        ),
        "",
    )
    second = demo_cli("--session", "d.jsonl", "--max-chars", "400", cwd=tmp_path)
    assert second == Run(
        0,
        lines(
            "d.jsonl: 这次运行前磁盘上有 5 条消息",
            "user: 哪个文件提到了预算？",
            "第 1 次请求：磁盘上 6 条消息，515 字符；发出 2 条消息，120 字符（预算 400）",
            "第 2 次请求：磁盘上 8 条消息，750 字符；发出 4 条消息，355 字符（预算 400）",
            "assistant: 两个都提到了：plan.txt 和 notes.txt",
            "d.jsonl: 磁盘上现在有 9 条消息，826 字符",
        ),
        "",
    )
    assert len(load_session(tmp_path / "d.jsonl")) == 9
    # the third script asks for a tool the demo does not have: an error result, recorded
    third = demo_cli("--session", "d.jsonl", cwd=tmp_path)
    assert third.code == 0
    assert "unknown tool: write" in (tmp_path / "d.jsonl").read_text(encoding="utf-8")
    assert "tool write-1!" in cli("show", "d.jsonl", cwd=tmp_path).out


def test_demo_stops_with_the_budget_error_says_what_it_needs_and_keeps_the_session(
    tmp_path: Path,
) -> None:
    run = demo_cli("--session", "d.jsonl", "--max-chars", "200", cwd=tmp_path)
    assert run.code == 1
    assert run.out.splitlines()[-1] == (
        "第 1 次请求：磁盘上 1 条消息，53 字符；发出 1 条消息，53 字符（预算 200）"
    )
    needed = demo.smallest_budget()
    assert run.err == lines(
        "d.jsonl: context budget cannot contain the smallest consistent message unit",
        "  释义：预算连最新的那个一致单元都装不下",
        f"  预算 200 字符装不下：最新的一致单元要 {needed} 个字符，--max-chars 至少 {needed}",
    )
    assert cli("check", "d.jsonl", cwd=tmp_path).code == 0  # what was recorded still loads


def test_the_demos_smallest_budget_is_the_least_every_run_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    needed = demo.smallest_budget()
    help_text = demo_cli("--help", cwd=tmp_path).out
    assert f"本演示不报错的最小预算：--max-chars {needed}（每次请求最新的一致单元都装得下）。" in (
        help_text
    )
    assert f"本演示不报错的最小预算是 {needed}" in help_text
    monkeypatch.chdir(tmp_path)  # the runs: in this process (the command itself is tested above)

    def run(session: str, budget: int) -> tuple[int, str]:
        code = demo.main(["--session", session, "--max-chars", str(budget)])
        return code, capsys.readouterr().err

    for _ in range(len(demo.SCRIPTS) + 1):  # every script, and the first again on its history
        assert run("enough.jsonl", needed) == (0, "")
    failures = []
    for _ in range(len(demo.SCRIPTS)):  # one budget less: some run cannot send its newest unit
        code, err = run("less.jsonl", needed - 1)
        failures += [err] if code else []
    assert failures and all(f"--max-chars 至少 {needed}" in err for err in failures)


def test_demo_says_an_empty_session_path_is_empty_not_a_folder(tmp_path: Path) -> None:
    # review 18: `--session ""` became Path("") = ".", and the demo called it a directory
    run = demo_cli("--session", "", cwd=tmp_path)
    assert run.code == 2 and "路径是空字符串：没有给出文件名" in run.err and "目录" not in run.err


def test_demo_refuses_a_damaged_session(session: Path) -> None:
    session.write_bytes(session.read_bytes() + b"{oops}\n")
    run = demo_cli("--session", "s.jsonl", cwd=session.parent)
    assert run.code == 1 and run.err.startswith("s.jsonl:5: invalid session JSON at line 5")
