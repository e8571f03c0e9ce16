"""The notebooks as a reader runs them: in the environments `python kit.py lab` builds.

`kit.py lab` creates `.venv/` with `kit.lab_extras(False)` (`--bench`: `lab_extras(True)`).
This part builds the same two environments with the same function (`kit.ensure_env`), in
`.cache/reader/`, so that a developer's own `.venv/` (perhaps opened with `--bench` once)
cannot hide a missing package, and runs strict nbval with the kernel in each: every notebook
but 08 in the `lab` one, 08 in the `lab --bench` one. The test runner (pytest, nbval) stays in
`.venv-dev/`; only the kernel, where every cell runs, is the reader's Python. 07's 阶段验收
runs pytest from that kernel, so its stored 9/9 is what a reader who followed the README sees.
The JupyterLab server itself is started there too, with `kit.lab_options()`, and saves a
notebook through the kit's hook.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

import kit
from teaching.explorers import BudgetExplorer
from teaching.saving import WIDGET_VIEW

from .helpers import free_port, wait_until_serving

ROOT = Path(__file__).resolve().parent.parent
ENVS = ROOT / ".cache" / "reader"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
BENCH_ONLY = "08_performance_and_tokens.ipynb"


@pytest.fixture(scope="module")
def lab_python() -> Path:
    return kit.ensure_env(ENVS / "lab", kit.lab_extras(bench=False))


@pytest.fixture(scope="module")
def bench_python() -> Path:
    return kit.ensure_env(ENVS / "lab-bench", kit.lab_extras(bench=True))


def kernel_env(python: Path, folder: Path, name: str) -> dict[str, str]:
    """The environment for a process that starts kernels: the kernel spec `name` runs
    `python`, nothing of the test environment leaks into it (PYTHONPATH, VIRTUAL_ENV)."""
    spec = folder / "kernels" / name
    spec.mkdir(parents=True, exist_ok=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": name, "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["JUPYTER_PATH"] = str(folder)
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    return env


def strict_nbval(python: Path, folder: Path, notebooks: list[Path]) -> None:
    """Strict nbval on `notebooks`, every cell run by `python`; fails with pytest's report."""
    name = "kit-reader"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rfEs", "--color=no", "--nbval"]
        + ["--nbval-kernel-name", name, "--nbval-sanitize-with", "tests/sanitize.cfg"]
        + [str(path.relative_to(ROOT)) for path in notebooks],
        cwd=ROOT,
        env=kernel_env(python, folder, name),
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    report = run.stdout + run.stderr
    tail = "\n".join(report.splitlines()[-60:])
    assert run.returncode == 0, tail
    summary = report.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary) and "skipped" not in summary, tail


def test_every_notebook_but_08_prints_what_it_shows_in_the_lab_environment(
    lab_python: Path, tmp_path: Path
) -> None:
    chosen = [path for path in NOTEBOOKS if path.name != BENCH_ONLY]
    assert {path.name[:2] for path in chosen} >= {"00", "01", "07", "90"}
    strict_nbval(lab_python, tmp_path, chosen)


def test_08_prints_what_it_shows_in_the_lab_bench_environment(
    bench_python: Path, tmp_path: Path
) -> None:
    strict_nbval(bench_python, tmp_path, [ROOT / "notebooks" / BENCH_ONLY])


def first_error(
    notebook: Any, python: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> CellExecutionError:
    """Run `notebook` in a kernel of `python` (from notebooks/), as a reader's JupyterLab
    would; the error its first failing cell raised (the test fails if none does)."""
    for name, value in kernel_env(python, folder, "kit-reader").items():
        monkeypatch.setenv(name, value)
    for name in ("PYTHONPATH", "VIRTUAL_ENV"):
        monkeypatch.delenv(name, raising=False)
    client = NotebookClient(
        notebook,
        kernel_name="kit-reader",
        timeout=120,
        resources={"metadata": {"path": str(ROOT / "notebooks")}},
    )
    with pytest.raises(CellExecutionError) as raised:
        client.execute()
    return raised.value


def test_a_cell_run_before_the_first_after_a_restart_gets_its_gloss(
    lab_python: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # review 8: after a kernel restart, a cell below the first one met a bare NameError; the
    # kit's kernels load `teaching` as they start (kit.KERNEL_CONFIG), before any cell
    notebook = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    notebook.cells = [nbformat.v4.new_code_cell('path = folder / "session.jsonl"')]  # type: ignore[no-untyped-call]
    assert first_error(notebook, lab_python, tmp_path, monkeypatch).ename == "NameError"
    shown = "\n".join(notebook.cells[0].outputs[0]["traceback"])
    assert "释义：名字 folder 在这个内核里还没有定义：先运行上面的单元格" in shown, shown


def test_08_in_the_lab_environment_says_in_chinese_what_to_run(
    lab_python: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = nbformat.read(ROOT / "notebooks" / BENCH_ONLY, as_version=4)  # type: ignore[no-untyped-call]
    notebook.cells = [cell for cell in notebook.cells if cell.cell_type == "code"][:1]
    error = first_error(notebook, lab_python, tmp_path, monkeypatch)
    assert error.ename == "ModuleNotFoundError", error.evalue
    assert "python kit.py lab --bench" in error.evalue and "matplotlib" in error.evalue
    assert "当前环境里没有" in error.evalue


def test_the_lab_server_starts_there_and_saves_a_widgets_picture(
    lab_python: Path, tmp_path: Path
) -> None:
    # the server `kit.py lab` runs, in the reader's Python, with the kit's options (a workspace
    # of its own): it starts, and a notebook saved through it keeps the explorer's picture only
    port, token = free_port(), "reader-env"
    options = [option for option in kit.lab_options() if "workspaces_dir" not in option]
    command = [str(lab_python), "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
               f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}",
               f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}", *options]  # fmt: skip
    if sys.platform != "win32" and os.geteuid() == 0:
        command.append("--allow-root")
    env = kernel_env(lab_python, tmp_path / "jupyter", "kit-reader")
    env.update(JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))  # fmt: skip
    log = tmp_path / "server.log"
    with log.open("wb") as output:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=output)
    base, auth = f"http://127.0.0.1:{port}", {"Authorization": f"token {token}"}
    try:
        wait_until_serving(base, token, server, log)
        cell = {"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {},
                "source": "explorer", "outputs": [{"output_type": "display_data", "metadata": {},
                "data": dict(BudgetExplorer()._repr_mimebundle_())}]}  # fmt: skip
        content = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
        body = json.dumps({"type": "notebook", "format": "json", "content": content}).encode()
        put = urllib.request.Request(f"{base}/api/contents/05.ipynb", data=body, method="PUT",
                                     headers={**auth, "Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(put) as answer:
            assert answer.status in (200, 201)
    finally:
        server.terminate()
        server.wait(timeout=30)
    saved = json.loads((tmp_path / "05.ipynb").read_text(encoding="utf-8"))
    data = saved["cells"][0]["outputs"][0]["data"]
    assert WIDGET_VIEW not in data and "".join(data["text/plain"]).startswith("预算 ")
    assert "pre_save_hook" not in log.read_text(encoding="utf-8", errors="replace")  # no failure
