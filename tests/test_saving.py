"""The kit's save hook: a saved notebook keeps each explorer's picture, not its dead view."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kit
from teaching.explorers import BudgetExplorer
from teaching.saving import WIDGET_VIEW, drop_widget_views, pre_save_hook

VIEW = {"version_major": 2, "version_minor": 0, "model_id": "f00d"}


def notebook_with(*outputs: dict[str, Any]) -> dict[str, Any]:
    cell = {"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {},
            "source": "explorer", "outputs": list(outputs)}  # fmt: skip
    return {"cells": [cell, {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": "x"}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}  # fmt: skip


def displayed(data: dict[str, Any]) -> dict[str, Any]:
    return {"output_type": "display_data", "metadata": {}, "data": data}


def test_an_explorers_saved_output_keeps_its_picture_and_summary() -> None:
    bundle = BudgetExplorer()._repr_mimebundle_()
    assert WIDGET_VIEW in bundle  # what the live notebook holds
    notebook = notebook_with(displayed(dict(bundle)))
    assert drop_widget_views(notebook) == 1
    data = notebook["cells"][0]["outputs"][0]["data"]
    assert sorted(data) == ["text/html", "text/plain"]
    assert data["text/plain"].startswith("预算 ")


def test_a_view_with_nothing_beside_it_and_other_outputs_stay() -> None:
    alone = displayed({WIDGET_VIEW: VIEW})
    printed = {"output_type": "stream", "name": "stdout", "text": "hi\n"}
    picture = displayed({"text/html": "<b>x</b>", "text/plain": "x"})
    notebook = notebook_with(alone, printed, picture)
    before = json.dumps(notebook)
    assert drop_widget_views(notebook) == 0
    assert json.dumps(notebook) == before


def test_the_hook_leaves_files_that_are_not_notebooks_alone() -> None:
    text = {"type": "file", "format": "text", "content": "{}"}
    pre_save_hook(model=text, path="a.jsonl", contents_manager=None)
    assert text == {"type": "file", "format": "text", "content": "{}"}


def test_jupyter_servers_contents_manager_saves_through_the_kits_hook(tmp_path: Path) -> None:
    # the real server class, configured as `kit.py lab` configures it
    from jupyter_server.services.contents.filemanager import FileContentsManager

    (option,) = [o for o in kit.lab_options() if o.startswith("--ContentsManager.pre_save_hook=")]
    manager = FileContentsManager(root_dir=str(tmp_path), pre_save_hook=option.split("=", 1)[1])
    live = dict(BudgetExplorer()._repr_mimebundle_())
    model = {"type": "notebook", "format": "json", "content": notebook_with(displayed(live))}
    manager.save(model, "05.ipynb")  # type: ignore[no-untyped-call]
    saved = json.loads((tmp_path / "05.ipynb").read_text(encoding="utf-8"))
    data = saved["cells"][0]["outputs"][0]["data"]
    assert WIDGET_VIEW not in data and "text/html" in data
