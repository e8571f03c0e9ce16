"""The project's promises that are not code: the pinned API, and one dependency list."""

from __future__ import annotations

import pkgutil
import re
import sys
from pathlib import Path

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import mini_agent

ROOT = Path(__file__).resolve().parent.parent

PINNED_API = {
    "UserMessage", "AssistantMessage", "ToolMessage", "ToolCall", "Message",
    "to_record",
    "parse_session_message", "load_session", "append_session",
    "SessionFormatError",
    "estimate_context_chars", "context_units", "trim_context",
    "ContextBudgetError",
    "run_agent", "ScriptedClient", "Tool",
}  # fmt: skip


def test_the_public_api_is_exactly_the_pinned_one() -> None:
    assert set(mini_agent.__all__) == PINNED_API
    public = {name for name in vars(mini_agent) if not name.startswith("_")}
    modules = {module.name for module in pkgutil.iter_modules(mini_agent.__path__)}
    assert public - modules - {"annotations"} == PINNED_API


def test_the_package_ships_its_type_marker() -> None:
    assert (ROOT / "mini_agent" / "py.typed").exists()


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement, maxsplit=1)[0].lower()


def test_environment_yml_names_the_same_dependencies_as_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    every = [dep for extra in extras.values() for dep in extra] + project["dependencies"]
    wanted = sorted(dep.split(";")[0] for dep in every)  # conda has no environment markers
    environment = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    conda = [dep for dep in environment["dependencies"] if isinstance(dep, str)]
    pip = next(dep["pip"] for dep in environment["dependencies"] if isinstance(dep, dict))
    # what conda-forge lacks comes from PyPI through pip, before the kit itself
    named = sorted([dep for dep in conda if _name(dep) not in {"python", "pip"}] + pip[:-1])
    assert [d.replace(" ", "") for d in named] == [d.replace(" ", "") for d in wanted]
    assert pip[-1] == "--editable ."
    python = next(dep for dep in conda if _name(dep) == "python")
    assert python.removeprefix("python") == project["requires-python"]


def test_ci_runs_the_readme_system_step_then_its_test_command_at_its_strictest() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert "python kit.py lab" in readme and "python kit.py test" in readme  # the two commands
    readme = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")  # where CI is described
    assert ci[-2:] == ["python3 kit.py system", "exec python3 kit.py test --strict"]
    for command in ci[-2:]:  # what CI runs, the README says, word for word
        assert f"`{command.removeprefix('exec ')}`" in readme, command


def test_every_difference_from_the_chapter_names_tests_that_exist() -> None:
    # docs/ARCHITECTURE.md: one row per difference, each with its decision and its tests
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = text[text.index("| difference | the chapter's TypeScript |") :].split("\n\n")[0]
    rows = [line for line in table.splitlines() if line.startswith("| **")]
    assert 1 <= len(rows) <= 12  # few, each earned; 07a and the README count the same rows
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"和本章有意不同的 {len(rows)} 处" in readme
    for row in rows:
        named = re.findall(r"`(test_\w+\.py)::(test_\w+)`", row)
        assert named, f"a difference without a test: {row[:60]}"
        for file, name in named:
            source = (ROOT / "tests" / file).read_text(encoding="utf-8")
            assert f"def {name}(" in source, f"{file}::{name} does not exist"


def _imports_of(source: Path) -> set[str]:
    """The package's modules `source` imports, at the top or inside a function alike."""
    import ast

    package = source.relative_to(ROOT).with_suffix("").parts[:-1]
    found = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join([*base, *(node.module.split(".") if node.module else [])])
            names = [f"{module}.{alias.name}" for alias in node.names] + [module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found |= {name for name in names if (ROOT / (name.replace(".", "/") + ".py")).exists()}
    return found - {".".join([*package, source.stem])}


def test_the_packages_imports_run_one_way_even_inside_functions() -> None:  # teaching too
    # issue 24: `session` imported `repair` inside a function, and `repair` imports `session`
    graph = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts): _imports_of(path)
        for package in ("mini_agent", "teaching")
        for path in (ROOT / package).rglob("*.py")
    }
    graph = {name.removesuffix(".__init__"): deps for name, deps in graph.items()}

    def circle_from(start: str, seen: tuple[str, ...]) -> tuple[str, ...] | None:
        for nxt in sorted(graph.get(start, ())):
            if nxt in seen:
                return (*seen[seen.index(nxt) :], nxt)
            found = circle_from(nxt, (*seen, nxt))
            if found:
                return found
        return None

    for module in sorted(graph):
        if module in ("mini_agent", "teaching"):
            continue  # the package re-exports its modules: an arrow down, not a circle
        circle = circle_from(module, (module,))
        assert circle is None or "mini_agent" in circle, " -> ".join(circle or ())
    upward = {(name, dep) for name, deps in graph.items() if name.startswith("mini_agent")
              for dep in deps if dep.startswith("teaching")}  # fmt: skip
    assert upward == set()  # the notebooks' apparatus imports the package, never the reverse
    assert "mini_agent.repair" not in graph["mini_agent.session"]
    assert graph["mini_agent.store"] == set()  # the store knows bytes and files, not messages


CHAPTER_FUNCTIONS = (
    "load_session",
    "append_session",
    "parse_session_message",
    "context_units",
    "trim_context",
    "estimate_context_chars",
)


@pytest.mark.parametrize("name", CHAPTER_FUNCTIONS)
def test_each_chapter_function_is_defined_once_outside_tests_and_benchmarks(name: str) -> None:
    # package v5: one implementation; the quadratic oracle lives in tests/, a grader's variant
    # of the chapter's own way in teaching/ under another name
    found = [
        path.relative_to(ROOT).as_posix()
        for path in [
            ROOT / "kit.py",
            *(ROOT / "mini_agent").rglob("*.py"),
            *(ROOT / "teaching").rglob("*.py"),
            *(ROOT / "tools").rglob("*.py"),
        ]
        if re.search(rf"^\s*def {name}\(", path.read_text(encoding="utf-8"), re.M)
    ]
    assert len(found) == 1, found


def _lines(paths: list[Path]) -> int:
    return sum(len(path.read_text(encoding="utf-8").splitlines()) for path in paths)


def test_the_package_keeps_its_line_budgets() -> None:
    # as `wc -l` counts, comments included: the whole package at most 3,500 lines, of which
    # the chapter's files (session with its messages, context, agent, the model protocol, tools) 800
    package = sorted((ROOT / "mini_agent").rglob("*.py"))
    chapter = ["session", "context", "agent", "model_client", "tools"]
    assert _lines(package) <= 3_500
    assert _lines([ROOT / "mini_agent" / f"{name}.py" for name in chapter]) <= 800
