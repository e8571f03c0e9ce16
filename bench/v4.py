"""Package v4's figures, each like for like in one run: `python -m bench.v4` (`--quick`: small).

- appending: `append_session` against a bare open-append-close of `json.dumps`, one record per
  call, on the bench's messages (`random_history`) and on the Chinese ones
  (`tool_heavy_chinese_history`);
- loading: `load_session` against a bare `json.loads` loop over the same file (the faster of
  a text and a bytes loop), with the cycle collector as the caller left it (on, the default);
- what each of the append's guarantees costs, in microseconds per append, each syscall or
  check timed alone on a real session file.

Like for like: the contenders take turns, round after round, and each keeps its fastest round,
so a machine shared with other work slows all of them alike. Times are CPU seconds of this
process (`time.process_time`). Only the public API is used for the comparisons.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import os
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mini_agent import Message, append_session, load_session, to_record
from mini_agent.session import record_line

from .histories import random_history
from .loading import tool_heavy_chinese_history

APPEND_TARGET, LOAD_TARGET = 1.5, 0.8


def take_turns(contenders: dict[str, Callable[[int], object]], rounds: int) -> dict[str, float]:
    """Each contender's fastest round (CPU seconds); round `n` calls every contender with `n`."""
    best = dict.fromkeys(contenders, float("inf"))
    for number in range(rounds):
        for name, run in contenders.items():
            start = time.process_time()
            run(number)
            best[name] = min(best[name], time.process_time() - start)
    return best


def appending(messages: Sequence[Message], folder: Path, rounds: int) -> tuple[float, float, float]:
    """`append_session` / bare, and each per record: a fresh file every round."""

    def ours(number: int) -> None:
        path = folder / f"ours{number}.jsonl"
        for message in messages:
            append_session(path, message)

    def bare(number: int) -> None:
        path = folder / f"bare{number}.jsonl"
        for message in messages:
            with open(path, "a", encoding="utf-8", newline="") as file:
                file.write(
                    json.dumps(to_record(message), ensure_ascii=False, separators=(",", ":"))
                )
                file.write("\n")

    best = take_turns({"ours": ours, "bare": bare}, rounds)
    return best["ours"] / best["bare"], best["ours"] / len(messages), best["bare"] / len(messages)


def bare_text_loop(path: Path) -> list[Any]:
    """The floor: read, split on "\\n", skip blank lines, `json.loads` each; nothing checked."""
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line]


def bare_bytes_loop(path: Path) -> list[Any]:
    """The same floor, iterating the file's lines as bytes."""
    with open(path, "rb") as file:
        return [json.loads(line) for line in file if line.strip()]


def loading(path: Path, rounds: int) -> tuple[float, float, float]:
    best = take_turns(
        {
            "ours": lambda _: load_session(path),
            "text": lambda _: bare_text_loop(path),
            "bytes": lambda _: bare_bytes_loop(path),
        },
        rounds,
    )
    bare = min(best["text"], best["bytes"])
    return bare / best["ours"], best["ours"], bare


def guarantee_costs(folder: Path, repeat: int) -> list[tuple[str, float]]:
    """Microseconds per append of each step the kit adds to open-write-close, timed alone on
    a real session file (the best of a few runs of `repeat` calls)."""
    if sys.platform == "win32":  # the steps are POSIX calls
        return []
    else:
        import fcntl

        path = folder / "costs.jsonl"
        message = random_history(1)[0]
        append_session(path, message)
        fd = os.open(path, os.O_RDWR)
        size = os.fstat(fd).st_size
        opener = functools.partial(os.open, mode=0o600)
        guard = threading.Lock()
        held: dict[int, weakref.ref[_Referable]] = {}

        def fileio() -> None:
            io.FileIO(path, "r+b", opener=opener).close()

        def plain_open() -> None:
            os.close(os.open(path, os.O_RDWR))

        def record_for_forks() -> None:
            with guard:
                held[fd] = weakref.ref(guard_object)

        guard_object = _Referable()
        steps: list[tuple[str, Callable[[], object]]] = [
            ("an object owns the fd (io.FileIO, against os.open/close)", fileio),
            (
                "O_APPEND for writers that take no lock (fcntl F_SETFL)",
                lambda: fcntl.fcntl(fd, fcntl.F_SETFL, os.O_APPEND),
            ),
            ("the lock (flock; released by the close)", lambda: fcntl.flock(fd, fcntl.LOCK_EX)),
            ("the size after the lock (fstat)", lambda: os.fstat(fd)),
            ("the path still names the locked file, not a link (lstat)", lambda: os.lstat(path)),
            ("whose file, how many names (geteuid and the checks)", os.geteuid),
            ("the newline guard: the last byte (pread)", lambda: os.pread(fd, 1, size - 1)),
            ("the end, under the lock (lseek)", lambda: os.lseek(fd, size, os.SEEK_SET)),
            ("a fork takes no lock along (guard, weak record)", record_for_forks),
            (
                "exact JSON: record_line against json.dumps",
                lambda: record_line(message),
            ),
        ]
        baseline: dict[str, Callable[[], object]] = {
            "an object owns the fd (io.FileIO, against os.open/close)": plain_open
        }
        baseline["exact JSON: record_line against json.dumps"] = lambda: json.dumps(
            to_record(message), ensure_ascii=False, separators=(",", ":")
        )
        costs = []
        for name, step in steps:
            seconds = _per_call(step, repeat)
            if name in baseline:
                seconds -= _per_call(baseline[name], repeat)
            costs.append((name, seconds * 1e6))
        os.close(fd)
        return costs


class _Referable:
    """Something a weak reference can point at, as the fork record's do."""


def _per_call(step: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(repeat):
            step()
        best = min(best, (time.process_time() - start) / repeat)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.v4", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    quick = parser.parse_args(argv).quick
    appends, lines, rounds = (200, 15_000, 5) if quick else (1_000, 150_000, 15)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average when the run started: {load:.2f}\n")
    met = True
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        print("| file | append_session | bare open-append-close | ratio (≤ 1.5x) |")
        print("|---|---|---|---|")
        histories = {
            "bench file (random_history)": random_history,
            "Chinese file (tool_heavy_chinese_history)": tool_heavy_chinese_history,
        }
        for label, make in histories.items():
            ratio, ours, bare = appending(make(appends), folder, rounds)
            met &= ratio <= APPEND_TARGET
            print(
                f"| {label}, {appends:,} records | {ours * 1e6:.1f} µs | {bare * 1e6:.1f} µs | {ratio:.2f}x |"
            )
        print("\n| file | load_session | bare json.loads loop | ratio (≥ 0.8x) |")
        print("|---|---|---|---|")
        for label, make in histories.items():
            path = folder / "load.jsonl"
            path.write_text(
                "".join(record_line(m) + "\n" for m in make(lines)), encoding="utf-8", newline=""
            )
            size = path.stat().st_size / 1e6
            ratio, ours, bare = loading(path, max(rounds // 3, 3))
            met &= ratio >= LOAD_TARGET
            print(
                f"| {label}, {lines:,} lines, {size:.0f} MB | {ours * 1e3:.0f} ms | {bare * 1e3:.0f} ms | {ratio:.2f}x |"
            )
        print("\n| what the append adds | µs per append |")
        print("|---|---|")
        for name, micros in guarantee_costs(folder, 2_000 if quick else 20_000):
            print(f"| {name} | {micros:.2f} |")
    print(f"\n{'both targets met' if met else 'a target was missed'}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
