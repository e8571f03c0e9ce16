"""The package itself needs only the standard library; the heavy extras stay optional.

A fresh interpreter refuses to import anything outside the standard library, then imports the
package and each of its modules and runs the command line's help: all of it must work, and it
never reaches the notebooks' apparatus (`teaching`). Of the apparatus only the widgets
(`explorers`, the `notebooks` extra) need a package from PyPI; the live client imports httpx
only if it is there (the `live` extra) and says so when it is used without it.
"""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import contextlib, importlib, importlib.abc, io, json, pkgutil, sys
before = set(sys.modules)  # what site loaded at start-up is not the package's doing

class OnlyTheStandardLibrary(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        root = name.split(".")[0]
        if root not in sys.stdlib_module_names and root not in ("mini_agent", "teaching"):
            raise ModuleNotFoundError(f"blocked: {name}", name=name)
        return None

sys.meta_path.insert(0, OnlyTheStandardLibrary())
import mini_agent
for module in pkgutil.walk_packages(mini_agent.__path__, "mini_agent."):  # live too
    if module.name.rsplit(".", 1)[-1] != "__main__":
        importlib.import_module(module.name)
from mini_agent.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = None
    try:
        main(["--help"])
    except SystemExit as done:
        code = done.code
from mini_agent.live.openai_client import OpenAICompatibleClient
try:
    OpenAICompatibleClient("http://127.0.0.1:9", "m")
    live = "constructed"
except ModuleNotFoundError as err:
    live = str(err)
print(json.dumps({"modules": sorted(set(sys.modules) - before), "help_exit": code,
                  "help": out.getvalue(), "live": live}))
"""


def run_isolated() -> dict[str, object]:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, encoding="utf-8", check=True
    )
    result: dict[str, object] = json.loads(run.stdout)
    return result


def test_the_package_and_its_cli_work_with_only_the_standard_library() -> None:
    result = run_isolated()
    modules = result["modules"]
    assert isinstance(modules, list)
    assert "mini_agent.session" in modules and "mini_agent.live.chat" in modules
    roots = {name.split(".")[0] for name in modules}
    assert sorted(roots - set(sys.stdlib_module_names) - {"mini_agent"}) == []  # no `teaching`
    assert result["help_exit"] == 0 and "check" in str(result["help"])


def test_the_live_client_without_its_extra_says_how_to_get_it() -> None:
    assert run_isolated()["live"] == "the live model client needs httpx: pip install -e '.[live]'"


def test_only_the_widgets_need_a_package_from_pypi() -> None:
    module = "teaching.explorers"
    blocked = SCRIPT.split("import mini_agent")[0] + f"import {module}\n"
    run = subprocess.run([sys.executable, "-c", blocked], capture_output=True, encoding="utf-8")
    assert run.returncode != 0 and "blocked: ipywidgets" in run.stderr


def test_the_cli_imports_httpx_only_when_chat_talks_to_a_model() -> None:
    # httpx is installed here (`live` extra); `check` and friends still should not pay for it
    script = "import sys, mini_agent.cli, mini_agent.live.chat; print('httpx' in sys.modules)"
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, encoding="utf-8", check=True
    )
    assert run.stdout.strip() == "False"
