"""Guards beside nbval: strict nbval checks nothing in a cell saved without outputs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from .helpers import stored_output_text

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SANITIZE = ROOT / "notebooks" / "sanitize.cfg"

SMALLEST = "context budget cannot contain the smallest consistent message unit"
# A teaching scenario each notebook must show in a stored output (errors: as show_error shows them).
SCENARIOS = {
    "01": ["SessionFormatError: invalid session record at line 3", "TypeError: "],
    "02": ["SessionFormatError: invalid session JSON at line 1"],
    "03": [
        "SessionFormatError: invalid session JSON at line 2",
        "SessionFormatError: invalid session record at line 2",
        "IsADirectoryError: [Errno 21]",
        "PermissionError: [Errno 13] Permission denied",
    ],
    "05": [f"ContextBudgetError: {SMALLEST}", "ContextBudgetError: context budget cannot be empty"],
    "06": [
        "unknown tool: ",
        f"ContextBudgetError: {SMALLEST}",
        "SessionFormatError: invalid session JSON at line 2",
    ],
    "07": [
        "SessionFormatError: invalid session JSON at line 2",
        "SessionFormatError: invalid session record at line 2",
        f"ContextBudgetError: {SMALLEST}",
    ],
}
# The notebooks of the instructor's 45-minute path carry slide metadata (RISE).
SLIDE_PATH = ["00", "03", "04", "05", "06", "95"]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
NOISE = {
    "temp path": re.compile(r"/tmp/|tmp[a-z0-9_]{8}"),
    "memory address": re.compile(r" at 0x[0-9a-f]+"),
    "timing": re.compile(r"\b\d+(\.\d+)? ?(ms|µs|seconds?)\b"),
}


def load(path: Path) -> dict[str, Any]:
    notebook: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return notebook


def code_cells(path: Path) -> list[dict[str, Any]]:
    return [cell for cell in load(path)["cells"] if cell["cell_type"] == "code"]


def tags(cell: dict[str, Any]) -> list[str]:
    found: list[str] = cell.get("metadata", {}).get("tags", [])
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_every_code_cell_was_executed_in_order(path: Path) -> None:
    counts = [cell["execution_count"] for cell in code_cells(path)]
    assert counts == list(range(1, len(counts) + 1)), "Restart & Run All, then save"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebook_carries_its_outputs(path: Path) -> None:
    cells = code_cells(path)
    assert cells, "a notebook without code proves nothing"
    with_output = [cell for cell in cells if cell["outputs"]]
    assert len(with_output) >= len(cells) // 2, "most cells should show what they do"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_errors_are_shown_only_where_tagged(path: Path) -> None:
    for cell in code_cells(path):
        errored = any(output["output_type"] == "error" for output in cell["outputs"])
        assert errored == ("raises-exception" in tags(cell)), "".join(cell["source"])[:80]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_no_cell_raises_on_purpose(path: Path) -> None:
    # JupyterLite's Run All stops at a raising cell even when tagged: errors are shown instead
    for cell in code_cells(path):
        assert "raises-exception" not in tags(cell), "".join(cell["source"])[:80]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_a_shown_error_shows_its_type_and_message(path: Path) -> None:
    for cell in code_cells(path):
        source = "".join(cell["source"])
        if re.search(r"^(shown = )?show_error\(|print\(.*show_error\(", source, re.M):
            assert re.search(r"^[A-Z]\w*: \S", stored_output_text(cell), re.M), source[:80]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_cells_that_need_processes_say_so_in_the_browser(path: Path) -> None:
    for cell in code_cells(path):
        source = "".join(cell["source"])
        if re.search(r"subprocess\.|run_unprivileged\(|os\.fork\(", source):
            assert 'sys.platform == "emscripten"' in source or "unavailable_reason()" in source


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_no_regeneration_noise_is_committed(path: Path) -> None:
    # tools/regenerate_notebooks.py removes these: they change every run and no reader sees them
    notebook = load(path)
    assert "widgets" not in notebook["metadata"], "widget state: run tools/regenerate_notebooks.py"
    for cell in notebook["cells"]:
        assert "execution" not in cell.get("metadata", {}), "per-cell timings"
        for output in cell.get("outputs", []):
            assert WIDGET_VIEW not in output.get("data", {}), "a widget view without its state"


@pytest.mark.parametrize("prefix", SLIDE_PATH)
def test_the_instructor_path_carries_slide_metadata(prefix: str) -> None:
    (path,) = [path for path in NOTEBOOKS if path.name.startswith(prefix + "_")]
    cells = load(path)["cells"]
    kinds = [cell["metadata"].get("slideshow", {}).get("slide_type") for cell in cells]
    assert kinds[0] == "slide" and None not in kinds
    assert set(kinds) <= {"slide", "subslide", "fragment", "skip", "notes", "-"}


def notebook_sources() -> str:
    return "\n".join("".join(cell["source"]) for path in NOTEBOOKS for cell in code_cells(path))


def test_every_chapter_table_runs_with_a_column_for_the_package() -> None:
    from mini_agent.teaching import chapter

    sources = notebook_sources()
    for name, value in vars(chapter).items():
        if isinstance(value, chapter.ChapterTable):
            assert f"chapter.{name}.beside(" in sources, name


def test_every_chapter_excerpt_is_shown_somewhere() -> None:
    from mini_agent.teaching import chapter

    sources = notebook_sources()
    for name, value in vars(chapter).items():
        if isinstance(value, chapter.Excerpt):
            assert f"chapter.{name}" in sources, name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_no_run_to_run_noise_in_stored_outputs(path: Path) -> None:
    for cell in code_cells(path):
        if "nbval-ignore-output" in tags(cell):
            continue
        text = stored_output_text(cell)
        for name, pattern in NOISE.items():
            assert not pattern.search(text), f"{name} in output of: {''.join(cell['source'])[:80]}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_stored_errors_name_no_local_files(path: Path) -> None:
    # %xmode Minimal keeps a reader's traceback to the exception itself: no paths of ours
    for cell in code_cells(path):
        for output in cell["outputs"]:
            if output["output_type"] == "error":
                trace = "\n".join(output["traceback"])
                assert not re.search(r"/work/|/root/|/home/|site-packages", trace), trace[:200]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_notebooks_import_the_package_rather_than_redefine_it(path: Path) -> None:
    from mini_agent import __all__ as public

    for cell in code_cells(path):
        source = "".join(cell["source"])
        for name in public:
            assert not re.search(rf"^(def|class) {name}\b", source, re.M), name


@pytest.mark.parametrize(
    ("prefix", "phrase"),
    [(prefix, phrase) for prefix, phrases in SCENARIOS.items() for phrase in phrases],
)
def test_the_chapters_scenarios_are_shown(prefix: str, phrase: str) -> None:
    matching = [path for path in NOTEBOOKS if path.name.startswith(prefix + "_")]
    assert matching, f"no notebook {prefix}_*.ipynb"
    shown = "\n".join(stored_output_text(cell) for cell in code_cells(matching[0]))
    assert phrase in shown


def sanitize_pairs() -> list[tuple[str, str]]:
    lines = [line for line in SANITIZE.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("#")]
    assert len(lines) % 2 == 0
    pairs = list(zip(lines[::2], lines[1::2], strict=True))
    for regex, replace in pairs:
        assert regex.startswith("regex: ") and replace.startswith("replace: ")
    return [(regex[len("regex: ") :], replace[len("replace: ") :]) for regex, replace in pairs]


def test_the_sanitizer_is_well_formed_and_matches_what_it_is_for() -> None:
    samples = ["/tmp/tmpab12cd34/session.jsonl", "<object at 0x7f3a2b1c9d80>"]
    pairs = sanitize_pairs()
    for sample in samples:
        assert any(re.search(regex, sample) for regex, _ in pairs), sample


def test_regeneration_drops_only_what_no_reader_sees() -> None:
    import importlib.util

    import nbformat

    spec = importlib.util.spec_from_file_location(
        "regenerate_notebooks", ROOT / "tools" / "regenerate_notebooks.py"
    )
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    v4: Any = nbformat.v4  # nbformat ships no type hints
    cell = v4.new_code_cell("print(1); widget")
    cell.metadata["execution"] = {"iopub.execute_input": "2026-12-01T07:00:00Z"}
    cell.outputs = [
        v4.new_output("stream", name="stdout", text="a"),
        v4.new_output("stream", name="stdout", text="b\n"),
        v4.new_output(
            "display_data", data={WIDGET_VIEW: {"model_id": "abc"}, "text/plain": "步骤 1"}
        ),
    ]
    notebook = v4.new_notebook(cells=[cell], metadata={"widgets": {"state": {}}})
    cleaned = tool.clean(notebook)
    assert "widgets" not in cleaned.metadata
    assert "execution" not in cleaned.cells[0].metadata
    outputs = cleaned.cells[0].outputs
    assert [output.get("text") for output in outputs] == ["ab\n", None]
    assert outputs[1]["data"] == {"text/plain": "步骤 1"}
