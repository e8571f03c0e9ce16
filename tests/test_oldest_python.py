"""The notebooks run on the oldest Python the kit supports, not only on the one that regenerated
them (07a once called `contextlib.chdir`, new in 3.11: on 3.10 Run All stopped there).

mypy reads every notebook's code cells twice, for the oldest version (`requires-python`) and
for a newer one; an error only the older reading finds is an API that version lacks. The
notebooks' loose typing is the same in both readings, so it cancels out. What they import from
the kit is skipped here: the package, tests, bench, site and tools are type-checked for the
oldest version by `kit.py test` already (`[tool.mypy] python_version`, which the first test
keeps equal to `requires-python`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
NEWER = "3.13"  # the newest Python of the CI matrix (.github/workflows/tests.yml)
MAGIC = re.compile(r"^(\s*)[%!]")  # IPython's %magic and !shell lines are not Python
# IPython gives every cell `display`; the header keeps the cells' own line numbers
HEADER = "from typing import Any; display: Any  # noqa\n"


def oldest_python() -> str:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    match = re.fullmatch(r">=(3\.\d+)", pyproject["project"]["requires-python"])
    assert match, pyproject["project"]["requires-python"]
    assert pyproject["tool"]["mypy"]["python_version"] == match.group(1)
    return match.group(1)


def notebook_as_module(notebook: Path) -> str:
    """The notebook's code cells in order, one module; a magic line becomes `pass`."""
    lines = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            for line in "".join(cell["source"]).split("\n"):
                lines.append(MAGIC.sub(r"\1pass  # ", line, count=1))
            lines.append("")
    return HEADER + "\n".join(lines)


def mypy_errors(folder: Path, version: str) -> set[str]:
    """mypy's errors in the modules of `folder`, read for Python `version`."""
    config = folder / "mypy.ini"
    config.write_text("[mypy]\n", encoding="utf-8")  # not the project's strict settings
    command = [sys.executable, "-m", "mypy", "--config-file", str(config)]
    command += ["--python-version", version, "--follow-imports=skip"]
    command += ["--ignore-missing-imports", "--no-error-summary", "--hide-error-context"]
    command += ["--cache-dir", str(ROOT / ".mypy_cache" / f"notebooks-{version}")]
    command += sorted(module.name for module in folder.glob("*.py"))  # errors name file:line
    done = subprocess.run(
        command, cwd=folder, capture_output=True, encoding="utf-8", errors="replace", check=False
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr  # 2: mypy itself failed
    # file:line: error: …, the file by its name (mypy's cache may give a path it saw before)
    return {os.path.basename(line) for line in done.stdout.splitlines() if ": error: " in line}


def test_the_oldest_supported_python_is_the_one_mypy_reads_for() -> None:
    assert oldest_python() == "3.10"  # README: 只需要 Python ≥ 3.10


def test_no_notebook_uses_an_api_the_oldest_supported_python_lacks(tmp_path: Path) -> None:
    for notebook in NOTEBOOKS:
        # a name mypy takes as a module: 07a_beyond… cannot start with a digit
        (tmp_path / f"nb_{notebook.stem}.py").write_text(notebook_as_module(notebook), "utf-8")
    # beside them, a module that uses an API new in 3.11: the check must find it (and only it)
    (tmp_path / "uses_chdir.py").write_text(
        "import contextlib\nwith contextlib.chdir('.'):\n    pass\n", encoding="utf-8"
    )
    oldest = oldest_python()
    only_old = mypy_errors(tmp_path, oldest) - mypy_errors(tmp_path, NEWER)
    canary = {error for error in only_old if error.startswith("uses_chdir.py:")}
    assert [line.split(": error: ")[1] for line in canary] == [
        'Module has no attribute "chdir"  [attr-defined]'
    ]
    shown = []
    for error in sorted(only_old - canary):  # with the line it is about
        name, number = error.split(":")[:2]
        line = (tmp_path / name).read_text(encoding="utf-8").split("\n")[int(number) - 1]
        shown.append(f"{error}\n    {line.strip()}")
    assert not shown, f"not on Python {oldest}:\n" + "\n".join(shown)


def test_a_magic_line_becomes_pass_and_the_cells_keep_their_line_numbers(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "markdown", "source": ["# 标题"]},
        {"cell_type": "code", "source": ["%timeit f()\n", "x = 1"]},
        {"cell_type": "code", "source": ["  !ls\n", "y = x"]},
    ]
    notebook = tmp_path / "n.ipynb"
    notebook.write_text(json.dumps({"cells": cells}), encoding="utf-8")
    assert notebook_as_module(notebook).split("\n") == [
        HEADER.rstrip("\n"),
        "pass  # timeit f()",
        "x = 1",
        "",
        "  pass  # ls",
        "y = x",
        "",
    ]
