"""The trim targets of package v2: `python -m bench.trim_targets`.

1. A 20k-character budget on a 200k-message history costs within 3x of a 2k-message one.
   (Package v3 gives this up for the chapter's shape: a trim makes one forward pass over the
   history, so it is linear in its length; `python -m bench.v3` measures 20k against 200k.)
2. A history full of orphan results (no assistant declares them) trims in linear time.
3. `trim_context` equals the chapter's literal algorithm on thousands of messy histories
   (repeated ids, orphans, interleaved calls, unanswered calls, random budgets).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from functools import partial

from mini_agent import (
    AssistantMessage,
    ContextBudgetError,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    context_units,
    estimate_context_chars,
    trim_context,
)
from tests.chapter_reference import context_units as literal_units
from tests.chapter_reference import trim_context as literal_trim

from .histories import forget_sizes, random_history

BUDGET = 20_000


def best_of(repeats: int, run: Callable[[], object]) -> float:
    """The fastest of `repeats` runs, in seconds (the least disturbed by other work)."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def budget_scaling() -> list[tuple[int, float, float]]:
    """(messages, cold ms, warm ms) per trim at a 20k budget: sizes measured, then cached."""
    rows = []
    for count in (2_000, 20_000, 200_000):
        history = random_history(count)
        kept = trim_context(history, BUDGET)

        def cold(history: list[Message] = history, kept: list[Message] = kept) -> None:
            forget_sizes(kept)
            trim_context(history, BUDGET)

        rows.append(
            (
                count,
                best_of(50, cold) * 1e3,
                best_of(200, partial(trim_context, history, BUDGET)) * 1e3,
            )
        )
    return rows


def orphan_history(count: int) -> list[Message]:
    """A user message, then results no assistant declares, with a few real calls between."""
    messages: list[Message] = [UserMessage("开始")]
    for index in range(count - 1):
        if index % 50 == 0:
            messages.append(AssistantMessage("", (ToolCall(f"c{index}", "read", {}),)))
        else:
            messages.append(ToolMessage(f"orphan{index}", "x" * 20))
    return messages


def orphan_scaling() -> list[tuple[int, float]]:
    """(messages, ms) for all units of a history of orphans: doubling should double the time."""
    rows = []
    for count in (10_000, 20_000, 40_000, 80_000):
        history = orphan_history(count)
        full = estimate_context_chars(history)
        rows.append((count, best_of(5, partial(trim_context, history, full)) * 1e3))
    return rows


def messy_history(rng: random.Random) -> list[Message]:
    """Up to 40 messages drawn so that every quirk of the chapter's scan comes up often."""
    ids = [f"id{n}" for n in range(rng.randint(1, 5))]  # a small pool: ids repeat
    messages: list[Message] = []
    for _ in range(rng.randint(0, 40)):
        kind = rng.random()
        if kind < 0.2:
            messages.append(UserMessage("问" * rng.randint(0, 30)))
        elif kind < 0.5:
            calls = tuple(
                ToolCall(rng.choice(ids), "read", {"n": rng.randint(0, 9)})
                for _ in range(rng.randint(0, 3))
            )
            messages.append(AssistantMessage("a" * rng.randint(0, 20), calls))
        else:
            messages.append(
                ToolMessage(rng.choice(ids), "r" * rng.randint(0, 60), rng.random() < 0.2)
            )
    return messages


def outcome(
    trim: Callable[[list[Message], int], list[Message]], history: list[Message], budget: int
) -> object:
    try:
        return trim(history, budget)
    except ContextBudgetError as err:
        return str(err)


def agreement(cases: int = 5_000, seed: int = 34) -> tuple[int, int, int]:
    """(histories, trims, differences): units and trims, ours against the literal copy."""
    rng = random.Random(seed)
    differences = trims = 0
    for _ in range(cases):
        history = messy_history(rng)
        differences += context_units(history) != literal_units(history)
        total = estimate_context_chars(history)
        for budget in {1, rng.randint(1, total + 1), rng.randint(1, total + 1), total + 1}:
            trims += 1
            differences += outcome(trim_context, history, budget) != outcome(
                literal_trim, history, budget
            )
    return cases, trims, differences


def main() -> None:
    print(f"### Trim targets (budget {BUDGET:,} characters)\n")
    print("| history | per trim, sizes not yet known | per trim, sizes cached |")
    print("|---:|---:|---:|")
    scaling = budget_scaling()
    for count, cold, warm in scaling:
        print(f"| {count:,} messages | {cold:.3f} ms | {warm:.3f} ms |")
    small, large = scaling[0], scaling[-1]
    print(
        f"\n200k against 2k messages: {large[1] / small[1]:.2f}x (cold), "
        f"{large[2] / small[2]:.2f}x (cached); target ≤ 3x\n"
    )
    print("| orphan results | all units (full budget) | per message |")
    print("|---:|---:|---:|")
    for count, ms in orphan_scaling():
        print(f"| {count:,} | {ms:.1f} ms | {ms * 1e3 / count:.2f} µs |")
    cases, trims, differences = agreement()
    print(
        f"\n{cases:,} random messy histories, {trims:,} trims and {cases:,} unit lists "
        f"against the literal algorithm: {differences} differences"
    )


if __name__ == "__main__":
    main()
