"""What an instructor adapts by following docs/ADAPTING.md, and that the quick tier notices:

- a sample session dropped into teaching/sample_sessions/ is in the notebooks' list (00), the
  command-line examples, the browser edition's `samples/` folder and first page, and the site's
  input digest (so the next build is not the stale one);
- a stop added to 95 is in 95's route table and totals and in the classroom test's walk;
- a case added to an exercise check leaves 90's stored reports stale, and the quick tier fails
  naming the one command that regenerates it.

(The full `site` part loads every shipped sample in the browser's kernel; the `browser` part
walks 95's route. These tests check the same lists without a browser.)
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import teaching.exercises
import teaching.samples
from mini_agent import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage, load_session
from mini_agent.session import record_line
from teaching.route import RouteTable, named_cells, read_cells, stops_in
from teaching.samples import (
    expected_failure,
    sample_files,
    sample_listing,
    says_as_named,
    what_loading_says,
)
from tools import stale_outputs
from tools.stale_outputs import REGENERATE, regenerate_command

from .test_classroom import CHECKED, the_walk
from .test_notebooks import (
    test_stored_outputs_that_need_no_kernel_are_current as quick_tier_guard,
)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
ADAPTING = ROOT / "docs" / "ADAPTING.md"


def site_build() -> ModuleType:
    spec = importlib.util.spec_from_file_location("site_build", ROOT / "site" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The guide's own example: a Chinese session whose two tool results come back in reverse order.
REVERSED: list[Message] = [
    UserMessage("对比一下 a.py 和 b.py 的行数"),
    AssistantMessage(
        "两个文件都数一下。",
        (
            ToolCall("a", "count_lines", {"path": "a.py"}),
            ToolCall("b", "count_lines", {"path": "b.py"}),
        ),
    ),
    ToolMessage("b", "b.py：12 行"),
    ToolMessage("a", "a.py：30 行"),
    AssistantMessage("a.py 有 30 行，b.py 有 12 行。"),
]
NEW_SAMPLE = "dropped-by-a-test.jsonl"  # not the guide's name: an instructor may have that one


@pytest.fixture
def samples_with_a_new_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the samples folder with the guide's new sample dropped in, as the kit's own."""
    folder = tmp_path / "sample_sessions"
    shutil.copytree(teaching.samples.SAMPLE_FOLDER, folder)
    text = "".join(record_line(message) + "\n" for message in REVERSED)
    (folder / NEW_SAMPLE).write_text(text, encoding="utf-8")
    monkeypatch.setattr(teaching.samples, "SAMPLE_FOLDER", folder)
    return folder


# Samples: files in one folder, found, not listed


def test_every_sample_says_what_its_name_says() -> None:
    files = sample_files()
    assert {"session.jsonl", "chapter-picture.jsonl"} <= {path.name for path in files}
    for path in files:
        said = what_loading_says(path)
        assert says_as_named(path.name, said), f"{path.name}: {said}"
    assert expected_failure("broken-json-line-3.jsonl") == "invalid session JSON at line 3"
    assert expected_failure("broken-record-line-4.jsonl") == "invalid session record at line 4"


def test_the_shared_samples_are_the_files_byte_for_byte() -> None:
    # notebooks 03-05 show these; a file rewritten another way would change their outputs
    folder = teaching.samples.SAMPLE_FOLDER
    for name, messages in (
        ("session.jsonl", teaching.samples.sample_session()),
        ("chapter-picture.jsonl", teaching.samples.chapter_picture()),
    ):
        written = "".join(record_line(message) + "\n" for message in messages)
        assert (folder / name).read_text(encoding="utf-8") == written
    assert teaching.samples.sample_session_text() == (folder / "session.jsonl").read_text("utf-8")


def test_the_samples_ship_in_the_wheel_as_package_data() -> None:
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '"sample_sessions/*.jsonl"' in project
    assert teaching.samples.SAMPLE_FOLDER == ROOT / "teaching" / "sample_sessions"


def test_a_dropped_sample_is_in_the_notebooks_list_and_the_command_lines(
    samples_with_a_new_one: Path,
) -> None:
    assert NEW_SAMPLE in [path.name for path in sample_files()]
    listing = sample_listing()
    assert f"{NEW_SAMPLE}：5 条消息" in listing
    assert f"python -m mini_agent check teaching/sample_sessions/{NEW_SAMPLE}" in listing
    assert teaching.samples.load_sample(NEW_SAMPLE) == REVERSED
    # 00 shows the list: with the new file, 00's stored list is stale, and the quick tier says so
    found = stale_outputs.sample_list_differences("00_guide.ipynb")
    assert len(found) == 1 and "print(sample_listing())" in found[0], found


def test_a_dropped_sample_is_in_the_browser_editions_files_and_first_page(
    samples_with_a_new_one: Path, tmp_path: Path
) -> None:
    build = site_build()
    files, out = tmp_path / "files", tmp_path / "out"
    files.mkdir()
    out.mkdir()
    said = build.sample_sessions(files / build.SAMPLES)
    assert said[NEW_SAMPLE] == "5 条消息"
    copied = files / build.SAMPLES / NEW_SAMPLE
    assert copied.read_bytes() == (samples_with_a_new_one / NEW_SAMPLE).read_bytes()
    assert load_session(copied) == REVERSED
    assert sorted(said) == sorted(path.name for path in sample_files())
    build.landing_page(out, files, {}, said)
    page = (out / "index.html").read_text(encoding="utf-8")
    for name, says in said.items():
        assert f"<code>samples/{name}</code>：" in page and says.split(":")[0] in page
    assert "{{samples}}" not in page and "三个会话文件" not in page


def test_a_sample_whose_name_promises_a_failure_it_does_not_give_stops_the_build(
    samples_with_a_new_one: Path, tmp_path: Path
) -> None:
    shutil.copy(
        samples_with_a_new_one / NEW_SAMPLE, samples_with_a_new_one / "broken-json-line-2.jsonl"
    )
    with pytest.raises(SystemExit, match="do not say what their names say"):
        site_build().sample_sessions(tmp_path / "samples")


def test_a_new_or_changed_sample_makes_the_next_site_build_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = site_build()
    assert {*sample_files()} <= set(build.input_files())
    # a copy of what the build reads, so a file can be dropped into it
    for name in ("mini_agent", "teaching", "notebooks", "jupyter", "site"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    monkeypatch.setattr(build, "ROOT", tmp_path)
    monkeypatch.setattr(build, "HERE", tmp_path / "site")
    monkeypatch.setattr(build, "OVERRIDES", tmp_path / "jupyter" / "overrides.json")
    before = build.inputs_digest()
    folder = tmp_path / "teaching" / "sample_sessions"
    (folder / NEW_SAMPLE).write_text(record_line(REVERSED[0]) + "\n", encoding="utf-8")
    added = build.inputs_digest()
    assert added != before
    (folder / NEW_SAMPLE).write_text(record_line(REVERSED[-1]) + "\n", encoding="utf-8")
    assert build.inputs_digest() not in (before, added)


# The route: stops found, not counted


def one_more_stop(number: int) -> dict[str, Any]:
    text = (
        f"## 第 {number} 站（6 分钟，可选）：02——结果倒着回来\n\n"
        "**打开** [02 写入与恢复的正常路径](02_append_and_restore.ipynb)。**按顺序运行**"
        "（每个都是点代码、按 `Ctrl+Enter`）：导入单元格（`import json` 开头），"
        '然后 `path = folder / "session.jsonl"` 开头的单元格。\n'
    )
    return {"cell_type": "markdown", "metadata": {"slideshow": {"slide_type": "slide"}},
            "source": text.splitlines(keepends=True)}  # fmt: skip


ROUTE = NOTEBOOKS / "95_instructor.ipynb"


@pytest.fixture
def route_with_one_more_stop(tmp_path: Path) -> Path:
    """A copy of the notebooks whose 95 has one more stop after its last (the seventh today)."""
    for path in NOTEBOOKS.glob("*.ipynb"):
        shutil.copy(path, tmp_path / path.name)
    route = tmp_path / ROUTE.name
    notebook = json.loads(route.read_text(encoding="utf-8"))
    cells = notebook["cells"]
    after = max(i for i, cell in enumerate(cells) if "".join(cell["source"]).startswith("## 第 "))
    cells.insert(after + 1, one_more_stop(len(stops_in(ROUTE)) + 1))
    route.write_text(json.dumps(notebook, ensure_ascii=False), encoding="utf-8")
    return route


def test_the_route_has_the_stops_95_heads_and_names_cells_for_each() -> None:
    stops = stops_in(NOTEBOOKS / "95_instructor.ipynb")
    assert [stop.number for stop in stops] == list(range(1, len(stops) + 1))
    assert set(CHECKED) <= {stop.number for stop in stops}
    for stop in stops:
        assert named_cells(stop, read_cells(NOTEBOOKS / stop.notebook)), stop.title


def test_a_seventh_stop_is_walked_by_the_route_test_and_counted_in_95s_table(
    route_with_one_more_stop: Path,
) -> None:
    before = RouteTable(ROUTE)
    walk = the_walk(route_with_one_more_stop)
    added = len(before.stops) + 1  # 7 while 95 has six stops
    assert [found.number for found, _ in walk] == list(range(1, added + 1))
    new, drive = walk[-1]
    assert new.notebook == "02_append_and_restore.ipynb" and new.optional and new.minutes == 6
    assert drive not in CHECKED.values()  # walked by the cells it names
    cells = read_cells(route_with_one_more_stop.parent / new.notebook)
    named = named_cells(new, cells)
    assert named[0].startswith("import json") and named[1].startswith("path = folder")
    table = RouteTable(route_with_one_more_stop)
    total = sum(stop.minutes for stop in before.stops)
    assert table.summary.startswith(f"{added} 站，共 {total + 6} 分钟；不含可选的")
    assert f"第 {added} 站，" in table.summary  # the new optional stop is left out of the rest
    start, end = f"{total // 60}:{total % 60:02d}", f"{(total + 6) // 60}:{(total + 6) % 60:02d}"
    assert f"{start}\u2013{end}" in repr(table)


def test_95s_stored_route_table_is_computed_from_its_stops() -> None:
    route = NOTEBOOKS / "95_instructor.ipynb"
    cells = read_cells(route)
    (cell,) = [c for c in cells if "RouteTable(" in "".join(c["source"])]
    stored = "".join(cell["outputs"][0]["data"]["text/plain"])
    assert stored == repr(RouteTable(route)), regenerate_command(route.name)


def test_a_stop_out_of_order_is_refused(route_with_one_more_stop: Path) -> None:
    notebook = json.loads(route_with_one_more_stop.read_text(encoding="utf-8"))
    last = len(stops_in(route_with_one_more_stop))
    for cell in notebook["cells"]:
        if "".join(cell["source"]).startswith(f"## 第 {last} 站"):
            cell["source"] = [f"## 第 {last + 1} 站（6 分钟）：02——跳号\n"]
    with pytest.raises(ValueError, match="number them 1, 2, 3"):
        stops_in_cells(notebook["cells"])


def stops_in_cells(cells: list[dict[str, Any]]) -> object:
    from teaching.route import route_stops

    return route_stops(cells)


# An exercise case: 90 goes stale, and the quick tier says what to run


def test_a_checker_case_added_leaves_90_stale_and_the_quick_tier_names_the_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cases = teaching.exercises._unit_cases()
    extra = ("两个结果倒着回来", REVERSED)
    monkeypatch.setattr(teaching.exercises, "_unit_cases", lambda: [*cases, extra])
    with pytest.raises(AssertionError) as failed:
        quick_tier_guard()
    said = str(failed.value)
    assert "90_solutions.ipynb" in said
    assert f"{len(cases)} 个用例" in said and f"{len(cases) + 1} 个用例" in said
    assert f"{REGENERATE} notebooks/90_solutions.ipynb" in said


def test_the_guide_quotes_the_message_with_todays_number_of_cases() -> None:
    # the quoted failure names 04's cases before and after the example's one more
    count = len(teaching.exercises._unit_cases())
    quoted = f"stored 'context_units：{count} 个用例，通过 {count} 个', now 'context_units：{count + 1} 个用例"
    assert quoted in ADAPTING.read_text(encoding="utf-8")


def test_the_guide_gives_one_command_for_each_adaptation() -> None:
    guide = ADAPTING.read_text(encoding="utf-8")
    for fact in (
        "teaching/sample_sessions/",
        "## 第 N 站（M 分钟）",
        "python kit.py regenerate",
        "python kit.py test --quick",
        "python kit.py test --only notebooks",
        "python kit.py site",
        "teaching/exercises.py",
        "NOT_MEASURED",
    ):
        assert fact in guide, fact
    assert "](../docs/ADAPTING.md)" in (ROOT / "README.md").read_text(encoding="utf-8") or (
        "(docs/ADAPTING.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    )
    assert "(ADAPTING.md)" in (ROOT / "docs" / "INSTRUCTOR.md").read_text(encoding="utf-8")
