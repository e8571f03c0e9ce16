"""Package v3's figures, each like for like: `python -m bench.v3` (`--quick`: small sizes).

- loading: `load_session` against a bare `json.loads` loop over the same file, both with the
  cycle collector paused (`load_session` pauses it for its parse; the bare loop runs inside
  `cycle_collector_paused`), and both with it running (`load_session` without its pause);
- appending: `append_session` against a bare open-append-close of `json.dumps`, one record per
  call;
- trimming: `trim_context` against LangChain's `trim_messages` (100k messages, a 20k budget),
  the same trim on 20k and 200k messages, and the worst case of the chapter's inner search
  (every message an orphan tool result).

Times are CPU seconds of this process (`time.process_time`), the best of a few runs; trims
start cold (no size known: a v2 checkout's cached lines are dropped before each run). Only the
public API is used, so the same file measures an older checkout (PYTHONPATH=that checkout).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from mini_agent import Message, ToolMessage, append_session, load_session, to_record, trim_context
from mini_agent.collector import cycle_collector_paused
from mini_agent.durable import read_session_file
from mini_agent.messages import record_line
from mini_agent.session import parse_session_bytes

from .histories import random_history
from .loading import tool_heavy_chinese_history
from .rivals import langchain_trim, to_langchain
from .timing import best_time


def _load_without_pause(path: Path) -> list[Message]:
    """`load_session` without its collector pause (in v2 as in v3 the pause is around this)."""
    return parse_session_bytes(read_session_file(path), path)


def bare_text_loop(path: Path) -> list[Any]:
    """The floor: read, split on "\\n", skip blank lines, `json.loads` each; nothing checked."""
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line]


def bare_bytes_loop(path: Path) -> list[Any]:
    """The same floor, iterating the file's lines as bytes."""
    with open(path, "rb") as file:
        return [json.loads(line) for line in file if line.strip()]


def _best(
    run: Callable[[], object], repeat: int = 5, cold: Sequence[Message] | None = None
) -> float:
    """The best of a few runs; with `cold`, each run starts with no size known (v2 cached each
    message's line in `__dict__`; since v3 there is nothing to drop)."""
    before = None if cold is None else partial(_drop_cached_lines, cold)
    return best_time(run, before=before, repeat=repeat, budget=6.0)


def _drop_cached_lines(messages: Sequence[Message]) -> None:
    for message in messages:
        message.__dict__.pop("line", None)


def loading(count: int) -> list[str]:
    rows = ["| file | collector | load_session | bare loop (faster of text, bytes) | ratio |"]
    rows.append("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name, history in (
            ("random_history", random_history(count)),
            ("tool-heavy Chinese", tool_heavy_chinese_history(count)),
        ):
            path = Path(folder, "s.jsonl")
            path.write_text("".join(record_line(m) + "\n" for m in history), encoding="utf-8")
            del history
            size = path.stat().st_size / 1e6
            for setting in ("running", "paused"):
                pause = (
                    cycle_collector_paused() if setting == "paused" else contextlib.nullcontext()
                )
                load = load_session if setting == "paused" else _load_without_pause
                with pause:
                    ours = _best(partial(load, path), 3)
                    bare = min(_best(partial(bare_text_loop, path), 3),
                               _best(partial(bare_bytes_loop, path), 3))  # fmt: skip
                rows.append(
                    f"| {name}, {count:,} lines, {size:.0f} MB | {setting} | {ours * 1e3:.0f} ms "
                    f"| {bare * 1e3:.0f} ms | {bare / ours:.2f}x |"
                )
    return rows


def appending(count: int) -> list[str]:
    messages = random_history(count)

    def bare_append(path: Path) -> None:
        for message in messages:
            with open(path, "a", encoding="utf-8") as file:
                line = json.dumps(to_record(message), ensure_ascii=False, separators=(",", ":"))
                file.write(line + "\n")

    def ours_append(path: Path) -> None:
        for message in messages:
            append_session(path, message)

    with tempfile.TemporaryDirectory() as folder:
        times = {}
        for name, append in (("append_session", ours_append), ("bare", bare_append)):
            paths = (Path(folder, f"{name}{n}.jsonl") for n in range(100))
            times[name] = _best(partial(_next_file, append, paths), 5)
    ours, bare = times["append_session"], times["bare"]
    return [
        "| records | append_session | bare open-append-close of json.dumps | ratio |",
        "|---|---|---|---|",
        f"| {count:,} | {ours / count * 1e6:.1f} µs | {bare / count * 1e6:.1f} µs "
        f"| {ours / bare:.2f}x |",
    ]


def _next_file(append: Callable[[Path], None], paths: Iterator[Path]) -> None:
    append(next(paths))  # a fresh file for each run


def trimming(sizes: tuple[int, int], rival_size: int, budget: int) -> list[str]:
    rows = ["| history | budget | trim_context | trim_messages | trim_messages / trim_context |"]
    rows.append("|---|---|---|---|---|")
    history = random_history(rival_size)
    converted = [to_langchain(m) for m in history]
    ours = _best(partial(trim_context, history, budget), cold=history)
    theirs = _best(lambda: langchain_trim(converted, budget), 3)
    kept = (len(trim_context(history, budget)), len(langchain_trim(converted, budget)))
    rows.append(
        f"| {rival_size:,} messages (kept {kept[0]} / {kept[1]}) | {budget:,} "
        f"| {ours * 1e3:.1f} ms | {theirs * 1e3:.0f} ms | {theirs / ours:.0f}x |"
    )
    rows += ["", "| history | budget | trim_context | vs the smaller |", "|---|---|---|---|"]
    for make, label in (
        (random_history, "random_history"),
        (_orphans, "orphan tool results only (the chapter's worst case)"),
    ):
        first = None
        for n in sizes:
            messages = make(n)
            seconds = _best(partial(trim_context, messages, budget), cold=messages)
            ratio = "" if first is None else f"{seconds / first:.1f}x for {n // sizes[0]}x"
            first = first or seconds
            rows.append(f"| {label}, {n:,} | {budget:,} | {seconds * 1e3:.1f} ms | {ratio} |")
    return rows


def _orphans(count: int) -> list[Message]:
    return [ToolMessage(f"lost-{n}", "a result no assistant declares") for n in range(count)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.v3", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    quick = parser.parse_args(argv).quick
    print("\n".join(trimming((2_000, 20_000) if quick else (20_000, 200_000),
                             10_000 if quick else 100_000, 20_000)), "\n", flush=True)  # fmt: skip
    print("\n".join(appending(200 if quick else 2_000)), "\n", flush=True)
    print("\n".join(loading(15_000 if quick else 150_000)), flush=True)


if __name__ == "__main__":
    main()
