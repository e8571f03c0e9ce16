"""Build the kit's offline browser edition: a static JupyterLite site in `_site/`.

    python3 site/build.py [--out DIR] [--force]

Everything the site serves comes from this checkout or a package registry, and nothing in it
names another host: the kit's wheel is built from the working tree, Pyodide's core comes from
the npm package at the version jupyterlite-pyodide-kernel pins, and every Python package the
browser loads is solved from PyPI by the lock step and copied into the site. The build keeps
its own environment (.site-venv/) and caches (.site-cache/); with unchanged inputs (package,
notebooks, this folder) it reuses the last site. Standard library only: runs on Python >= 3.10,
and finds a Python >= 3.12 for the build environment (the lock step needs it).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "site"
VENV = ROOT / ".site-venv"
CACHE = ROOT / ".site-cache"
CONFIG = json.loads((HERE / "site.json").read_text(encoding="utf-8"))
# the kit's wheel: its top-level packages, the session code and the notebooks' apparatus
KIT_PACKAGES: list[str] = CONFIG["kit_packages"]
# JupyterLab settings the kit shares with desktop JupyterLab (`.jsonl` opens as text): one file
OVERRIDES = ROOT / "jupyter" / "overrides.json"
STAMP = "built-inputs.sha256"  # in CACHE: the digest of the inputs the site in --out was built from
PYODIDE_CORE = ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"]
URL = re.compile(r"\bhttps?://([A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9])")


def log(message: str) -> None:
    print(f"[site] {message}", flush=True)


def run(*command: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"[site] failed ({done.returncode}): {' '.join(map(str, command))}\n{done.stdout}")
    return done.stdout


# Inputs: what the site is built from, hashed so an unchanged checkout reuses the last build.


def input_files() -> list[Path]:
    # the kit's wheel: both packages, with the sample sessions it ships (teaching/sample_sessions)
    package = [
        p
        for name in KIT_PACKAGES
        for p in (ROOT / name).rglob("*")
        if p.suffix in {".py", ".typed", ".jsonl"}
    ]
    notebooks = [*(ROOT / "notebooks").glob("*.ipynb"), *(ROOT / "notebooks").glob("*.md")]
    config = [p for p in HERE.iterdir() if p.is_file()]
    shared = [ROOT / "pyproject.toml", ROOT / "README.md", OVERRIDES]
    return sorted({*package, *notebooks, *config, *shared})


def inputs_digest() -> str:
    digest = hashlib.sha256()
    for path in input_files():
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


# The build environment: a Python >= 3.12 with JupyterLite and the lock step.


def python_candidates() -> list[Path]:
    found = [os.environ.get("SITE_PYTHON")]  # an explicit choice first
    found += [shutil.which(name) for name in ("python3.13", "python3.12")]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    patterns = ("3.13*/bin/python3.13", "3.12*/bin/python3.12")
    found += [str(p) for pattern in patterns for p in sorted(pyenv.glob(pattern), reverse=True)]
    return [Path(p) for p in found if p]


def find_build_python() -> Path:
    """The first Python >= 3.12 that really runs (a pyenv shim may exist and still fail)."""
    for candidate in python_candidates():
        probe = subprocess.run(
            [str(candidate), "-c", "import sys; print(sys.version_info >= (3, 12))"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.returncode == 0 and probe.stdout.strip() == "True":
            return candidate
    sys.exit(
        "[site] the build needs Python 3.12 or 3.13 (the lock step's pyodide-lock needs >= 3.12),"
        " and none was found: tried $SITE_PYTHON, python3.13 and python3.12 on PATH and in pyenv.\n"
        "  Install one (e.g. Debian 13: apt-get install python3.13; anywhere: pyenv install 3.12),"
        " or name it: SITE_PYTHON=/path/to/python3.12 python kit.py site"
    )


def ensure_venv(env: dict[str, str]) -> Path:
    requirements = HERE / "requirements-build.txt"
    stamp = VENV / ".installed"
    wanted = hashlib.sha256(requirements.read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == wanted and (VENV / "bin" / "python").exists():
        return VENV / "bin" / "python"
    python = find_build_python()
    log(f"build environment {VENV.name}/ from {python}")
    shutil.rmtree(VENV, ignore_errors=True)
    run(python, "-m", "venv", VENV)
    pip: list[str | Path] = [
        VENV / "bin" / "python",
        "-m",
        "pip",
        "--disable-pip-version-check",
        "-q",
    ]
    run(*pip, "install", "-r", requirements, env=env)
    stamp.write_text(wanted)
    return VENV / "bin" / "python"


# The pieces: Pyodide's core from npm, the kit's wheel, the notebooks.


def pyodide_core(python: Path, static: Path) -> str:
    """Pyodide's runtime files from the npm package, with a lock that lists no package.

    Pyodide's own lock points every package at its CDN; emptied, the lock step solves every
    package from PyPI instead and the site serves each one itself."""
    version = run(
        python,
        "-c",
        "from jupyterlite_pyodide_kernel.constants import PYODIDE_VERSION; print(PYODIDE_VERSION)",
    ).strip()
    npm_cache = CACHE / "npm"
    tarball = npm_cache / f"pyodide-{version}.tgz"
    if not tarball.exists():
        if shutil.which("npm") is None:
            sys.exit(
                "[site] Pyodide's core comes from the npm registry: install npm (apt-get install npm)"
            )
        npm_cache.mkdir(parents=True, exist_ok=True)
        run("npm", "pack", f"pyodide@{version}", "--silent", "--pack-destination", npm_cache)
    target = static / "pyodide"
    target.mkdir(parents=True)
    with tarfile.open(tarball) as archive:
        for name in [*PYODIDE_CORE, "pyodide-lock.json"]:
            source = archive.extractfile(f"package/{name}")
            assert source is not None, f"{name} missing from {tarball.name}"
            (target / name).write_bytes(source.read())
    lock = json.loads((target / "pyodide-lock.json").read_text(encoding="utf-8"))
    lock["packages"] = {}
    (target / "pyodide-lock.json").write_text(json.dumps(lock), encoding="utf-8")
    return version


def kit_wheel(python: Path, wheels: Path, env: dict[str, str]) -> None:
    """The kit's wheel from a clean copy of the working tree (no stale build/ or egg-info)."""
    with tempfile.TemporaryDirectory(prefix="kit-") as scratch:
        source = Path(scratch) / "src"
        source.mkdir()
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for package in KIT_PACKAGES:
            shutil.copytree(ROOT / package, source / package, ignore=ignore)
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, source / name)
        pip: list[str | Path] = [python, "-m", "pip", "--disable-pip-version-check", "-q"]
        run(*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", wheels, source, env=env)


def required_modules(notebook: Path) -> set[str]:
    """Top-level modules a notebook imports, except those it imports inside `try` (optional)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found: set[str] = set()
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        lines = "".join(cell["source"]).splitlines()
        code = "\n".join(line for line in lines if not line.lstrip().startswith(("%", "!")))
        tree = ast.parse(code)
        optional = {
            id(node)
            for block in ast.walk(tree)
            if isinstance(block, ast.Try)
            for statement in block.body
            for node in ast.walk(statement)
        }
        for node in ast.walk(tree):
            if id(node) in optional:
                continue
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def notebook_title(notebook: Path) -> str:
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return notebook.stem


def choose_notebooks(files: Path) -> dict[str, list[str]]:
    """Copy the notebooks the browser can run, and the Markdown beside them; return the
    notebooks left out with the modules they need that the browser does not have."""
    missing_in_browser = set(CONFIG["modules_not_in_browser"])
    left_out: dict[str, list[str]] = {}
    files.mkdir()
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        lacking = sorted(required_modules(notebook) & missing_in_browser)
        if lacking:
            left_out[notebook.name] = lacking
        else:
            shutil.copy(notebook, files / notebook.name)
    for page in (ROOT / "notebooks").glob("*.md"):  # e.g. the cheat sheet the notebooks link to
        shutil.copy(page, files / page.name)
    for notebook in files.glob("*.ipynb"):
        unlink_left_out(notebook, set(left_out))
        as_the_browser_opens_it(notebook)
    return left_out


SAMPLES = "samples"  # session files in the file browser, to double-click and to load


def sample_sessions(folder: Path) -> dict[str, str]:
    """Every sample session the kit ships (teaching/sample_sessions/*.jsonl, found, not
    listed), copied for a student to open as text and to load. Returns {file name: what
    load_session says}, checked here against the kit itself: a name says what loading gives
    (teaching.samples.expected_failure)."""
    sys.path.insert(0, str(ROOT))
    try:
        from teaching.samples import sample_files, says_as_named, what_loading_says
    finally:
        sys.path.remove(str(ROOT))
    folder.mkdir()
    said: dict[str, str] = {}
    for path in sample_files():
        shutil.copy(path, folder / path.name)
        said[path.name] = what_loading_says(folder / path.name)
    wrong = {name: says for name, says in said.items() if not says_as_named(name, says)}
    if not said or wrong:
        sys.exit(f"[site] the sample sessions do not say what their names say: {wrong or said}")
    return said


# What the Pyodide kernel reports when it connects (jupyterlite-pyodide-kernel 0.8.6: its
# kernelspec, and the language_info its kernelInfoRequest returns, "3.8" included).
BROWSER_KERNEL = {
    "kernelspec": {"name": "python", "display_name": "Python (Pyodide)", "language": "python"},
    "language_info": {
        "codemirror_mode": {"name": "python", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": "3.8",
    },
}


def as_the_browser_opens_it(notebook: Path) -> None:
    """Rewrite the site's copy (one read, one write) so JupyterLab in the browser opens it
    unchanged and saves it intact:

    - every multiline field is one string, as a Jupyter server sends a notebook (nbformat's
      rejoin_lines): JupyterLite serves the file as it is, and JupyterLab saved a stream output
      whose text came as a list of lines with commas between them ("line 1\\n,line 2");
    - the metadata names the kernel the browser runs: JupyterLab writes the connecting kernel's
      kernelspec and language_info in, and a notebook named for another kernel opened as
      changed (unsaved) before a student touched it."""
    content = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in content["cells"]:
        if isinstance(cell["source"], list):
            cell["source"] = "".join(cell["source"])
        for output in cell.get("outputs", []):
            if isinstance(output.get("text"), list):
                output["text"] = "".join(output["text"])
            for mime, value in output.get("data", {}).items():
                if isinstance(value, list) and not mime.endswith("json"):
                    output["data"][mime] = "".join(value)
    content["metadata"].update(json.loads(json.dumps(BROWSER_KERNEL)))
    notebook.write_text(json.dumps(content, ensure_ascii=False, indent=1) + "\n", "utf-8")


def unlink_left_out(notebook: Path, left_out: set[str]) -> None:
    """In the site's copy, a Markdown link to a notebook the site lacks becomes its plain text:
    a link that opens nothing is worse than none (the first page says why it is absent)."""
    if not left_out:
        return
    names = "|".join(re.escape(name) for name in sorted(left_out))
    link = re.compile(r"\[([^\]]*)\]\((?:\./)?(?:" + names + r")(?:#[^)]*)?\)")
    content = json.loads(notebook.read_text(encoding="utf-8"))
    changed = False
    for cell in content["cells"]:
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            new = link.sub(r"\1", text)
            if new != text:
                cell["source"], changed = new.splitlines(keepends=True), True
    if changed:
        notebook.write_text(json.dumps(content, ensure_ascii=False, indent=1) + "\n", "utf-8")
    still = [name for name in left_out if f"]({name}" in notebook.read_text(encoding="utf-8")]
    if still:
        sys.exit(f"[site] {notebook.name} still links {still}, which the site lacks")


# After JupyterLite's build: checks and the landing page.


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def check_lock(out: Path, files: Path) -> list[str]:
    """Every locked package is a file of the site, its dependencies are locked too, and every
    module a notebook imports is there (standard library or locked). Returns the import names."""
    lock_path = out / "static" / "pyodide-lock" / "pyodide-lock.json"
    packages = json.loads(lock_path.read_text(encoding="utf-8"))["packages"]
    locked = {canonical(name) for name in packages}
    problems = []
    for name, package in packages.items():
        wheel = (lock_path.parent / package["file_name"]).resolve()
        if URL.match(package["file_name"]) or not wheel.is_file():
            problems.append(f"{name}: {package['file_name']} is not a file of the site")
        unlocked = [dep for dep in package["depends"] if canonical(dep) not in locked]
        problems += [f"{name} needs {dep}, which is not in the lock" for dep in unlocked]
    provided = {module for package in packages.values() for module in package["imports"]}
    for notebook in sorted(files.glob("*.ipynb")):
        absent = required_modules(notebook) - provided - set(sys.stdlib_module_names)
        problems += [f"{notebook.name} imports {module}, which the site lacks" for module in absent]
    if problems:
        sys.exit("[site] the lock does not hold what the site needs:\n  " + "\n  ".join(problems))
    return sorted(provided)


def prepare_wheels(out: Path) -> list[dict[str, Any]]:
    """Rewrite the lock step's wheels for a fast kernel start (prepare_wheels.py says how:
    trimmed, bytecode for what a kernel imports on start) and give the lock their new hashes.
    The kernel extension's own wheels are only imported: its package index lists their hashes."""
    lock_path = out / "static" / "pyodide-lock" / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text(encoding="utf-8"))
    wheels = {
        name: (lock_path.parent / package["file_name"]).resolve().relative_to(out).as_posix()
        for name, package in lock["packages"].items()
    }
    own = {
        name: wheel for name, wheel in wheels.items() if wheel.startswith("static/pyodide-lock/")
    }
    others = sorted(set(wheels.values()) - set(own.values()))
    if shutil.which("node") is None:
        sys.exit("[site] the wheels are prepared by Pyodide under node: install nodejs")
    report = run(
        "node", HERE / "prepare_wheels.mjs", out, HERE,
        "--rewrite", *sorted(own.values()), "--import-only", *others,
    )  # fmt: skip
    for name, wheel in own.items():
        lock["packages"][name]["sha256"] = hashlib.sha256((out / wheel).read_bytes()).hexdigest()
    lock_path.write_text(json.dumps(lock, indent=2), encoding="utf-8")
    return [json.loads(line) for line in report.splitlines() if line.startswith("{")]


def check_settings(out: Path) -> None:
    """The shared JupyterLab settings reached the site's runtime configuration."""
    config = json.loads((out / "jupyter-lite.json").read_text(encoding="utf-8"))
    found = config["jupyter-config-data"].get("settingsOverrides", {})
    wanted = json.loads(OVERRIDES.read_text(encoding="utf-8"))
    missing = [plugin for plugin, values in wanted.items() if found.get(plugin) != values]
    if missing:
        sys.exit(f"[site] {OVERRIDES.name} did not reach jupyter-lite.json: {missing}")


def own_copy_of_cdn_defaults(out: Path, version: str) -> list[str]:
    """Point fallbacks the site never takes (jupyter-lite.json sets pyodideUrl; pyodide reads
    cdnUrl only under node) at the site's own Pyodide instead of the CDN they name."""
    cdn = re.compile(
        r"https://cdn\.jsdelivr\.net/pyodide/v(?:" + re.escape(version) + r"|\$\{\w+\})/full/"
    )
    changed = []
    for path in text_files(out):
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        new, count = cdn.subn("./static/pyodide/", text)
        if count:
            path.write_text(new, encoding="utf-8", errors="surrogateescape")
            changed.append(path.relative_to(out).as_posix())
    return changed


# JupyterLite 0.8's drive fetches a file the site ships and parses it as JSON when its path
# matches this (in its bundle, as written): `.jsonl` does, so a sample session opened as
# "Unexpected non-whitespace character after JSON" and the kernel, asking the drive for it,
# got ENOENT. The site's copy of the test leaves line-oriented names out of it.
DRIVE_JSON_PATHS = r"/\.(ipynb|[^/]*json[^/]*)$/"
DRIVE_JSON_PATHS_BUT_LINES = r"/^(?!.*\.(?:jsonl|ndjson)$).*\.(ipynb|[^/]*json[^/]*)$/"
LINE_FILES = (".jsonl", ".ndjson")  # one JSON value a line: text, as the chapter reads it


def line_files_as_text(out: Path) -> list[str]:
    """Serve `.jsonl` files of the site as text: the drive's JSON test skips their names, and
    the contents listing gives each the mimetype text/plain (else the drive takes the web
    server's Content-Type, which may name JSON). Returns the bundle files changed."""
    changed = []
    for path in sorted((out / "build").glob("*.js")):
        text = path.read_text(encoding="utf-8")
        if DRIVE_JSON_PATHS in text:
            path.write_text(text.replace(DRIVE_JSON_PATHS, DRIVE_JSON_PATHS_BUT_LINES), "utf-8")
            changed.append(path.relative_to(out).as_posix())
    if len(changed) != 1:
        sys.exit(
            f"[site] expected JupyterLite's drive test {DRIVE_JSON_PATHS} in one bundle file of"
            f" build/, found it in {changed or 'none'}: a new JupyterLite? Check how it reads"
            " a .jsonl file, then update line_files_as_text"
        )
    for listing in (out / "api" / "contents").rglob("all.json"):
        content = json.loads(listing.read_text(encoding="utf-8"))
        entries = [e for e in content["content"] if e["name"].endswith(LINE_FILES)]
        for entry in entries:
            entry.update(mimetype="text/plain", format="text")
        if entries:
            listing.write_text(json.dumps(content, indent=2), encoding="utf-8")
    return changed


# The kernel's head start (kernel_early.js, kernel_early_worker.js): where the kernel's worker
# calls loadPyodide, as jupyterlite-pyodide-kernel 0.8.6's bundle writes it, and the apps whose
# pages start a kernel (lab/ keeps a spare: many notebooks in one page).
KERNEL_WORKER = "extensions/@jupyterlite/pyodide-kernel-extension/static/comlink.worker.*.js"
LOAD_PYODIDE = re.compile(r"this\._pyodide=await (\w+)\(\{indexURL:")
KERNEL_APPS = {"lab": 1, "notebooks": 0, "repl": 0}  # app: spare workers kept warming
EARLY_SCRIPT = "static/kit/kernel_early.js"
SNAPSHOT = "static/pyodide/kit-snapshot.bin.gz"  # make_snapshot.mjs: Python initialised, gzipped
LAB_OPEN = "static/kit/lab_open.js"  # lab/?reset&open=NAME: the first page's way in


def kernel_head_start(out: Path) -> str:
    """Give every kernel page a kernel worker that starts loading Pyodide with the page (and
    lab/ one more in reserve), and make the kernel's worker take that Pyodide. Returns the
    worker's path in the site."""
    workers = sorted(out.glob(KERNEL_WORKER))
    if len(workers) != 1:
        sys.exit(f"[site] expected one kernel worker {KERNEL_WORKER}, found {len(workers)}")
    worker = workers[0]
    code = worker.read_text(encoding="utf-8")
    calls = LOAD_PYODIDE.findall(code)
    if len(calls) != 1:
        sys.exit(
            f"[site] the kernel's worker calls loadPyodide {len(calls)} times where the kit"
            " expected one (a new jupyterlite-pyodide-kernel?): see kernel_head_start"
        )
    options = kernel_options(out)
    imports = warm_imports()
    depth = len(worker.relative_to(out).parts) - 1
    prelude = (
        f"const KIT_ROOT = {json.dumps('../' * depth)};\n"
        f"const KIT_OPTIONS = {json.dumps(options)};\n"
        f"const KIT_IMPORTS = {json.dumps(imports)};\n"
        f"const KIT_SNAPSHOT = {json.dumps(SNAPSHOT)};\n"
        + (HERE / "snapshot_restore.js").read_text(encoding="utf-8")
        + (HERE / "kernel_early_worker.js").read_text(encoding="utf-8")
    )
    patched = LOAD_PYODIDE.sub(r"this._pyodide=await globalThis.__kitPyodide(\1,{indexURL:", code)
    worker.write_text(prelude + patched, encoding="utf-8")
    (out / EARLY_SCRIPT).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(HERE / "kernel_early.js", out / EARLY_SCRIPT)
    shutil.copy(HERE / "lab_open.js", out / LAB_OPEN)
    where = worker.relative_to(out).as_posix()
    for app, spares in KERNEL_APPS.items():
        page = out / app / "index.html"
        text = page.read_text(encoding="utf-8")
        tag = (
            f'<script src="../{EARLY_SCRIPT}" data-worker="{where}" data-spares="{spares}">'
            "</script>"
        )
        if app == "lab":
            tag += f'\n    <script src="../{LAB_OPEN}"></script>'

        if text.count("<head>") != 1:
            sys.exit(f"[site] {app}/index.html: no single <head> to put the kernel's start in")
        page.write_text(text.replace("<head>", f"<head>\n    {tag}", 1), encoding="utf-8")
    return where


def kernel_options(out: Path) -> dict[str, Any]:
    """The options the site's kernel extension gives loadPyodide (URLs relative to the site)."""
    config = json.loads((out / "jupyter-lite.json").read_text(encoding="utf-8"))
    kernel = config["jupyter-config-data"]["litePluginSettings"][
        "@jupyterlite/pyodide-kernel-extension:kernel"
    ]
    pyodide_url = kernel["pyodideUrl"]  # what the kernel extension gives loadPyodide, in order
    return {"indexURL": pyodide_url[: pyodide_url.rindex("/") + 1], **kernel["loadPyodideOptions"]}


def warm_imports() -> str:
    """What a kernel's worker imports before the kernel takes it (kernel_early_worker.js)."""
    return "\n".join(f"import {module}" for module in CONFIG["kernel_warm_imports"])


def kernel_snapshot(out: Path) -> dict[str, Any]:
    """A memory snapshot of the site's Pyodide with the kernel's packages loaded and its first
    imports done (make_snapshot.mjs), for every kernel's worker to start from. Returns its
    sizes and the JavaScript objects Python holds in it, by name."""
    options = json.dumps(kernel_options(out))
    report = run("node", HERE / "make_snapshot.mjs", out, SNAPSHOT, options, warm_imports())
    made: dict[str, Any] = json.loads(report.strip().splitlines()[-1])
    return made


def text_files(out: Path) -> list[Path]:
    found = []
    for path in sorted(out.rglob("*")):
        if path.is_file():
            with path.open("rb") as handle:
                if b"\0" not in handle.read(8192):
                    found.append(path)
    return found


def foreign_hosts(out: Path) -> dict[str, set[str]]:
    """Hosts named in the site's text files that site.json does not vouch for: {host: files}."""
    vouched = {host for group in CONFIG["named_hosts"].values() for host in group["hosts"]}
    vouched -= set(CONFIG["never_named"])  # a CDN is never vouched for, whatever the list says
    foreign: dict[str, set[str]] = {}
    for path in text_files(out):
        text = path.read_text(encoding="utf-8", errors="replace")
        for host in {match.group(1).lower() for match in URL.finditer(text)}:
            if host not in vouched:
                foreign.setdefault(host, set()).add(path.relative_to(out).as_posix())
    return foreign


# the landing page's links open this app; jupyter_lite_config.json builds it
NOTEBOOK_APP = "notebooks/index.html"
TEXT_APP = "edit/index.html"  # a page of text, one document, no kernel


def landing_page(
    out: Path, files: Path, left_out: dict[str, list[str]], samples: dict[str, str]
) -> None:
    """The site's first page: the notebooks in order, in Chinese, and what is not here.

    A notebook opens in the single-document interface (`notebooks/`): one page, one notebook,
    one kernel, and nothing restored from earlier visits; `lab/` is linked (in index.html) with
    `?reset`, so it opens without the tabs, and their kernels, of an earlier visit."""
    items = [
        f'<li><a href="{NOTEBOOK_APP}?path={html.escape(nb.name)}">'
        f"{html.escape(notebook_title(nb))}</a> <code>{html.escape(nb.name)}</code></li>"
        for nb in sorted(files.glob("*.ipynb"))
    ]
    absent = [
        f"<li><code>{html.escape(Path(name).stem)}</code>：需要 "
        + "、".join(f"<code>{html.escape(m)}</code>" for m in modules)
        + "，浏览器版里没有这些模块；请在本机的 JupyterLab 里打开(<code>python kit.py lab --bench</code>)。</li>"
        for name, modules in sorted(left_out.items())
    ]
    pages = [
        f'<li><a href="{TEXT_APP}?path={html.escape(md.name)}">{html.escape(md.name)}</a></li>'
        for md in sorted(files.glob("*.md"))
        if md.name != "README.md"
    ]
    template = (HERE / "index.html").read_text(encoding="utf-8")
    page = (
        template.replace("{{notebooks}}", "\n      ".join(items))
        .replace("{{samples}}", sample_items(samples))
        .replace("{{pages}}", "\n      ".join(pages) or "<li>无</li>")
        .replace("{{left_out}}", "\n      ".join(absent) or "<li>无</li>")
    )
    (out / "index.html").write_text(page, encoding="utf-8")


def sample_items(samples: dict[str, str]) -> str:
    """The first page's list of sample files: each name and what `load_session` says of it."""
    return "\n          ".join(
        f"<li><code>{SAMPLES}/{html.escape(name)}</code>：{html.escape(says)}</li>"
        for name, says in sorted(samples.items())
    )


def size_on_disk(folder: Path) -> int:
    files = [p for p in folder.rglob("*") if p.is_file()]
    if sys.platform == "win32":  # no st_blocks there: the files' own sizes
        return sum(p.stat().st_size for p in files)
    return sum(p.stat().st_blocks * 512 for p in files)


def build(out: Path) -> None:
    env = dict(os.environ)
    env.update(
        PIP_CACHE_DIR=str(CACHE / "pip"),
        UV_CACHE_DIR=str(CACHE / "uv"),
        UV_PYTHON_DOWNLOADS="never",  # else uv fetches a CPython build from outside the registries
        PYTHONDONTWRITEBYTECODE="1",
    )
    python = ensure_venv(env)
    stage = CACHE / "lite"
    shutil.rmtree(stage, ignore_errors=True)
    (stage / "wheels").mkdir(parents=True)
    version = pyodide_core(python, stage / "static")
    kit_wheel(python, stage / "wheels", env)
    stub = VENV / "share/jupyter/labextensions/@jupyterlite/pyodide-kernel-extension/static/pypi"
    shutil.copy(next(stub.glob("widgetsnbextension-4.*.whl")), stage / "wheels")  # 7 KB, not 2 MB
    left_out = choose_notebooks(stage / "files")
    said = sample_sessions(stage / "files" / SAMPLES)
    for name in ("jupyter-lite.json", "jupyter_lite_config.json", "browser-requirements.txt"):
        shutil.copy(HERE / name, stage / name)
    shutil.copy(OVERRIDES, stage / "overrides.json")  # jupyter_lite_config.json names it
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    run(VENV / "bin" / "jupyter", "lite", "build", "--output-dir", partial, env=env, cwd=stage)
    modules = check_lock(partial, stage / "files")
    prepared = prepare_wheels(partial)
    check_settings(partial)
    rewritten = own_copy_of_cdn_defaults(partial, version)
    line_files_as_text(partial)
    snapshot = kernel_snapshot(partial)
    kernel_head_start(partial)
    landing_page(partial, stage / "files", left_out, said)
    foreign = foreign_hosts(partial)
    if foreign:
        lines = [
            f"{host}: {', '.join(sorted(paths)[:3])}" for host, paths in sorted(foreign.items())
        ]
        sys.exit(
            "[site] the site names hosts site.json does not vouch for:\n  " + "\n  ".join(lines)
        )
    size = size_on_disk(partial)
    if size > CONFIG["max_megabytes"] * 2**20:
        sys.exit(
            f"[site] {size / 2**20:.1f} MB on disk, over the {CONFIG['max_megabytes']} MB budget"
        )
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)
    log(f"Pyodide {version}; {len(modules)} importable modules locked; own copy in {rewritten}")
    compiled = sum(wheel["compiled"] for wheel in prepared)
    before, after = (sum(wheel["files"][i] for wheel in prepared) for i in (0, 1))
    log(f"wheels: {before} → {after} files, bytecode for {compiled} modules")
    log(f"notebooks left out: {left_out or 'none'}")
    log(
        f"kernel snapshot: {snapshot['bytes'] / 2**20:.1f} MB of memory, "
        f"{snapshot['gzipped'] / 2**20:.1f} MB gzipped; Python holds {snapshot['held']}"
    )
    log(
        f"{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: {size / 2**20:.1f} MB on disk"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "_site")
    parser.add_argument("--force", action="store_true", help="rebuild even if inputs are unchanged")
    args = parser.parse_args()
    out: Path = args.out.resolve()
    digest = inputs_digest()
    stamp = CACHE / STAMP
    if (
        not args.force
        and out.is_dir()
        and stamp.exists()
        and stamp.read_text() == f"{digest} {out}"
    ):
        log(f"{out.name}/ is up to date (inputs {digest[:12]})")
        return
    started = time.monotonic()
    build(out)
    CACHE.mkdir(exist_ok=True)
    stamp.write_text(f"{digest} {out}")
    log(f"built in {time.monotonic() - started:.1f} s (inputs {digest[:12]})")


if __name__ == "__main__":
    main()
