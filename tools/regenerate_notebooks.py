"""Regenerate the notebooks' stored outputs: Restart & Run All on each, in reading order, then
drop the run-to-run noise that nbval does not compare and a reader does not need.

    python kit.py regenerate                                   # every notebook
    python kit.py regenerate notebooks/06_session_vs_context.ipynb

(`kit.py regenerate` runs this file in .venv-dev/, the environment the tests run in.) Named
notebooks are regenerated together with every notebook a change elsewhere left stale that
tools/stale_outputs.py can see without a kernel (90 after a checker's case was added, 00 after a
sample session was added), so one command brings everything a change touches up to date.
The kernel talks to this process over IPC where the system has it (not Windows): over TCP,
ipykernel warns at every start that the traffic is not encrypted.

Dropped: the notebook-level widget state (`metadata.widgets`, ~36 KB of fresh model ids per
run), per-cell timing metadata (`metadata.execution`), and the widget-view entry of an
output, whose model id is new each run and points at state that is not stored. Adjacent
stream outputs are joined (the kernel splits one print into messages differently each run). Every output a
reader sees stays: a widget's output keeps its text (and HTML) form, which is what a reader
without a kernel sees and what nbval compares. Run twice, `git diff` is then empty except in
cells tagged `nbval-ignore-output` (timings).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def clean(notebook: Any) -> Any:
    """Remove what changes from run to run and is neither compared nor seen."""
    notebook.metadata.pop("widgets", None)
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
        if "outputs" in cell:
            cell.outputs = coalesce_streams(cell.outputs)
    return notebook


def coalesce_streams(outputs: list[Any]) -> list[Any]:
    """One output per run of stdout (or stderr) text: how the kernel splits a print into
    messages varies from run to run; the text does not (nbval compares it joined, too)."""
    merged: list[Any] = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and output.get("output_type") == "stream"
            and previous.get("output_type") == "stream"
            and output.get("name") == previous.get("name")
        ):
            previous["text"] = "".join(previous["text"]) + "".join(output["text"])
        else:
            merged.append(output)
    return merged


def regenerate(path: Path, timeout: int = 300) -> float:
    """Execute `path` in a fresh kernel (cwd: its folder), clean it, save it; seconds taken."""
    notebook = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:
        # IPC: the kernel's sockets are files in a folder of ours, and no TCP warning
        ipc = {"transport": "ipc", "ip": os.path.join(sockets, "kernel")} if os.name != "nt" else {}
        client = NotebookClient(
            notebook,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
            config=Config({"KernelManager": ipc}),
            record_timing=False,
            store_widget_state=False,
        )
        start = time.perf_counter()
        client.execute()
        elapsed = time.perf_counter() - start
    nbformat.write(clean(notebook), path)  # type: ignore[no-untyped-call]
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook")
    args = parser.parse_args(argv)
    every = sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb"))  # 07a too
    # the kernel imports the package from this checkout, as `make lab` does
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    sys.path.insert(0, str(ROOT))
    from tools.stale_outputs import stale

    named = {path.resolve() for path in args.notebooks}
    for name, where in stale().items():
        if NOTEBOOKS / name not in named and args.notebooks:
            print(f"{name}: also regenerated, its stored outputs are stale: {where[0]}", flush=True)
        named.add(NOTEBOOKS / name)
    paths = [path for path in every if path in named] if args.notebooks else every
    paths += sorted(named - set(every))  # a notebook outside the numbered ones, if named
    for path in paths:
        print(f"{path.name}: {regenerate(path):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
