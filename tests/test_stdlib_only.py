"""The package itself needs only the standard library; the heavy extras stay optional."""

from __future__ import annotations

import json
import subprocess
import sys

# In a fresh interpreter: import the package and each of its modules (not __main__, which
# would run the command line), then list every module that importing them loaded.
SCRIPT = """
import importlib, json, pkgutil, sys
before = set(sys.modules)
import mini_agent
for module in pkgutil.iter_modules(mini_agent.__path__):
    if module.name != "__main__":
        importlib.import_module("mini_agent." + module.name)
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_mini_agent_and_its_modules_import_only_the_standard_library() -> None:
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
    loaded = json.loads(run.stdout)
    assert "mini_agent.session" in loaded  # the check saw the package's modules load
    roots = {name.split(".")[0] for name in loaded}
    assert sorted(roots - set(sys.stdlib_module_names) - {"mini_agent"}) == []
