"""Notebook 06's scenario, re-runnable live: every cell may run again, in any order.

    demo = fresh_demo()                       # a new temporary folder; no file yet
    client = demo.client(FIRST_RUN)           # the file as it is before the first run: none
    demo.budget = 700                         # the reader's budget: the first run and the restart
    result = run_agent(FIRST_RUN.prompt, client=client, tools=demo.tools,
                       session_path=demo.session_path, context_max_chars=demo.budget)
    demo.run_view()                           # RunView of the file and every stage's requests
    again = demo.run(RESTART)                 # the file as the first run left it, then the restart
    demo.reset()                              # 重置演示: a new empty folder

`demo.client(stage)` rebuilds the session file as the earlier stages leave it (by running
them, scripted, with `run_agent`) and returns a fresh `ScriptedClient` holding the stage's
script — so re-running a cell never meets `ScriptExhaustedError` and never appends to an
older run's file. The first run and the restart use the reader's budget, `demo.budget` (the
first-run cell sets it; every later cell reads it), so a changed budget flows through. A budget
too small for a request stops that stage with the chapter's error: `run` returns it shown
(`ShownError`, with its 释义) and `run_view` says where the stage stopped, instead of raising.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mini_agent.agent import AgentResult, run_agent
from mini_agent.context import ContextBudgetError
from mini_agent.model_client import ScriptedClient
from mini_agent.session import AssistantMessage, Message, ToolCall
from mini_agent.tools import Tool

from .errors import ShownError
from .samples import file_reader
from .text import words
from .views import RunView

FILES = {
    "notes.txt": "周三前修好登录页的 bug",
    "todo.txt": "1. 写测试 2. 更新文档",
}


read_file = file_reader(FILES)
"""The scenario's one tool: reads the fake file table; an unknown file raises."""

TOOLS = (Tool("read_file", "读取一个文件的内容", read_file),)


@dataclass(frozen=True)
class Stage:
    """One `run_agent` call of the scenario: the prompt, the model's script, the budget."""

    name: str
    prompt: str
    turns: tuple[AssistantMessage, ...]
    context_max_chars: int | None


FIRST_RUN = Stage(
    "第一次运行",
    "读一下 notes.txt 和 todo.txt，告诉我这周要做什么",
    (
        AssistantMessage(
            "先读两个文件",
            (
                ToolCall("c1", "read_file", {"path": "notes.txt"}),
                ToolCall("c2", "read_file", {"path": "todo.txt"}),
            ),
        ),
        AssistantMessage(
            "再搜一下，顺便看看 plan.txt",
            (
                ToolCall("c3", "search", {"query": "登录"}),
                ToolCall("c4", "read_file", {"path": "plan.txt"}),
            ),
        ),
        AssistantMessage("notes.txt 说周三前修好登录页；todo.txt 列了写测试和更新文档。"),
    ),
    700,
)
RESTART = Stage(
    "重启续上",
    "我们上次读了什么？",
    (AssistantMessage("上次的结论是：周三前修好登录页，然后写测试、更新文档。"),),
    700,
)
TOO_SMALL = Stage(
    "预算过小",
    "这条提问比预算还长：请把 notes.txt、todo.txt 和 plan.txt 都再读一遍",
    (AssistantMessage("不会被用到"),),
    50,
)
STAGES = (FIRST_RUN, RESTART, TOO_SMALL)
READERS = (FIRST_RUN, RESTART)
"""The stages run with the reader's budget, `Demo06.budget` (`TOO_SMALL` keeps its own 50)."""


class StageClients(dict[str, ScriptedClient]):
    """`demo.clients`: each stage's client, by the stage's name. A stage that has not run yet
    runs when a cell asks for it (a cell run before the ones above it, after a restart)."""

    def __init__(self, demo: Demo06) -> None:
        super().__init__()
        self._demo = demo

    def __missing__(self, name: str) -> ScriptedClient:
        stage = next((stage for stage in STAGES if stage.name == name), None)
        if stage is None:
            raise KeyError(name)
        self._demo.run(stage)
        return self[name]


class Demo06:
    """A temporary folder holding `session.jsonl`, and the scenario's stages run on it."""

    tools = TOOLS

    def __init__(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="mini-agent-06-")
        self.clients = StageClients(self)
        self.failures: dict[str, ContextBudgetError] = {}
        self.budget: int | None = FIRST_RUN.context_max_chars
        """The reader's budget for the first run and the restart (06's first-run cell sets it)."""

    def budget_for(self, stage: Stage) -> int | None:
        return self.budget if stage in READERS else stage.context_max_chars

    @property
    def folder(self) -> Path:
        return Path(self._folder.name)

    @property
    def session_path(self) -> Path:
        return self.folder / "session.jsonl"

    def client(self, stage: Stage) -> ScriptedClient:
        """Make the file what the stages before `stage` leave, and return a fresh client
        with `stage`'s script (kept in `clients` for `run_view`)."""
        position = STAGES.index(stage)
        self.session_path.unlink(missing_ok=True)
        for earlier in STAGES[:position]:
            kept = self.clients.get(earlier.name)
            replay = ScriptedClient(earlier.turns)
            self.failures.pop(earlier.name, None)
            try:
                run_agent(
                    earlier.prompt,
                    client=replay,
                    tools=self.tools,
                    session_path=self.session_path,
                    context_max_chars=self.budget_for(earlier),
                )
            except ContextBudgetError as err:  # a stage that fails still leaves its prompt
                self.failures[earlier.name] = err
            if kept is None or kept.requests == []:
                self.clients[earlier.name] = replay
        for later in STAGES[position:]:
            self.clients.pop(later.name, None)
            self.failures.pop(later.name, None)
        client = ScriptedClient(stage.turns)
        self.clients[stage.name] = client
        return client

    def run(
        self, stage: Stage, context_max_chars: int | Literal["stage"] | None = "stage"
    ) -> AgentResult | ShownError:
        """`demo.client(stage)`, then `run_agent` with the stage's prompt and budget (the
        reader's for the first run and the restart, or the `context_max_chars` given). A budget
        too small for a request: the chapter's error, shown, not raised."""
        budget = self.budget_for(stage) if context_max_chars == "stage" else context_max_chars
        try:
            return run_agent(
                stage.prompt,
                client=self.client(stage),
                tools=self.tools,
                session_path=self.session_path,
                context_max_chars=budget,
            )
        except ContextBudgetError as err:
            self.failures[stage.name] = err
            return ShownError(err)

    def request(self, stage: Stage, number: int) -> list[Message]:
        """The `number`th request (from 1) `stage` sent; empty when it stopped before it."""
        requests = self.clients[stage.name].requests
        return list(requests[number - 1]) if number <= len(requests) else []

    def run_view(self) -> RunView:
        """The file as it is now beside every request of the stages run so far; under the
        summary, where a stage stopped on a budget too small, with the error and its 释义."""
        ran = [s for s in STAGES if s.name in self.clients]
        notes: list[str] = []
        for stage in ran:
            if (failure := self.failures.get(stage.name)) is not None:
                sent = len(self.clients[stage.name].requests)
                notes.append(words().stage_stopped(stage.name, sent, self.budget_for(stage)))
                notes += repr(ShownError(failure)).splitlines()
        return RunView.of(self.session_path, *(self.clients[s.name] for s in ran), notes=notes)

    def reset(self) -> Demo06:
        """重置演示: drop the folder and its file, start again in a new empty one (the
        reader's budget stays)."""
        self._folder.cleanup()
        self._folder = tempfile.TemporaryDirectory(prefix="mini-agent-06-")
        self.clients = StageClients(self)
        self.failures = {}
        return self

    def close(self) -> None:
        self._folder.cleanup()

    def __repr__(self) -> str:
        lines = 0
        if self.session_path.exists():
            lines = self.session_path.read_text(encoding="utf-8").count("\n")
        return words().demo_state(lines, [s.name for s in STAGES if s.name in self.clients])


def fresh_demo() -> Demo06:
    """A new demo in a new temporary folder: a whole-notebook re-run starts from nothing."""
    return Demo06()
