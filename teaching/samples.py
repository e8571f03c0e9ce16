"""A realistic session shared by the notebooks, the explorers and the tests.

Several turns, a one-tool and two two-tool units (one result an error), a tool result whose
assistant is gone (an orphan), Chinese text beside the English of files and tool output — every shape `context_units` and
`trim_context` treat differently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from mini_agent.json_form import JSON
from mini_agent.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    record_line,
)
from mini_agent.tools import as_object


def sample_session() -> list[Message]:
    """Fifteen messages in ten units (oldest first): see `context_units(sample_session())`."""
    return [
        UserMessage("帮我看看 README.md 里写了什么"),
        AssistantMessage("我先读一下这个文件。", (ToolCall("r1", "read", {"path": "README.md"}),)),
        ToolMessage("r1", "# mini-agent\nA tiny coding agent. 一个很小的编程 Agent。"),
        AssistantMessage("README 介绍了项目：一个很小的编程 Agent。"),
        UserMessage("请对比一下 setup.cfg 和 pyproject.toml。"),
        AssistantMessage(
            "两个文件都读一下。",
            (
                ToolCall("c1", "read", {"path": "setup.cfg"}),
                ToolCall("c2", "read", {"path": "pyproject.toml"}),
            ),
        ),
        ToolMessage("c1", "[metadata]\nname = mini-agent"),
        ToolMessage("c2", "FileNotFoundError: pyproject.toml", is_error=True),
        AssistantMessage("setup.cfg 存在；pyproject.toml 不存在，所以没有可比的内容。"),
        ToolMessage("lost-1", "上次运行中断时留下的结果：tests passed"),  # no assistant declares it
        UserMessage("运行测试，再找找还有哪些 TODO。"),
        AssistantMessage(
            "我来跑一遍测试，再搜一下 TODO。",
            (
                ToolCall("t1", "run_tests", {"args": ["-q"]}),
                ToolCall("t2", "grep", {"pattern": "TODO"}),
            ),
        ),
        ToolMessage("t1", "3 passed, 0 failed"),
        ToolMessage("t2", "src/agent.py:12: # TODO 支持并发写入"),
        AssistantMessage("测试全部通过；还剩一个 TODO：支持并发写入。"),
    ]


def chapter_picture() -> list[Message]:
    """The history the chapter draws: `[user] [assistant{calls:a,b}] [tool a] [tool b]`.

    Notebook 04 walks the unit scan over it, and the browser test presses its stepper.
    """
    return [
        UserMessage("读一下 a.txt 和 b.txt"),
        AssistantMessage(
            "两个文件都读一下",
            (
                ToolCall("a", "read_file", {"path": "a.txt"}),
                ToolCall("b", "read_file", {"path": "b.txt"}),
            ),
        ),
        ToolMessage("a", "a.txt 的内容"),
        ToolMessage("b", "b.txt 的内容"),
    ]


def sample_session_text() -> str:
    """The sample session as a session file holds it: one JSON line per message."""
    return "".join(record_line(message) + "\n" for message in sample_session())


def file_reader(files: Mapping[str, str]) -> Callable[[JSON], str]:
    """A read tool's `run` over a fake file table (the demos' tools): `{"path": name}` gives
    `files[name]`; an unknown name raises `FileNotFoundError`, as reading a real file would."""

    def read_file(tool_input: JSON) -> str:
        arguments = as_object(tool_input)  # 模型给的输入是不可信的 JSON：先收窄成对象
        path = arguments.get("path") if arguments is not None else None
        if not isinstance(path, str):  # 再断言字段
            raise ValueError("read needs {path: string}")
        if path not in files:
            raise FileNotFoundError(f"no such file: {path}")
        return files[path]

    # shown by name in 06's source header: `read_file`, not `file_reader.<locals>.read`
    read_file.__qualname__ = read_file.__name__
    return read_file
