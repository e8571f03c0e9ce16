"""Ready the site's wheels for a fast kernel start; runs inside Pyodide (prepare_wheels.mjs).

Every kernel the browser starts unpacks each locked wheel and imports IPython, ipywidgets and
the kit. Two costs dominate, both measured in `site/README.md`: unpacking jedi's 5,626 files
(typeshed's stubs for third-party packages the site does not have) and compiling hundreds of
modules from source, in WebAssembly, on every page. So each wheel is rewritten once, here:

- paths under a prefix listed for it in `site.json` ("wheel_trim") are left out;
- every module a starting kernel imports (found by importing them here, from the wheels
  themselves) and every module of the kit gets its bytecode, `__pycache__/NAME.cpython-3XY.pyc`,
  compiled by the very Python the browser runs (this Pyodide), as an unchecked-hash pyc
  (PEP 552): Python uses it without comparing it to the source, whose file times in the browser
  mean nothing. The sources stay, so tracebacks still show their lines. Modules nobody imports
  on start (most of pygments' lexers, jedi, prompt_toolkit) stay source only: bytecode for them
  would add megabytes to download and files to unpack for nothing;
- RECORD lists what the wheel now holds.

Usage (paths as this Pyodide sees them):
    prepare_wheels.py CONFIG_JSON --rewrite WHEEL... [--import-only WHEEL...]
`--import-only` wheels are importable while the start is traced, and left as they are (the
kernel extension's own wheels, which its package index lists by hash). Prints one JSON line
per rewritten wheel: name, files before and after, modules compiled.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import importlib
import importlib.util
import json
import py_compile
import sys
import tempfile
import zipfile
from pathlib import Path

STAMP = (1980, 1, 1, 0, 0, 0)  # one time for every added entry: the same wheel on every build


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def bytecode(name: str, source: bytes, scratch: Path) -> bytes:
    """`source`'s unchecked-hash pyc, as this interpreter writes it (raises if it cannot)."""
    path = scratch / "m.py"
    path.write_bytes(source)
    target = scratch / "m.pyc"
    py_compile.compile(
        str(path),
        cfile=str(target),
        dfile=name,  # the path a traceback names, as the installed file is found
        doraise=True,
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    )
    return target.read_bytes()


def cached_name(name: str) -> str:
    return importlib.util.cache_from_source(name)  # e.g. pkg/__pycache__/m.cpython-314.pyc


def modules_imported_on_start(
    wheels: list[Path], startup: list[str], kit: list[str], installed: Path
) -> set[str]:
    """The wheel entries (`package/module.py`) of the modules importing `startup` loads, with
    the wheels unpacked into `installed` first on sys.path, plus every module of the `kit`'s
    packages."""
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(installed)
    sys.path.insert(0, str(installed))
    sys.argv = sys.argv[:1]  # pyodide_kernel starts an IPython app, which parses sys.argv
    before, streams = set(sys.modules), (sys.stdout, sys.stderr)
    for name in startup:
        importlib.import_module(name)
    sys.stdout, sys.stderr = streams  # pyodide_kernel sends them to the notebook it serves
    found: set[str] = set()
    for name in set(sys.modules) - before:
        file = getattr(sys.modules[name], "__file__", None) or ""
        if file.startswith(f"{installed}/") and file.endswith(".py"):
            found.add(file[len(str(installed)) + 1 :])
    for package in kit:
        found |= {p.relative_to(installed).as_posix() for p in (installed / package).rglob("*.py")}
    return found


def prepare(wheel: Path, trim: list[str], hot: set[str], scratch: Path) -> dict[str, object]:
    with zipfile.ZipFile(wheel) as source:
        entries = source.infolist()
        contents = {entry.filename: source.read(entry) for entry in entries}
    record = next(e.filename for e in entries if e.filename.endswith(".dist-info/RECORD"))
    kept = [e for e in entries if not any(e.filename.startswith(prefix) for prefix in trim)]
    compiled: dict[str, bytes] = {}
    for entry in kept:
        name = entry.filename
        if name in hot:
            compiled[cached_name(name)] = bytecode(name, contents[name], scratch)
    lines = [record_line(e.filename, contents[e.filename]) for e in kept if e.filename != record]
    lines += [record_line(name, data) for name, data in compiled.items()]
    lines.append(f"{record},,")
    contents[record] = ("\n".join(lines) + "\n").encode()
    written = wheel.with_suffix(".partial")
    with zipfile.ZipFile(written, "w", zipfile.ZIP_DEFLATED) as out:
        for entry in kept:
            if entry.filename != record:
                out.writestr(entry, contents[entry.filename])
        for name, data in compiled.items():
            out.writestr(zipfile.ZipInfo(name, STAMP), data, zipfile.ZIP_DEFLATED)
        out.writestr(zipfile.ZipInfo(record, STAMP), contents[record], zipfile.ZIP_DEFLATED)
    written.replace(wheel)
    return {
        "wheel": wheel.name,
        "files": [len(entries), len(kept) + len(compiled)],
        "compiled": len(compiled),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("config", type=Path)
    parser.add_argument("--rewrite", type=Path, nargs="+", required=True)
    parser.add_argument("--import-only", type=Path, nargs="*", default=[])
    args = parser.parse_args()
    config = json.loads(args.config.read_text(encoding="utf-8"))
    everything: list[Path] = [*args.rewrite, *args.import_only]
    with tempfile.TemporaryDirectory() as folder:
        installed = Path(folder, "site-packages")
        startup, kit = config["kernel_startup"], config["kit_packages"]
        hot = modules_imported_on_start(everything, startup, kit, installed)
        for wheel in args.rewrite:
            project = wheel.name.split("-")[0].lower().replace("_", "-")
            trim = config["wheel_trim"].get(project, {}).get("prefixes", [])
            print(json.dumps(prepare(wheel, trim, hot, Path(folder))), flush=True)


if __name__ == "__main__":
    main()
