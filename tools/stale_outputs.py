"""Stored outputs that can be recomputed without a kernel, and whether they are stale.

Strict nbval proves every stored output, but only in the full tier (a kernel per notebook,
minutes). Two kinds of output change when a file outside the notebook changes, and are cheap
to recompute here, in the quick tier and in `python kit.py regenerate`:

- 90's outputs are the exercise checks' reports on the reference answers: a case added to a
  check in teaching/exercises.py changes "12 个用例" to "13" there. 90 has only printed text and
  check reports, so its code cells run here, in order, in one namespace, as a kernel would run
  them (stdout captured; a last expression shown by its repr and its HTML).
- 00's list of sample sessions is `sample_listing()` over teaching/sample_sessions/: a file
  dropped there changes it.

`stale()` says which notebooks differ from what they would print now, and where; regenerating
them (`python kit.py regenerate`) is the fix.
"""

from __future__ import annotations

import ast
import contextlib
import io
import itertools
import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
REGENERATE = "python kit.py regenerate"  # the one command that rewrites stored outputs


def regenerate_command(*names: str) -> str:
    return " ".join([REGENERATE, *(f"notebooks/{name}" for name in names)])


def sanitizers() -> list[tuple[re.Pattern[str], str]]:
    """nbval's sanitize pairs (the file kit.py passes to nbval), applied to both sides."""
    sys.path.insert(0, str(ROOT))
    try:
        from kit import NBVAL
    finally:
        sys.path.remove(str(ROOT))
    lines = (ROOT / NBVAL[-1]).read_text(encoding="utf-8").splitlines()
    pairs = []
    for first, second in itertools.pairwise(lines):
        if first.startswith("regex: ") and second.startswith("replace: "):
            pairs.append((re.compile(first[len("regex: ") :]), second[len("replace: ") :]))
    return pairs


def _clean(text: str, pairs: list[tuple[re.Pattern[str], str]]) -> str:
    for pattern, replacement in pairs:
        text = pattern.sub(replacement, text)
    return text


def _stored(cell: dict[str, Any]) -> list[tuple[str, str]]:
    """A code cell's stored outputs as (kind, text): stdout joined, then each result's forms."""
    found: list[tuple[str, str]] = []
    stdout = "".join(
        "".join(output["text"])
        for output in cell["outputs"]
        if output["output_type"] == "stream" and output["name"] == "stdout"
    )
    if stdout:
        found.append(("stdout", stdout))
    for output in cell["outputs"]:
        if output["output_type"] in ("execute_result", "display_data"):
            for mime in ("text/plain", "text/html"):
                if mime in output["data"]:
                    found.append((mime, "".join(output["data"][mime])))
        elif output["output_type"] == "error":
            found.append(("error", f"{output['ename']}: {output['evalue']}"))
    return found


@contextlib.contextmanager
def _shell() -> Iterator[Any]:
    """An IPython shell for the run (the checks display their own reports in one), or None
    where IPython is not installed."""
    try:
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config
    except ImportError:
        yield None
        return
    config = Config()
    config.HistoryAccessor.enabled = False
    shell = InteractiveShell.instance(config=config)
    try:
        yield shell
    finally:
        InteractiveShell.clear_instance()


def _run(source: str, namespace: dict[str, Any], shell: Any = None) -> list[tuple[str, str]]:
    """Run one cell as a kernel does: every statement, what it displays (in `shell`), the
    last expression's value shown."""
    if shell is None:
        return _run_plain(source, namespace)
    from IPython.utils.capture import capture_output

    shell.events.trigger("pre_run_cell", None)
    with capture_output(stdout=False, stderr=False) as shown:
        found = _run_plain(source, namespace, displayed=True)
    outputs = [
        (mime, output.data[mime])
        for output in shown.outputs
        for mime in ("text/plain", "text/html")
        if mime in output.data
    ]
    stdout = [item for item in found if item[0] == "stdout"]
    return [*stdout, *outputs, *(item for item in found if item[0] != "stdout")]


def _run_plain(
    source: str, namespace: dict[str, Any], displayed: bool = False
) -> list[tuple[str, str]]:
    """`_run` without a shell; `displayed`: a value with `_ipython_display_` displays itself."""
    tree = ast.parse(source)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        tree.body.pop()
    else:
        last = None
    out = io.StringIO()
    value: Any = None
    error = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(tree, "<cell>", "exec"), namespace)
            if last is not None:
                expression = ast.Expression(last.value)
                value = eval(compile(expression, "<cell>", "eval"), namespace)
        except Exception as raised:  # shown as the kernel shows it: its name and message
            error = f"{type(raised).__name__}: {raised}"
    found = [("stdout", out.getvalue())] if out.getvalue() else []
    if error is not None:
        return [*found, ("error", error)]
    if displayed and hasattr(value, "_ipython_display_"):
        value._ipython_display_()
    elif value is not None:
        found.append(("text/plain", repr(value)))
        html = getattr(value, "_repr_html_", None)
        if html is not None:
            found.append(("text/html", html()))
    return found


def notebook_differences(name: str) -> list[str]:
    """Where 90 (a notebook of printed text and reports) prints other than it stores."""
    path = NOTEBOOKS / name
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    pairs = sanitizers()
    namespace: dict[str, Any] = {"__name__": "__main__"}
    here = Path.cwd()
    os.chdir(path.parent)  # the kernel's folder, as nbval and regeneration run it
    try:
        with _shell() as shell:
            found = _differences(cells, namespace, pairs, shell)
    finally:
        os.chdir(here)
    return found


def _differences(
    cells: list[dict[str, Any]],
    namespace: dict[str, Any],
    pairs: list[tuple[re.Pattern[str], str]],
    shell: Any,
) -> list[str]:
    """Each code cell run in turn: where its outputs now differ from those stored."""
    found: list[str] = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        now = [(kind, _clean(text, pairs)) for kind, text in _run(source, namespace, shell)]
        stored = [(kind, _clean(text, pairs)) for kind, text in _stored(cell)]
        if now != stored:
            found.append(_first_difference(source, stored, now))
    return found


def _first_difference(
    source: str, stored: list[tuple[str, str]], now: list[tuple[str, str]]
) -> str:
    """The cell by its last line, and the first line of output that differs."""
    head = source.strip().splitlines()[-1][:60]
    for (kind, old), (_, new) in itertools.zip_longest(stored, now, fillvalue=("", "")):
        pairs = itertools.zip_longest(old.splitlines(), new.splitlines(), fillvalue="")
        for a, b in pairs:
            if a != b:
                return f"`{head}` ({kind or 'output'}): stored {a[:70]!r}, now {b[:70]!r}"
    return f"`{head}`: stored {len(stored)} outputs, now {len(now)}"


def sample_list_differences(name: str) -> list[str]:
    """Where 00's stored list of sample sessions differs from `sample_listing()` now."""
    from teaching.samples import sample_listing

    cells = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
    listed = [
        cell
        for cell in cells
        if cell["cell_type"] == "code" and "sample_listing()" in "".join(cell["source"])
    ]
    if len(listed) != 1:
        return [f"expected one cell that prints sample_listing(), found {len(listed)}"]
    stored = "".join("".join(output.get("text", "")) for output in listed[0]["outputs"])
    now = sample_listing() + "\n"
    if stored == now:
        return []
    return [
        _first_difference("".join(listed[0]["source"]), [("stdout", stored)], [("stdout", now)])
    ]


# notebook -> how to recompute its outputs without a kernel
CHECKS: dict[str, Callable[[str], list[str]]] = {
    "00_guide.ipynb": sample_list_differences,
    "90_solutions.ipynb": notebook_differences,
}


def stale() -> dict[str, list[str]]:
    """{notebook: where its stored outputs differ from what it would print now}."""
    return {name: found for name, check in CHECKS.items() if (found := check(name))}


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    for name, found in stale().items():
        print(f"{name}: " + "; ".join(found))
