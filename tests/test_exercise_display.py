"""A check shows its own report in a notebook: two checks in one cell show two reports."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mini_agent import context_units
from teaching.exercises import check_context_units
from tests.helpers import as_reference

InteractiveShell = pytest.importorskip("IPython.core.interactiveshell").InteractiveShell
capture_output = pytest.importorskip("IPython.utils.capture").capture_output


@pytest.fixture
def shell() -> Iterator[object]:
    config = pytest.importorskip("traitlets.config").Config()
    config.HistoryAccessor.enabled = False  # no history file written
    shell = InteractiveShell.instance(config=config)
    shell.user_ns.update(check=check_context_units, answer=as_reference(context_units))
    yield shell
    InteractiveShell.clear_instance()


def reports(shell: object, cell: str) -> list[str]:
    """What the cell shows: each report's first line, in order."""
    with capture_output() as shown:
        result = shell.run_cell(cell)  # type: ignore[attr-defined]
    result.raise_error()
    # nothing shown a second time (a terminal's displayhook still writes its empty `Out[n]:`)
    assert "用例" not in shown.stdout, shown.stdout
    return [output.data["text/plain"].splitlines()[0] for output in shown.outputs]


def test_two_checks_in_one_cell_show_both_reports(shell: object) -> None:
    assert reports(shell, "check(answer)\ncheck(answer, linear=True)") == [
        "context_units：13 个用例，通过 13 个",
        "context_units：14 个用例，通过 14 个",
    ]


def test_a_report_is_shown_once_per_cell_and_again_when_asked_in_another(shell: object) -> None:
    assert len(reports(shell, "report = check(answer)\nreport")) == 1
    assert len(reports(shell, "display(report)")) == 1
    assert len(reports(shell, "report")) == 1


def test_outside_a_notebook_a_check_only_returns_its_report() -> None:
    with capture_output() as shown:
        report = check_context_units(as_reference(context_units))
    assert report.ok and shown.outputs == [] and shown.stdout == ""
