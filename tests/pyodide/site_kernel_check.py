# Run by site_kernel.mjs inside the site's Pyodide, after the kernel's own imports: what the
# build's wheel preparation (site/prepare_wheels.py) promises, checked where it matters.
import importlib
import importlib.util
import json
import pathlib
import site
import sys
import traceback

import ipywidgets  # noqa: F401  (every notebook's widgets)

import mini_agent.context

packages = pathlib.Path(site.getsitepackages()[0])


def pyc_flags(file: str) -> int | None:
    """PEP 552's flags word of a module's cached bytecode: 1 = hash-based, source not checked."""
    cached = pathlib.Path(importlib.util.cache_from_source(file))
    return int.from_bytes(cached.read_bytes()[4:8], "little") if cached.exists() else None


loaded = {
    name: file
    for name, module in list(sys.modules.items())
    if (file := getattr(module, "__file__", None) or "").startswith(f"{packages}/")
    and file.endswith(".py")
}

# IPython imports jedi only to complete: not among the start's modules, so not prepared
jedi = importlib.import_module("jedi")

# The bytecode is what runs: a kit module's source changed after installation still imports as
# built (Python did not recompile it from the source beside it).
untouched = "mini_agent.cli"
assert untouched not in sys.modules, f"{untouched} is imported on start: pick another module"
source = packages / "mini_agent" / "cli.py"
source.write_text(source.read_text(encoding="utf-8") + "\nraise RuntimeError('from source')\n")
try:
    importlib.import_module(untouched)
    changed_source_ran = False
except RuntimeError:
    changed_source_ran = True

# The sources stay: a traceback shows the kit's line.
try:
    mini_agent.context.trim_context([], 0)
except mini_agent.context.ContextBudgetError:
    shown = traceback.format_exc()

# An error in a reader's cell, run by the browser kernel's own IPython shell (what its `run`
# records and sends): the kit's 释义 under the traceback (teaching.tracebacks, registered by
# `import teaching`); other errors unchanged.
shell = importlib.import_module("pyodide_kernel").ipython_shell
cells = {}
for name, code in {
    "import": "import teaching",
    "budget": "from mini_agent import trim_context\ntrim_context([], 0)",
    "division": "1 / 0",
}.items():
    shell._last_traceback = None
    shell.run_cell(code)
    cells[name] = shell._last_traceback

json.dumps(
    {
        "cells": cells,
        "loaded": len(loaded),
        "without_bytecode": sorted(name for name, file in loaded.items() if pyc_flags(file) != 1),
        "changed_source_ran": changed_source_ran,
        "traceback": shown,
        "completes_module": [
            c.name for c in jedi.Interpreter("json.lo", [{"json": json}]).complete()
        ],
        "completes_builtin": [c.name for c in jedi.Interpreter("'abc'.upp", [{}]).complete()],
        # inferred from the standard library's stubs (without them jedi recurses until it fails)
        "completes_inferred": [c.name for c in jedi.Interpreter("x = [1]\nx.app", [{}]).complete()],
        "jedi_stubs": sorted(
            p.name for p in (pathlib.Path(str(jedi.__file__)).parent / "third_party").iterdir()
        ),
    }
)
