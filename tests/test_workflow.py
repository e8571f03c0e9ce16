"""The GitHub Actions workflow, checked here offline: GitHub's schema, zizmor's audit, the matrix.

It has never run on real Windows or macOS machines from here (no network to GitHub); these
checks prove it is well-formed, free of the audit's known mistakes, and runs the reader's command.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import kit

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
TOOLS = Path(sys.executable).parent  # check-jsonschema and zizmor come with the test extra


def tool(name: str) -> str:
    found = shutil.which(name, path=str(TOOLS))
    assert found, f"{name} is missing: it comes with the test extra (python kit.py test)"
    return found


def test_there_is_a_workflow() -> None:
    assert [path.name for path in WORKFLOWS] == ["tests.yml"]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_the_workflow_matches_githubs_schema(path: Path) -> None:
    command = [tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(path)]
    done = subprocess.run(command, capture_output=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_zizmor_finds_nothing_to_fix(path: Path) -> None:
    command = [tool("zizmor"), "--offline", "--no-progress", str(path)]
    done = subprocess.run(command, capture_output=True, encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def jobs() -> dict[str, Any]:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "tests.yml").read_text("utf-8"))
    found: dict[str, Any] = workflow["jobs"]
    return found


def test_the_matrix_is_three_systems_by_two_pythons() -> None:
    (job,) = jobs().values()
    matrix = job["strategy"]["matrix"]
    assert sorted(matrix["os"]) == ["macos-latest", "ubuntu-latest", "windows-latest"]
    assert matrix["python"] == ["3.10", "3.13"]  # the oldest Python the kit supports, the newest
    assert job["strategy"]["fail-fast"] is False  # one red system does not hide the others


def test_the_workflow_runs_the_readers_command_the_quick_tier_and_the_notebooks() -> None:
    (job,) = jobs().values()
    (command,) = [step["run"] for step in job["steps"] if "run" in step]
    program, script, verb, option, parts = command.split()
    assert (program, script, verb, option) == ("python", "kit.py", "test", "--only")
    named = parts.split(",")
    assert set(named) == {*kit.QUICK, "notebooks"}
    # what needs Debian packages stays in .ci/run: no apt-get, no sudo on the runners
    assert not {"browser", "site", "gbk"} & set(named)
