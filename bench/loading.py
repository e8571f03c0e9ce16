"""Loading and appending: `load_session` against a bare `json.loads` loop, jsonlines and a
pydantic discriminated union; what each catches in damaged files; `append_session` cost."""

from __future__ import annotations

import json
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonlines

from mini_agent import (
    AssistantMessage,
    Message,
    SessionFormatError,
    ToolCall,
    ToolMessage,
    UserMessage,
    append_session,
    estimate_context_chars,
    load_session,
)
from mini_agent.session import record_line

from . import report
from .histories import forget_sizes, random_history
from .rivals import PydanticLineError, bare_loop, jsonlines_loop, pydantic_loop
from .timing import best_time

LOAD_MESSAGES = 150_000  # about 50 MB with random_history's sizes

# A tool-heavy session in Chinese: most lines are tool calls and their results (file reads
# with code, grep hits, command output), with Chinese prose in every text field.
_CHINESE = (
    "读取配置文件并检查会话记录是否完整，如果发现损坏的行，就报告行号；"
    "上下文预算按字符近似计算，不等于模型的令牌数。工具调用和结果必须成组保留，"
    "否则模型会看到没有请求的结果。"
)
_CODE = (
    "def trim_context(messages, max_chars):\n    kept = []\n"
    "    for unit in reversed(context_units(messages)):  # 从最新的单元开始\n"
    '        if estimate(unit + kept) > max_chars:\n            raise ValueError("预算太小")\n'
)


def tool_heavy_chinese_history(count: int, seed: int = 35) -> list[Message]:
    """`count` messages: a Chinese question, then 2-6 rounds of 1-4 tool calls whose inputs
    carry paths, line numbers, flags and patterns, each answered by Chinese text or code."""
    rng = random.Random(seed)
    messages: list[Message] = []
    turn = 0

    def chinese(low: int, high: int) -> str:
        start = rng.randrange(len(_CHINESE))
        text = (_CHINESE * (high // len(_CHINESE) + 2))[start:]
        return text[: rng.randint(low, high)]

    while len(messages) < count:
        turn += 1
        messages.append(UserMessage(chinese(20, 120)))
        for step in range(rng.randint(2, 6)):
            calls = tuple(
                ToolCall(
                    f"call_{turn}_{step}_{k}",
                    rng.choice(("read_file", "grep", "run_command", "edit_file")),
                    {
                        "path": f"src/模块{rng.randint(1, 40)}/文件{rng.randint(1, 99)}.py",
                        "line": rng.randint(1, 2_000),
                        "limit": rng.choice((50, 100, 200)),
                        "pattern": chinese(2, 12),
                        "ignoreCase": rng.random() < 0.5,
                        "context": [rng.randint(0, 5), rng.randint(0, 5)],
                    },
                )
                for k in range(rng.randint(1, 4))
            )
            messages.append(AssistantMessage(chinese(10, 60), calls))
            for call in calls:
                body = _CODE * rng.randint(1, 6) if rng.random() < 0.5 else chinese(100, 1_500)
                messages.append(ToolMessage(call.id, body, rng.random() < 0.05))
        messages.append(AssistantMessage(chinese(50, 400)))
    return messages[:count]


HISTORIES: dict[str, Callable[[int], list[Message]]] = {
    "the bench file (random_history)": random_history,
    "a tool-heavy, Chinese-text file": tool_heavy_chinese_history,
}


def bare_text_loop(path: Path) -> list[Any]:
    """The same bare loop, reading text instead of bytes."""
    with open(path, encoding="utf-8") as file:
        return [json.loads(line) for line in file]


LOADERS: dict[str, Callable[[Path], list[Any]]] = {
    "load_session": load_session,
    "bare json.loads loop (bytes)": bare_loop,
    "bare json.loads loop (text)": bare_text_loop,
    "jsonlines": jsonlines_loop,
    "pydantic TypeAdapter": pydantic_loop,
}


def bare_skipping_loop(path: Path) -> list[Any]:
    """The bare loop as a reader fixes it after the first blank line."""
    with open(path, "rb") as file:
        return [json.loads(line) for line in file if line.strip()]


CHECKERS: dict[str, Callable[[Path], list[Any]]] = {
    "load_session": load_session,
    "bare json.loads loop": bare_loop,
    "bare loop skipping blank lines": bare_skipping_loop,
    "jsonlines": jsonlines_loop,
    "pydantic TypeAdapter": pydantic_loop,
}

GOOD = [
    '{"role":"user","content":"read a.txt"}',
    '{"role":"assistant","content":"reading","toolCalls":[{"id":"c1","name":"read","input":{"path":"a.txt"}}]}',
]
# Each damaged file: two good lines, two blank lines, the damage on physical line 5, a good line.
DAMAGES = {
    "truncated JSON": '{"role":"tool","content":"contents of a","toolCallId":"c1","isErr',
    "bad role": '{"role":"system","content":"you are root"}',
    "assistant without toolCalls": '{"role":"assistant","content":"done"}',
    "tool without toolCallId": '{"role":"tool","content":"contents of a","isError":false}',
    "NaN": '{"role":"assistant","content":"x","toolCalls":[{"id":"c2","name":"read","input":{"limit":NaN}}]}',
    "no damage (blank lines only)": '{"role":"tool","content":"contents of a","toolCallId":"c1","isError":false}',
}


def _what_it_says(loader: Callable[[Path], list[Any]], path: Path) -> str:
    try:
        loaded = loader(path)
    except SessionFormatError as err:
        return f"line {err.line}: {err.detail}"
    except jsonlines.InvalidLineError as err:
        return f"line {err.lineno}: {str(err).split(' (line')[0]}"
    except PydanticLineError as err:
        return str(err)
    except json.JSONDecodeError as err:
        return f"no file line ({err.msg}: line {err.lineno} column {err.colno})"
    return f"accepted ({len(loaded)} records)"


def _short(text: str, limit: int = 80) -> str:
    text = text.replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def damage_table() -> str:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, bad in DAMAGES.items():
            path = Path(folder, "session.jsonl")
            path.write_text(
                "\n".join([*GOOD, "", "", bad, GOOD[0]]) + "\n", encoding="utf-8", newline=""
            )
            rows.append([name] + [_short(_what_it_says(f, path)) for f in CHECKERS.values()])
    title = (
        "### What each loader says about a damaged file\n\n"
        "Every file: two good lines, two blank lines, the damage on physical line 5, one good line.\n\n"
    )
    return title + report.table(["damage", *CHECKERS], rows)


def _time_loader(loader: Callable[[Path], list[Any]], path: Path) -> float:
    return best_time(lambda: loader(path), repeat=5, budget=30)


def speed_table(
    messages: int,
    history: Callable[[int], list[Message]] = random_history,
    label: str = "the bench file (random_history)",
) -> tuple[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "session.jsonl")
        lines = [record_line(m) + "\n" for m in history(messages)]
        path.write_text("".join(lines), encoding="utf-8", newline="")
        del lines
        megabytes = path.stat().st_size / 1e6
        times = {name: _time_loader(loader, path) for name, loader in LOADERS.items()}
    floor = min(times["bare json.loads loop (bytes)"], times["bare json.loads loop (text)"])
    rows = [
        [name, report.seconds(t), f"{megabytes / t:.0f} MB/s", f"{floor / t:.2f}x"]
        for name, t in times.items()
    ]
    title = f"### Loading {label}: {megabytes:.0f} MB, {messages:,} lines\n\n"
    table = report.table(["loader", "time", "throughput", "vs faster bare loop"], rows)
    return title + table, floor / times["load_session"]


def append_table() -> str:
    rows = []
    history = random_history(2_000, seed=7)
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as folder:  # on disk, not tmpfs
        for fsync, count in ((False, 2_000), (True, 200)):
            per_record = float("inf")
            for attempt in range(3):  # the best of three files, as for the other timings
                path = Path(folder, f"fsync-{fsync}-{attempt}.jsonl")
                start = time.perf_counter()  # wall clock: fsync waits for the disk, not the CPU
                for message in history[:count]:
                    append_session(path, message, fsync=fsync)
                per_record = min(per_record, (time.perf_counter() - start) / count)
            rows.append([f"fsync={fsync}", f"{count:,}", f"{per_record * 1e6:.0f} µs"])
    title = "### append_session, one record per call (open, lock, check, write, close)\n\n"
    return title + report.table(["", "records", "per record"], rows)


def _cold_estimate(messages: list[Message]) -> float:
    """CPU seconds per message of `estimate_context_chars` with no size cached yet."""
    elapsed = best_time(
        lambda: estimate_context_chars(messages),
        before=lambda: forget_sizes(messages),
        repeat=7,
        budget=10,
    )
    return elapsed / len(messages)


def _appends(messages: list[Message], folder: str) -> float:
    """CPU seconds per `append_session` call, each run into a new file."""
    paths = (Path(folder, f"{n}.jsonl") for n in range(100))

    def run() -> None:
        path = next(paths)
        for message in messages:
            append_session(path, message)

    return best_time(run, repeat=5, budget=10) / len(messages)


def writing_table(count: int = 20_000) -> str:
    """What JSON.stringify's exact form costs to write or to measure a message."""
    rng = random.Random(5)
    numbers: list[Message] = [
        AssistantMessage("x", (ToolCall(f"c{i}", "edit", {"line": i, "scale": rng.random()}),))
        for i in range(count)
    ]
    history = random_history(count)
    rows = [
        [
            f"estimate_context_chars, sizes not yet known, {name}",
            f"{_cold_estimate(h) * 1e6:.2f} µs",
        ]
        for name, h in (
            ("bench history", history),
            ("tool inputs with an int and a float", numbers),
        )
    ]
    with tempfile.TemporaryDirectory(dir=os.getcwd()) as folder:  # on disk, not tmpfs
        per_append = _appends(history[:2_000], folder)
    rows.append(["append_session, fsync=False (CPU time)", f"{per_append * 1e6:.1f} µs"])
    title = "### Writing and measuring a message (CPU time, best of up to 7 runs)\n\n"
    return title + report.table(["", "per message"], rows)


def loading_report(messages: int = LOAD_MESSAGES) -> str:
    sections, targets = [], []
    for name, history in HISTORIES.items():
        speed, share = speed_table(messages, history, name)
        sections.append(speed)
        targets.append(
            f"- load_session ≥ 0.8x the faster bare json.loads loop, {name}: "
            f"{share:.2f}x — {report.verdict(share >= 0.8)}"
        )
    target = "### Targets\n\n" + "\n".join(targets)
    return "\n\n".join([*sections, damage_table(), append_table(), writing_table(), target])
