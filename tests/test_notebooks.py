"""Guards beside nbval: strict nbval checks nothing in a cell saved without outputs."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tools.stale_outputs import regenerate_command, stale

from .helpers import stored_output_text

ROOT = Path(__file__).resolve().parent.parent
# numbered notebooks: 00_guide … 07_walkthrough, 07a_beyond_the_chapter (the appendix), 08, 90, 95
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
SANITIZE = ROOT / "tests" / "sanitize.cfg"

# The chapter's path: one notebook per section of the chapter. The kit's machinery lives in
# 07a, and these notebooks show none of it (issue 18).
CHAPTER_PATH = ("01", "02", "03", "04", "05", "06", "07")
# Notebooks held to the v3 rules below: the whole chapter path.
REWRITTEN: tuple[str, ...] = CHAPTER_PATH
# Notebooks that end with 小结 and 练习 (d2l's manner), and notebooks that survive running
# every code cell twice in a row with no error and no changed output.
ENDS_WITH_EXERCISES = (*REWRITTEN, "07a", "08")
RUN_TWICE = ("00", *REWRITTEN, "07a", "08", "90", "95")

SMALLEST = "context budget cannot contain the smallest consistent message unit"
# A teaching scenario each notebook must show in a stored output (errors: as show_error shows them).
SCENARIOS = {
    "01": ["SessionFormatError: invalid session record at line 3", "TypeError: "],
    "03": [
        "SessionFormatError: invalid session JSON at line 2",
        "SessionFormatError: invalid session record at line 2",
        "IsADirectoryError: [Errno 21]",
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
    # the appendix: two records glued by the chapter's appendFile, a real permission denied
    # (03's cells that needed root moved here), the refused append, the closed calls
    "07a": [
        "SessionFormatError: invalid session JSON at line 1",
        "PermissionError: [Errno 13] Permission denied",
        "SessionFormatError: invalid session JSON at line 2",
        "interrupted: no result was recorded",
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
    assert counts == list(range(1, len(counts) + 1)), f"run {regenerate_command(path.name)}"


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
    # `python kit.py regenerate` removes these: they change every run and no reader sees them
    notebook = load(path)
    assert "widgets" not in notebook["metadata"], f"widget state: {regenerate_command(path.name)}"
    for cell in notebook["cells"]:
        assert "execution" not in cell.get("metadata", {}), regenerate_command(path.name)
        for output in cell.get("outputs", []):
            assert WIDGET_VIEW not in output.get("data", {}), regenerate_command(path.name)


def test_stored_outputs_that_need_no_kernel_are_current() -> None:
    """The quick tier's guard for outputs a change elsewhere makes stale (90's check reports,
    00's sample list): recomputed without a kernel, compared with what is stored."""
    found = stale()
    where = "\n".join(f"  {name}: {lines[0]}" for name, lines in found.items())
    assert not found, (
        f"stored outputs are stale:\n{where}\nregenerate: {regenerate_command(*found)}"
    )


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
    from teaching import book

    sources = notebook_sources()
    for name, value in vars(book).items():
        if isinstance(value, book.ChapterTable):
            assert f"book.{name}.beside(" in sources, name


def test_every_chapter_excerpt_is_shown_somewhere() -> None:
    from teaching import book

    sources = notebook_sources()
    for name, value in vars(book).items():
        if isinstance(value, book.Excerpt):
            assert f"book.{name}" in sources, name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_no_run_to_run_noise_in_stored_outputs(path: Path) -> None:
    for cell in code_cells(path):
        if "nbval-ignore-output" in tags(cell):
            continue
        text = stored_output_text(cell)
        for name, pattern in NOISE.items():
            assert not pattern.search(text), f"{name} in output of: {''.join(cell['source'])[:80]}"


@pytest.mark.parametrize(
    "path", [p for p in NOTEBOOKS if p.name[:2] in CHAPTER_PATH], ids=lambda path: path.name
)
def test_no_english_docstring_is_on_screen_in_the_chapters_notebooks(path: Path) -> None:
    # code shown beside the chapter (show_source) is code, but its docstring is prose
    for cell in code_cells(path):
        for docstring in re.findall(r'"""(.*?)"""', stored_output_text(cell), re.S):
            assert re.search("[\u4e00-\u9fff]", docstring), docstring


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


def prefix_of(path: Path) -> str:
    return path.name.split("_", 1)[0]


def notebooks_named(prefixes: tuple[str, ...]) -> list[Path]:
    chosen = [path for path in NOTEBOOKS if prefix_of(path) in prefixes]
    assert len(chosen) == len(set(prefixes)), f"no notebook for some of {prefixes}"
    return chosen


# The chapter's path shows none of the kit's machinery

MACHINERY_CODE = re.compile(
    r"mini_agent\.(store|repair|json_form|live)\b"
    r"|^from mini_agent import [^\n]*\b(store|repair|json_form|live)\b"
    r"|\b(store|json_form)\.\w"
    r"|\brepair_session\b",
    re.M,
)
MACHINERY_SHOWN = re.compile(r"mini_agent[./](store|repair|json_form|live)\b")
MACHINERY_NAMED = re.compile(r"fcntl|flock|os\.link|\bfork|垃圾回收|garbage.collect", re.I)


def kit_machinery_on_show(notebook: dict[str, Any]) -> list[str]:
    """Where a notebook imports or shows store, repair, json_form or live, or names the
    mechanisms the appendix keeps (fcntl, flock, os.link, fork, the garbage collector)."""
    found = []
    for number, cell in enumerate(notebook["cells"]):
        source = "".join(cell["source"])
        shown = stored_output_text(cell) if cell["cell_type"] == "code" else ""
        where = f"cell {number}: "
        if cell["cell_type"] == "code" and (hit := MACHINERY_CODE.search(source)):
            found.append(where + f"code uses {hit.group(0)!r}")
        if hit := MACHINERY_SHOWN.search(shown):
            found.append(where + f"output shows {hit.group(0)!r}")
        for text in (source, shown):
            if hit := MACHINERY_NAMED.search(text):
                found.append(where + f"names {hit.group(0)!r}")
    return found


def cell_of(kind: str, source: str, shown: str = "") -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": kind, "source": [source], "metadata": {}}
    if kind == "code":
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": shown}]
    return cell


def test_the_machinery_guard_catches_what_it_is_for() -> None:
    offending = [
        cell_of("code", "from mini_agent import store, load_session"),
        cell_of("code", "from mini_agent.repair import repair_session"),
        cell_of(
            "code",
            "show_source(load_session)",
            "── 本包的实现（mini_agent/json_form.py）：parse ──",
        ),
        cell_of("code", "from mini_agent.live.openai_client import request_body"),
        cell_of("markdown", "追加时用 `fcntl.flock` 加锁"),
        cell_of("markdown", "备份用 `os.link`"),
        cell_of("markdown", "在 root 下 fork 一个子进程"),
        cell_of("markdown", "解析时暂停垃圾回收"),
    ]
    for cell in offending:
        assert kit_machinery_on_show({"cells": [cell]}), cell["source"]
    innocent = [
        cell_of("code", "from mini_agent import append_session, load_session"),
        cell_of(
            "markdown", "本包多做的（锁、`repair`）见 [附录](07a_beyond_the_chapter.ipynb#lock)。"
        ),
    ]
    assert kit_machinery_on_show({"cells": innocent}) == []


def test_the_chapter_path_shows_no_kit_machinery() -> None:
    assert set(REWRITTEN) <= set(CHAPTER_PATH) | {"00"}
    for path in notebooks_named(tuple(p for p in REWRITTEN if p in CHAPTER_PATH)):
        assert kit_machinery_on_show(load(path)) == [], path.name


# The appendix: one anchor per thing the kit does beyond the chapter, linked from 01-07

APPENDIX = "07a_beyond_the_chapter.ipynb"
APPENDIX_ANCHORS = (
    "lock",
    "newline-guard",
    "fsync",
    "json-stringify",
    "line-numbers",
    "disk-first",
    "tool-call-keys",
    "linear",
    "budget-types",
    "live",
    "differences",
)


def appendix_anchors() -> list[str]:
    """The anchors of 07a, each right above its section's `##` heading."""
    found = []
    for cell in load(ROOT / "notebooks" / APPENDIX)["cells"]:
        source = "".join(cell["source"])
        found += re.findall(r'^<a id="([\w-]+)"></a>\n## ', source, re.M)
    return found


def test_the_appendix_has_every_anchor_in_order() -> None:
    assert appendix_anchors() == list(APPENDIX_ANCHORS)


def test_every_link_into_the_appendix_finds_its_anchor() -> None:
    pages = [*NOTEBOOKS, ROOT / "notebooks" / "cheatsheet.md"]
    anchors = set(appendix_anchors())
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for anchor in re.findall(re.escape(APPENDIX) + r"#([\w-]+)", text):
            assert anchor in anchors, f"{page.name} links {APPENDIX}#{anchor}"


# `kit.py lab` serves notebooks/ only: a relative link that leaves it is a 404 in JupyterLab.
LINK = re.compile(r"\]\(([^)\s]+)\)|href=[\"']([^\"']+)[\"']")


def links_leaving_notebooks(text: str) -> list[str]:
    """The relative link targets in markdown or HTML `text` that resolve outside notebooks/."""
    folder = (ROOT / "notebooks").resolve()
    leaving = []
    for match in LINK.finditer(text):
        target = (match.group(1) or match.group(2)).split("#", 1)[0]
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("/"):
            continue  # an anchor in the same page, a URL (https:, mailto:) or a site path
        if not (folder / target).resolve().is_relative_to(folder):
            leaving.append(target)
    return leaving


def test_links_leaving_notebooks_are_found() -> None:
    text = "见 [架构](../docs/ARCHITECTURE.md)、[附录](07a_beyond_the_chapter.ipynb#lock)、<a href='../README.md'>"
    assert links_leaving_notebooks(text) == ["../docs/ARCHITECTURE.md", "../README.md"]
    assert links_leaving_notebooks("[站点](https://example.com/a/../b) [本节](#lock)") == []


@pytest.mark.parametrize(
    "path", [*NOTEBOOKS, ROOT / "notebooks" / "cheatsheet.md"], ids=lambda p: p.name
)
def test_no_notebook_links_outside_the_notebooks_folder(path: Path) -> None:
    if path.suffix == ".md":
        texts = [path.read_text(encoding="utf-8")]
    else:
        texts = ["".join(c["source"]) for c in load(path)["cells"] if c["cell_type"] == "markdown"]
    leaving = [target for text in texts for target in links_leaving_notebooks(text)]
    assert leaving == [], (
        f"{path.name}: say 仓库里的 `…` as plain text instead of linking {leaving}"
    )


# The chapter is the book's text, not part of the kit: quotes are checked where it is present.
CHAPTER_TEXT = Path(os.environ.get("CHAPTER_34_TEXT", "/work/shared/seed/chapter-34-session.txt"))


def test_the_appendix_quotes_the_chapter_in_every_section() -> None:
    chapter_text = CHAPTER_TEXT.read_text(encoding="utf-8") if CHAPTER_TEXT.exists() else None
    sections = "\n".join(
        "".join(cell["source"])
        for cell in load(ROOT / "notebooks" / APPENDIX)["cells"]
        if cell["cell_type"] == "markdown"
    ).split('<a id="')[1:]
    for section in sections:
        name = section.split('"', 1)[0]
        if name != "differences":
            assert "**本章的原话**：" in section, name
            assert "| 本章 | 本包 |" in section, f"{name}: its row of the difference table"
            said = section.split("**本章的原话**：", 1)[1].split("\n", 1)[0]
            quotes = re.findall(r"“([^”]+)”", said)
            assert quotes, f"{name}: the chapter's words, in quotation marks"
            if chapter_text is not None:
                for quote in quotes:
                    assert quote in chapter_text, f"{name}: {quote}"


def test_the_difference_table_lists_only_differences_and_the_readme_counts_them() -> None:
    (total,) = [
        "".join(cell["source"])
        for cell in load(ROOT / "notebooks" / APPENDIX)["cells"]
        if '<a id="differences">' in "".join(cell["source"])
    ]
    rows = [line.split(" | ")[2:4] for line in total.splitlines() if line.startswith("| [")]
    same = [row for row in rows if row[0].strip() == row[1].strip(" |")]
    assert same == [], "a row whose two sides agree is not a difference"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"和本章有意不同的 {len(rows)} 处" in readme
    assert f"It differs from the chapter on purpose in {len(rows)}\n" in readme


# Every section ends as d2l's do: 小结, then 练习


def level_two_headings(notebook: dict[str, Any]) -> list[str]:
    headings = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            headings += re.findall(r"^## +(.+?)\s*$", "".join(cell["source"]), re.M)
    return headings


@pytest.mark.parametrize("path", notebooks_named(ENDS_WITH_EXERCISES), ids=lambda path: path.name)
def test_the_notebook_ends_with_a_summary_and_exercises(path: Path) -> None:
    notebook = load(path)
    assert level_two_headings(notebook)[-2:] == ["小结", "练习"]
    cells = notebook["cells"]
    (at,) = [
        number
        for number, cell in enumerate(cells)
        if cell["cell_type"] == "markdown"
        and re.search(r"^## +练习\s*$", "".join(cell["source"]), re.M)
    ]
    exercises = "".join(
        "".join(cell["source"]) for cell in cells[at:] if cell["cell_type"] == "markdown"
    )
    assert 2 <= len(re.findall(r"^\d+\. ", exercises, re.M)) <= 4, "two or three open exercises"
    assert "90_solutions.ipynb" in exercises, "the hints are in 90"


def test_every_notebook_with_exercises_has_its_hints_in_90() -> None:
    (solutions,) = notebooks_named(("90",))
    headings = "\n".join(
        line
        for cell in load(solutions)["cells"]
        if cell["cell_type"] == "markdown"
        for line in "".join(cell["source"]).splitlines()
        if line.startswith("### ")
    )
    for prefix in ENDS_WITH_EXERCISES:
        assert f"### {prefix} " in headings, f"no hints for {prefix}'s 练习 in 90"


def test_the_readers_file_browser_holds_the_readers_files_only() -> None:
    # JupyterLab opens on notebooks/: the sanitizer and the contributors' README live elsewhere
    files = [
        p for p in (ROOT / "notebooks").iterdir() if p.is_file() and not p.name.startswith(".")
    ]
    others = sorted(p.name for p in files if p.suffix != ".ipynb" and p.name != "cheatsheet.md")
    assert others == []
    assert SANITIZE.is_file() and SANITIZE.parent.name == "tests"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_each_notebook_opens_with_its_number_and_title(path: Path) -> None:
    # review 10: an edit of 01's first cell had dropped its `# 01 …` heading
    first = load(path)["cells"][0]
    number = path.name.split("_")[0]
    assert first["cell_type"] == "markdown"
    assert "".join(first["source"]).startswith(f"# {number} "), path.name
