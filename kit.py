"""The kit's commands, the same in Windows cmd/PowerShell, macOS and Linux (standard library only).

    python kit.py lab             open JupyterLab on notebooks/ (the first run creates .venv/)
    python kit.py test            every check this machine can run, then what it skipped and why
    python kit.py test --quick    lint, types, unit/property/CLI tests, node differential
    python kit.py test --strict   the full tier; a part or a test that would be skipped fails
    python kit.py test --only notebooks,node    just those parts (names: see --dry-run)
    python kit.py system          install the system packages the full tier needs (Debian, root)
    python kit.py site            build the browser edition into _site/
    python kit.py bench           the benchmarks (bench/README.md)
    python kit.py soak            the long fault soak (docs/DURABILITY.md)

On Windows, `py kit.py ...` does the same. Why a script: the one thing every reader already has
is Python (>= 3.10); `make` is missing on Windows, and `uv`/`nox` would be one more thing to
install before the first command works. This file needs nothing but the standard library.

Two environments, so that reading costs only what reading needs:
    .venv/      the kit + JupyterLab, ipywidgets, RISE (extra `notebooks`) and httpx (`live`);
                `python kit.py lab --bench` adds notebook 08's matplotlib, tiktoken, LangChain
    .venv-dev/  everything: the notebooks' packages plus tests, linters and benchmarks
Each is created when missing and brought up to date when pyproject.toml changes. pip reads
PIP_INDEX_URL, so a PyPI mirror is one environment variable away.

CI=true (any value but "", "0", "false") makes `test` fail when a part it selected cannot run;
--strict also fails on any single skipped test (a notebook cell tagged nbval-skip excepted,
skipped by design; no notebook has one now). `.ci/run` runs `system`, then `test --strict`.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
READER_ENV = ROOT / ".venv"
DEV_ENV = ROOT / ".venv-dev"
READER_EXTRAS = ("notebooks", "live")
BENCH_EXTRAS = ("bench",)
DEV_EXTRAS = ("notebooks", "live", "test", "bench")
STAMP = "kit-installed.txt"  # in an environment: what it was installed from

# The core checks also run in real Pyodide under node: the npm package at the version
# jupyterlite-pyodide-kernel pins (the browser edition's Python), in a git-ignored cache.
PYODIDE_VERSION = "314.0.6"
PYODIDE_CACHE = ROOT / ".cache" / "pyodide"
PYODIDE = PYODIDE_CACHE / "node_modules" / "pyodide"

# What the full tier needs from the system; `python kit.py system` installs it on Debian.
CHROMIUM = Path("/usr/bin/chromium")  # the browser tests drive Debian's Chromium, never a download
CJK_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")  # Chinese text in screenshots
GBK_LOCALE = "zh_CN.GBK"  # the locale of a Chinese Windows machine, as glibc spells it
DEBIAN_PACKAGES = ("chromium", "fonts-wqy-microhei", "locales", "nodejs", "npm")
SYSTEM = "python3 kit.py system  (as root, on Debian)"

NBVAL = ("--nbval", "--nbval-current-env", "--nbval-sanitize-with", "notebooks/sanitize.cfg")


def say(message: str) -> None:
    print(f"kit: {message}", flush=True)


# --- what this machine has ------------------------------------------------------------


def _has_gbk_locale() -> bool:
    if not shutil.which("locale"):
        return False
    found = subprocess.run(["locale", "-a"], capture_output=True, text=True, errors="replace")
    names = {line.strip().lower().replace("-", "") for line in found.stdout.splitlines()}
    return GBK_LOCALE.lower().replace("-", "") in names


def _site_python() -> str | None:
    """The Python >= 3.12 the site build would use: site/build.py's own search (one rule)."""
    spec = importlib.util.spec_from_file_location("site_build", ROOT / "site" / "build.py")
    if spec is None or spec.loader is None:
        return None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    try:
        return str(build.find_build_python())
    except SystemExit:  # it says "none was found" by exiting
        return None


def _needs_node() -> str | None:
    return None if shutil.which("node") else "needs node (Node.js) on PATH"


def _needs_npm() -> str | None:
    if not shutil.which("node") or not shutil.which("npm"):
        return "needs node and npm on PATH (npm fetches Pyodide from the npm registry)"
    return None


def _needs_chromium() -> str | None:
    if not sys.platform.startswith("linux"):
        return "needs Linux: the browser tests drive Debian's Chromium"
    if not CHROMIUM.exists() or not CJK_FONT.exists():
        return f"needs Chromium at {CHROMIUM} and a CJK font ({CJK_FONT.name})"
    return None


def _needs_site() -> str | None:
    why = _needs_chromium() or _needs_npm()
    if why is None and _site_python() is None:
        why = "needs Python 3.12 or 3.13 for the build (python3.12/3.13 on PATH, or SITE_PYTHON)"
    return why


def _needs_linux() -> str | None:
    if not sys.platform.startswith("linux"):
        return "needs Linux (a tmpfs, mount --bind, /proc, a drop to an unprivileged user)"
    return None


def _needs_gbk() -> str | None:
    if not sys.platform.startswith("linux"):
        return "needs Linux with glibc locales (a real GBK locale)"
    return None if _has_gbk_locale() else f"needs the {GBK_LOCALE} locale (Debian: locales)"


# --- the parts of the test command ---------------------------------------------------------


@dataclass(frozen=True)
class Part:
    name: str
    tier: str  # "quick": every change, no root, no browser; "full": adds the rest
    what: str
    tests: tuple[str, ...]  # pytest paths ("tests" = every test file no other part names)
    needs: Callable[[], str | None]  # why this machine cannot run it, or None
    enable: str  # the one command that makes `needs` answer None


PARTS = (
    Part("lint", "quick", "ruff check, ruff format --check", (), lambda: None, ""),
    Part("types", "quick", "mypy --strict", (), lambda: None, ""),
    Part("unit", "quick", "unit, property, CLI and project tests", ("tests",),
         lambda: None, ""),
    Part("node", "quick", "the on-disk format against the chapter's JavaScript in node",
         ("tests/test_node_differential.py",), _needs_node, SYSTEM),
    Part("faults", "full", "real faults: full disks, SIGKILL, an unprivileged user (root: all)",
         ("tests/test_faults.py", "tests/test_repair.py"), _needs_linux,
         "python3 kit.py test --only faults, on Linux (as root, as CI runs it)"),
    Part("notebooks", "full", "every notebook re-run under strict nbval, and each cell twice",
         ("notebooks", "tests/test_notebooks_twice.py"), lambda: None, ""),
    Part("reader", "full", "the notebooks under strict nbval in the environments kit.py lab builds",
         ("tests/test_reader_env.py",), lambda: None, ""),
    Part("gbk", "full", "the CLI, a session and a notebook under a real zh_CN.GBK locale",
         ("tests/test_gbk_locale.py",), _needs_gbk, SYSTEM),
    Part("pyodide", "full", "the core checks inside real Pyodide, run by node",
         ("tests/test_pyodide.py",), _needs_npm, SYSTEM),
    Part("browser", "full", "the explorers, 95's route and slides in JupyterLab in Chromium",
         ("tests/test_browser.py", "tests/test_classroom.py", "tests/test_cheatsheet.py"),
         _needs_chromium, SYSTEM),
    Part("site", "full", "the browser edition built, every notebook run in it offline",
         ("tests/test_site.py",), _needs_site,
         f"{SYSTEM}, and Python 3.12 or 3.13 (on PATH, in pyenv, or SITE_PYTHON=...)"),
)  # fmt: skip
BY_NAME = {part.name: part for part in PARTS}
QUICK = tuple(part.name for part in PARTS if part.tier == "quick")


@dataclass(frozen=True)
class Plan:
    run: tuple[Part, ...]
    skipped: tuple[tuple[Part, str], ...]  # (part, why)


def plan(selected: Sequence[str], needs: Callable[[Part], str | None]) -> Plan:
    """Split the selected parts into what runs here and what cannot, with the reason."""
    run: list[Part] = []
    skipped: list[tuple[Part, str]] = []
    for part in PARTS:
        if part.name in selected:
            why = needs(part)
            if why is None:
                run.append(part)
            else:
                skipped.append((part, why))
    return Plan(tuple(run), tuple(skipped))


def pytest_arguments(parts: Sequence[Part], strict: bool) -> list[str]:
    """One pytest run for every selected test part, so pytest prints one summary line."""
    chosen = {path for part in parts for path in part.tests}
    if not chosen:
        return []
    paths: list[str] = [path for path in ("tests", "notebooks") if path in chosen]
    if "tests" not in paths:  # only some test files: name them
        paths += sorted(path for path in chosen if path.startswith("tests/"))
    else:  # every test file but those of parts not running
        owned = {path for part in PARTS for path in part.tests if path.startswith("tests/")}
        paths += [f"--ignore={path}" for path in sorted(owned - chosen)]
    arguments = ["-X", "warn_default_encoding", "-m", "pytest", *paths]
    if "notebooks" in chosen:
        arguments += NBVAL
    if strict:
        arguments += ["-p", "tests.strict_skips", "--fail-on-skip"]
    return arguments


# Parts that mostly wait — on a browser, its workers and servers, or (reader) on pip building
# the reader's environments — each run in a pytest of their own beside the rest, so the full
# tier's wall time is about the longest of the runs, not their sum.
SIDE_BY_SIDE = ("reader", "browser", "site")


def pytest_runs(parts: Sequence[Part], strict: bool) -> list[tuple[str, list[str]]]:
    """(name, pytest_arguments) for each run: one, or the rest first and then each waiting
    part selected, to run side by side, when more than one of them is selected."""
    beside = [[part] for part in parts if part.name in SIDE_BY_SIDE]
    rest = [part for part in parts if part.name not in SIDE_BY_SIDE and part.tests]
    groups = [rest, *beside] if len(beside) + bool(rest) > 1 else [list(parts)]
    named = [(",".join(part.name for part in group), group) for group in groups]
    return [(name, arguments) for name, group in named
            if (arguments := pytest_arguments(group, strict))]  # fmt: skip


def ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


# --- environments -------------------------------------------------------------------------


def env_python(env: Path) -> Path:
    return env / "Scripts" / "python.exe" if os.name == "nt" else env / "bin" / "python"


def ensure_env(env: Path, extras: Sequence[str]) -> Path:
    """The environment's Python, created and brought up to date with pyproject.toml first."""
    python = env_python(env)
    project = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    wanted = f"{project} {','.join(extras)}\n"
    stamp = env / STAMP
    if python.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted:
        return python
    if not python.exists():
        say(f"creating {env.name}/ with Python {sys.version.split()[0]} ({sys.executable})")
        made = subprocess.run([sys.executable, "-m", "venv", str(env)], check=False)
        if made.returncode != 0:
            sys.exit(
                "kit: could not create a virtual environment; on Debian/Ubuntu install "
                "python3-venv (apt-get install python3-venv) and run the command again"
            )
    say(f"installing the kit with [{','.join(extras)}] into {env.name}/ (PIP_INDEX_URL: a mirror)")
    spec = f".[{','.join(extras)}]"
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-e", spec]
    if subprocess.run(pip, cwd=ROOT, check=False).returncode != 0:
        sys.exit(f"kit: pip could not install {spec} into {env.name}/ (see above)")
    stamp.write_text(wanted, encoding="utf-8")
    return python


def ensure_pyodide() -> None:
    """npm's pyodide package at the pinned version in .cache/ (what test_pyodide loads)."""
    marker = PYODIDE / f".installed-{PYODIDE_VERSION}"
    if marker.exists():
        return
    say(f"fetching pyodide@{PYODIDE_VERSION} from the npm registry into {PYODIDE_CACHE}")
    npm = shutil.which("npm") or "npm"
    command = [npm, "install", "--prefix", str(PYODIDE_CACHE), "--no-save", "--no-audit"]
    command += ["--no-fund", "--loglevel=error", f"pyodide@{PYODIDE_VERSION}"]
    if subprocess.run(command, check=False).returncode != 0:
        sys.exit("kit: npm could not install pyodide (see above)")
    marker.write_text(PYODIDE_VERSION, encoding="utf-8")


# --- commands -------------------------------------------------------------------------------


def lab_options() -> list[str]:
    """The kit's JupyterLab settings: `jupyter/overrides.json` opens `.jsonl` in the text editor,
    so a damaged line is met through the chapter's loader, never the JSON viewer's dialog."""
    return [f"--LabApp.app_settings_dir={ROOT / 'jupyter'}"]


def lab_extras(bench: bool) -> tuple[str, ...]:
    """What `lab` installs (with `--bench`: notebook 08's too); the reader part tests these."""
    return READER_EXTRAS + (BENCH_EXTRAS if bench else ())


def lab(args: argparse.Namespace) -> int:
    python = ensure_env(READER_ENV, lab_extras(args.bench))
    command = [
        str(python),
        "-m",
        "jupyterlab",
        "--notebook-dir=notebooks",
        *lab_options(),
        *args.rest,
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    say("opening JupyterLab on notebooks/ (Ctrl-C stops it)")
    try:
        return subprocess.run(command, cwd=ROOT, check=False).returncode
    except KeyboardInterrupt:
        return 0


def test(args: argparse.Namespace) -> int:
    strict = args.strict
    if args.only:
        selected = [name.strip() for item in args.only for name in item.split(",") if name]
        unknown = sorted(set(selected) - set(BY_NAME))
        if unknown:
            sys.exit(f"kit: no such part: {', '.join(unknown)} (parts: {', '.join(BY_NAME)})")
    else:
        selected = list(QUICK if args.quick else BY_NAME)
    the_plan = plan(selected, lambda part: part.needs())
    must_run = strict or ci() or bool(args.only)
    if the_plan.skipped and must_run:
        report_skipped(the_plan.skipped)
        say("failed: every selected part must run here (--strict, --only or CI is set)")
        return 1
    if args.dry_run:
        for part in the_plan.run:
            say(f"would run {part.name}: {part.what}")
        for _, arguments in pytest_runs(the_plan.run, strict):
            say(f"would run: python {' '.join(arguments)}")
        report_skipped(the_plan.skipped)
        return 0
    python = str(ensure_env(DEV_ENV, DEV_EXTRAS))
    began = time.monotonic()  # the tiers' time, without creating the environment
    names = {part.name for part in the_plan.run}
    if "pyodide" in names:
        ensure_pyodide()
    failed: list[str] = []
    timings: list[str] = []
    mypy = None
    beside: list[tuple[str, subprocess.Popen[bytes], Path]] = []  # pytests run side by side
    if "types" in names:  # mypy runs beside pytest: two cores, half the wait
        log = (DEV_ENV / "mypy.log").open("w", encoding="utf-8")
        mypy = subprocess.Popen([python, "-m", "mypy"], cwd=ROOT, stdout=log, stderr=log)
        mypy_started = time.monotonic()
    try:
        if "lint" in names:
            started = time.monotonic()
            for command in (["ruff", "check", "."], ["ruff", "format", "--check", "."]):
                say(" ".join(command))
                if subprocess.run([python, "-m", *command], cwd=ROOT, check=False).returncode:
                    failed.append(" ".join(command))
            timings.append(f"lint {time.monotonic() - started:.0f} s")
        runs = [(name, [*arguments, *args.rest]) for name, arguments in
                pytest_runs(the_plan.run, strict)]  # fmt: skip
        if runs:  # args.rest: e.g. `python kit.py test --quick -k session -x`
            started = time.monotonic()
            for name, arguments in runs[1:]:  # their output is kept, and shown when all are done
                log_path = DEV_ENV / f"beside-{name}.log"
                say(
                    f"beside it: python {' '.join(arguments)} (output: {DEV_ENV.name}/{log_path.name})"
                )
                with log_path.open("w", encoding="utf-8") as output:
                    process = subprocess.Popen(
                        [python, *arguments], cwd=ROOT, stdout=output, stderr=subprocess.STDOUT
                    )
                beside.append((name, process, log_path))
            say(f"python {' '.join(runs[0][1])}")
            if subprocess.run([python, *runs[0][1]], cwd=ROOT, check=False).returncode:
                failed.append(f"pytest ({runs[0][0]})" if beside else "pytest")
            for name, process, log_path in beside:
                code = process.wait()
                say(f"beside it, {name}: {time.monotonic() - started:.0f} s")
                print(log_path.read_text(encoding="utf-8"), end="", flush=True)
                if code:
                    failed.append(f"pytest ({name})")
            timings.append(f"pytest {time.monotonic() - started:.0f} s")
        if mypy is not None:
            code = mypy.wait()
            log.close()
            say("mypy")
            print((DEV_ENV / "mypy.log").read_text(encoding="utf-8"), end="", flush=True)
            if code:
                failed.append("mypy")
            timings.append(f"types {time.monotonic() - mypy_started:.0f} s (beside pytest)")
    finally:
        for left in (mypy, *(running for _, running, _ in beside)):
            if left is not None and left.poll() is None:  # interrupted: stop what we started
                left.kill()
                left.wait()
    timings.append(f"in all {time.monotonic() - began:.0f} s")
    say(f"ran {', '.join(part.name for part in the_plan.run)}: {'; '.join(timings)}")
    report_skipped(the_plan.skipped)
    if failed:
        say(f"FAILED: {', '.join(failed)}")
        return 1
    say("all passed")
    return 0


def report_skipped(skipped: Sequence[tuple[Part, str]]) -> None:
    if not skipped:
        say("nothing skipped")
        return
    say(f"skipped {len(skipped)} part(s) this machine cannot run:")
    for part, why in skipped:
        print(f"  {part.name:<9} {part.what}\n            {why}; enable: {part.enable}", flush=True)


def missing_debian_packages() -> list[str]:
    """The Debian packages behind what the full tier needs and this machine lacks."""
    have = {
        "chromium": CHROMIUM.exists(),
        "fonts-wqy-microhei": CJK_FONT.exists(),
        "locales": shutil.which("locale-gen") is not None,
        "nodejs": shutil.which("node") is not None,
        "npm": shutil.which("npm") is not None,  # a nodesource nodejs brings its own npm
    }
    return [package for package in DEBIAN_PACKAGES if not have[package]]


def system(args: argparse.Namespace) -> int:
    """Debian's Chromium, a CJK font, node/npm and the zh_CN.GBK locale: apt-get, as root."""
    wanted = " ".join(DEBIAN_PACKAGES)
    if not sys.platform.startswith("linux") or not shutil.which("apt-get"):
        say(f"this installs Debian packages ({wanted}) and needs apt-get; on this system the")
        say("full tier's browser and GBK parts cannot run: `python kit.py test` says so and")
        say("runs the rest (install Node.js yourself for the node and Pyodide parts)")
        return 1
    missing = missing_debian_packages()
    gbk = _has_gbk_locale()
    if not missing and gbk:
        say(f"nothing to install: {wanted} and the {GBK_LOCALE} locale are here")
        return 0
    if os.geteuid() != 0:
        say(f"needs root: sudo python3 kit.py system (installs {' '.join(missing) or 'nothing'}")
        say(f"and generates the {GBK_LOCALE} locale)")
        return 1
    if missing:
        say(f"apt-get install {' '.join(missing)}")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (["apt-get", "update"], ["apt-get", "install", "-y", *missing]):
            if subprocess.run(command, env=env, check=False).returncode != 0:
                return 1
    if not gbk:
        say(f"generating the {GBK_LOCALE} locale (/etc/locale.gen, locale-gen)")
        generate_gbk_locale()
        if not _has_gbk_locale():
            say(f"{GBK_LOCALE} is still missing after locale-gen")
            return 1
    say("done")
    return 0


def generate_gbk_locale() -> None:
    """Uncomment (or add) zh_CN.GBK in /etc/locale.gen and run locale-gen, as Debian does."""
    config = Path("/etc/locale.gen")
    lines = config.read_text(encoding="utf-8").splitlines() if config.exists() else []
    entry = f"{GBK_LOCALE} GBK"
    kept = [line for line in lines if line.lstrip("# ").strip() != entry]
    config.write_text("\n".join([*kept, entry]) + "\n", encoding="utf-8")
    subprocess.run(["locale-gen"], check=False)


def site(args: argparse.Namespace) -> int:
    return subprocess.run([sys.executable, str(ROOT / "site" / "build.py"), *args.rest]).returncode


def bench(args: argparse.Namespace) -> int:
    python = ensure_env(DEV_ENV, DEV_EXTRAS)
    return subprocess.run([str(python), "-m", "bench", *args.rest], cwd=ROOT).returncode


def soak(args: argparse.Namespace) -> int:
    python = ensure_env(DEV_ENV, DEV_EXTRAS)
    return subprocess.run([str(python), "-m", "tests.soak", *args.rest], cwd=ROOT).returncode


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python kit.py",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    opened = commands.add_parser("lab", help="open JupyterLab on notebooks/")
    opened.add_argument("--bench", action="store_true", help="also notebook 08's packages")
    opened.set_defaults(run=lab)
    tested = commands.add_parser("test", help="run the checks this machine can run")
    tiers = tested.add_mutually_exclusive_group()
    tiers.add_argument("--quick", action="store_true", help="the quick tier only")
    tiers.add_argument("--only", action="append", metavar="PART[,PART]", help="these parts")
    tested.add_argument(
        "--strict", action="store_true", help="every selected part must run, no test may skip"
    )
    tested.add_argument("--dry-run", action="store_true", help="say what would run, run nothing")
    tested.set_defaults(run=test)
    installed = commands.add_parser("system", help="apt-get what the full tier needs (root)")
    installed.set_defaults(run=system)
    for name, run, text in (
        ("site", site, "build the browser edition into _site/"),
        ("bench", bench, "run the benchmarks"),
        ("soak", soak, "run the long fault soak"),
    ):
        command = commands.add_parser(name, help=text)
        command.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if sys.version_info < (3, 10):  # noqa: UP036 -- this file still runs on older Pythons, to say so
        sys.exit(f"kit: the kit needs Python >= 3.10; this is {sys.version.split()[0]}")
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)  # the rest goes to jupyter lab, pytest, ...
    if rest and args.command == "system":
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
