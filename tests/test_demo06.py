"""demo06.py: notebook 06 re-run live — any cell again, in any order, the same file."""

from __future__ import annotations

import pytest

from mini_agent import ContextBudgetError, load_session, run_agent
from teaching import demo06
from teaching.demo06 import FIRST_RUN, RESTART, TOO_SMALL, Demo06, fresh_demo
from teaching.errors import ShownError
from teaching.source import show_source
from teaching.views import RunView


@pytest.fixture
def demo() -> Demo06:
    return fresh_demo()


def first_run_cell(demo: Demo06, budget: int | None = 700) -> None:
    """Notebook 06's first-run cell, as written with the helper."""
    client = demo.client(FIRST_RUN)
    run_agent(
        FIRST_RUN.prompt,
        client=client,
        tools=demo.tools,
        session_path=demo.session_path,
        context_max_chars=budget,
    )


def test_a_fresh_demo_starts_with_no_file_in_a_folder_of_its_own(demo: Demo06) -> None:
    other = fresh_demo()
    assert demo.folder != other.folder
    assert not demo.session_path.exists()
    assert repr(demo) == "演示 06：session.jsonl 有 0 行；已准备的阶段：还没有"


def test_running_the_first_cell_twice_gives_the_same_file(demo: Demo06) -> None:
    first_run_cell(demo)
    once = demo.session_path.read_bytes()
    first_run_cell(demo)  # no ScriptExhaustedError, no doubled file
    assert demo.session_path.read_bytes() == once
    assert len(load_session(demo.session_path)) == 8


def test_the_restart_runs_on_what_the_first_run_left_whatever_its_budget(demo: Demo06) -> None:
    first_run_cell(demo, budget=None)
    demo.run(RESTART)
    after = demo.session_path.read_bytes()
    demo.run(RESTART)  # re-run the restart cell
    assert demo.session_path.read_bytes() == after
    assert len(load_session(demo.session_path)) == 10
    fresh = fresh_demo()
    fresh.run(RESTART)  # the first run never ran in this one: it is rebuilt
    assert fresh.session_path.read_bytes() == after


def test_the_run_view_matches_notebook_06s_figures(demo: Demo06) -> None:
    first_run_cell(demo)
    view = demo.run_view()
    assert [(end - start, end) for start, end in view.spans] == [(1, 1), (4, 4), (6, 7)]
    demo.run(RESTART)
    both = demo.run_view()
    assert both == RunView.of(demo.session_path, *demo.clients.values())
    assert both.spans[-1] == (4, 9)


def test_the_too_small_budget_is_shown_and_records_the_prompt_once(demo: Demo06) -> None:
    for _ in range(2):  # the cell run twice
        shown = demo.run(TOO_SMALL)
        assert isinstance(shown, ShownError) and isinstance(shown.error, ContextBudgetError)
        history = load_session(demo.session_path)
        assert len(history) == 11 and history[-1].content == TOO_SMALL.prompt
        assert demo.clients[TOO_SMALL.name].requests == []


def test_reset_starts_again_in_a_new_empty_folder(demo: Demo06) -> None:
    first_run_cell(demo)
    old = demo.folder
    assert demo.reset() is demo
    assert not old.exists() and demo.folder != old
    assert not demo.session_path.exists() and demo.clients == {}
    assert "还没有" in repr(demo)


def test_the_demos_repr_names_no_folder(demo: Demo06) -> None:
    demo.run(RESTART)
    assert repr(demo) == "演示 06：session.jsonl 有 10 行；已准备的阶段：第一次运行、重启续上"
    assert str(demo.folder) not in repr(demo)


def test_the_read_tool_is_shown_by_the_name_the_prose_uses() -> None:
    title = repr(show_source(demo06.read_file)).splitlines()[0]
    assert title == "── 本包的示例（teaching/samples.py）：read_file ──"
    assert "<locals>" not in title


SMALLEST = "context budget cannot contain the smallest consistent message unit"


def test_the_readers_budget_flows_into_every_later_stage(demo: Demo06) -> None:
    demo.budget = 800  # 06's first-run cell, changed by a reader
    demo.run(FIRST_RUN)  # the RunView cell
    assert demo.request(FIRST_RUN, 3)[0].content == FIRST_RUN.prompt  # the question stays
    demo.client(TOO_SMALL)  # a later cell rebuilds the file: the replays use 800 too
    assert [len(r) for r in demo.clients[FIRST_RUN.name].requests] == [1, 4, 7]  # 700: 6


def test_a_budget_below_the_newest_unit_is_shown_where_the_stage_stopped(demo: Demo06) -> None:
    demo.budget = 300  # the second request's newest unit (the two reads) is 326 characters
    shown = demo.run(FIRST_RUN)
    assert isinstance(shown, ShownError) and str(shown.error) == SMALLEST
    assert demo.request(FIRST_RUN, 3) == [] and len(demo.request(FIRST_RUN, 1)) == 1
    summary = demo.run_view().summary()
    assert "第一次运行发出 1 次请求后停下，下一次请求装不下（预算 300）：" in summary
    assert f"ContextBudgetError: {SMALLEST}" in summary and "释义：" in summary
    demo.run(RESTART)  # the restart still runs: its newest unit, the question, fits
    assert "后停下" in demo.run_view().summary()  # where the first run stopped, still said


def test_asking_for_a_stage_that_has_not_run_runs_it(demo: Demo06) -> None:
    # 06's responsibility-table cell, run first after a kernel restart
    requests = demo.clients[FIRST_RUN.name].requests
    assert len(requests) == 3 and len(load_session(demo.session_path)) == 8
    with pytest.raises(KeyError):
        demo.clients["no such stage"]
