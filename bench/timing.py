"""Timers: the best of a few runs, and a run that is cut off when it takes too long.

CPU-bound work is timed in CPU seconds of this process (`time.process_time`): on a machine
shared with other jobs, wall-clock time mostly measures the other jobs.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any


def best_time(
    run: Callable[[], object],
    *,
    before: Callable[[], object] | None = None,
    repeat: int = 5,
    budget: float = 2.0,
    clock: Callable[[], float] = time.process_time,
) -> float:
    """The fastest of up to `repeat` runs (seconds), stopping early once `budget` is spent.

    `before` runs untimed ahead of every run (e.g. to forget cached sizes).
    The best run is the one least disturbed by other work on a shared machine.
    """
    best = float("inf")
    spent = 0.0
    for _ in range(repeat):
        if before is not None:
            before()
        start = clock()
        run()
        elapsed = clock() - start
        best = min(best, elapsed)
        spent += elapsed
        if spent > budget:
            break
    return best


def _child(run: Callable[[], object], pipe: Connection) -> None:
    start = time.process_time()
    run()
    pipe.send(time.process_time() - start)


def time_with_deadline(run: Callable[[], object], deadline: float) -> float | None:
    """CPU seconds one run takes, or `None` when it was stopped after `deadline` seconds
    (of wall-clock time).

    The run happens in a forked child (which shares the parent's data for free), so that a
    quadratic algorithm can be stopped without stopping the benchmark.
    """
    context: Any = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(run, sender))
    child.start()
    sender.close()
    try:
        if receiver.poll(deadline):
            seconds: float = receiver.recv()
            return seconds
        return None
    finally:
        if child.is_alive():
            child.terminate()
        child.join()
        receiver.close()
