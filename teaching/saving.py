"""What the kit's JupyterLab saves: a widget's picture, not a view of a model that dies.

A displayed widget is saved as a *view*: the id of a model that lives in the kernel which drew
it. After the kernel restarts that model is gone, and JupyterLab (RISE's slideshow too, which
shows the saved file) draws ipywidgets' "Error displaying widget: model not found" in its
place, in large type on a projector. The kit's explorers carry a picture (HTML) and a summary
beside every view, so a saved notebook keeps those: what it shows without a kernel is what the
explorer looked like, and running the cell again brings the live widget back. `kit.py lab`
passes `pre_save_hook` to the server (`--ContentsManager.pre_save_hook`).
"""

from __future__ import annotations

from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def drop_widget_views(notebook: dict[str, Any]) -> int:
    """Remove, in place, every widget view that has something else to show beside it (an output
    with the view alone keeps it); how many were removed."""
    dropped = 0
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []) if isinstance(cell, dict) else []:
            data = output.get("data") if isinstance(output, dict) else None
            if isinstance(data, dict) and WIDGET_VIEW in data and len(data) > 1:
                del data[WIDGET_VIEW]
                dropped += 1
    return dropped


def pre_save_hook(model: dict[str, Any], **_: object) -> None:
    """jupyter_server's pre-save hook: called with the contents model before every save."""
    content = model.get("content")
    if model.get("type") == "notebook" and isinstance(content, dict):
        drop_widget_views(content)
