"""Every code cell of every notebook run twice in a row, in one kernel: an instructor re-runs
cells all the time, so a second run must raise nothing and show the same (issue 18). Part of the
`notebooks` part of the full tier (it executes every notebook: about two minutes)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from .test_notebooks import ROOT, RUN_TWICE, notebooks_named, sanitize_pairs, tags


def comparable(outputs: list[Any]) -> list[tuple[str, str]]:
    """What a second run must show again: streams (joined), text and HTML results, errors;
    sanitized as nbval sanitizes, without images and widget model ids (nbval skips both)."""
    shown: list[tuple[str, str]] = []
    for output in outputs:
        kind = output["output_type"]
        if kind == "stream":
            text = "".join(output["text"])
            if shown and shown[-1][0] == output["name"]:
                shown[-1] = (output["name"], shown[-1][1] + text)
                continue
            shown.append((output["name"], text))
        elif kind == "error":
            shown.append(("error", f"{output['ename']}: {output['evalue']}"))
        else:
            for mime in ("text/plain", "text/html"):
                value = output.get("data", {}).get(mime)
                if value is not None:
                    shown.append((mime, value if isinstance(value, str) else "".join(value)))
    pairs = sanitize_pairs()
    cleaned = []
    for mime, text in shown:
        for regex, replace in pairs:
            text = re.sub(regex, replace, text)
        cleaned.append((mime, text))
    return cleaned


def run_each_cell_twice(path: Path) -> list[str]:
    """Execute `path` in a fresh kernel, every code cell twice in a row; what went wrong."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook: Any = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        store_widget_state=False,
    )
    problems: list[str] = []
    with client.setup_kernel():
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type != "code" or "nbval-skip" in tags(cell):
                continue
            runs = []
            for attempt in ("first", "second"):
                try:
                    client.execute_cell(cell, index)
                except CellExecutionError as err:
                    problems.append(f"cell {index}, {attempt} run: {err.ename}: {err.evalue}")
                    break
                runs.append(comparable(cell.outputs))
            if len(runs) == 2 and runs[0] != runs[1] and "nbval-ignore-output" not in tags(cell):
                problems.append(f"cell {index} shows something else the second time: {runs}"[:600])
    return problems


@pytest.mark.parametrize("path", notebooks_named(RUN_TWICE), ids=lambda path: path.name)
def test_every_cell_can_run_twice(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    # the kernel imports the package from this checkout, as tools/regenerate_notebooks.py does
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    )
    assert run_each_cell_twice(path) == []


def test_running_twice_catches_a_cell_that_appends_again(tmp_path: Path) -> None:
    import nbformat

    v4: Any = nbformat.v4
    notebook = v4.new_notebook(
        cells=[
            v4.new_code_cell("lines = []"),
            v4.new_code_cell("lines.append(1)\nprint(len(lines))"),
            v4.new_code_cell("assert len(lines) == 1"),
        ]
    )
    path = tmp_path / "appends.ipynb"
    nbformat.write(notebook, path)  # type: ignore[no-untyped-call]
    problems = run_each_cell_twice(path)
    assert len(problems) == 2 and "second time" in problems[0] and "AssertionError" in problems[1]
