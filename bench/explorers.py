"""How long a budget-slider move takes on a long session: recompute and re-render.

    .venv/bin/python -m bench.explorers [MESSAGES]

Builds a session of MESSAGES messages (default 2,000) from the package's sample session,
moves the budget slider across its range, and reports how long each move took to recompute
`trim_context` and rebuild the widget's HTML (what the kernel does before the browser draws).
The target for a live walkthrough is under 50 ms a move. Not a test: times vary by machine.
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import replace

from mini_agent import AssistantMessage, Message, ToolMessage, estimate_context_chars
from teaching.explorers import BudgetExplorer
from teaching.samples import sample_session

TARGET_MS = 50.0


def long_session(count: int) -> list[Message]:
    """`count` messages: the sample session repeated, call ids made unique per repetition."""
    messages: list[Message] = []
    block = sample_session()
    round_ = 0
    while len(messages) < count:
        for message in block:
            if isinstance(message, AssistantMessage):
                calls = tuple(
                    replace(call, id=f"{call.id}-{round_}") for call in message.tool_calls
                )
                message = AssistantMessage(message.content, calls)
            elif isinstance(message, ToolMessage):
                message = replace(message, tool_call_id=f"{message.tool_call_id}-{round_}")
            messages.append(message)
        round_ += 1
    return messages[:count]


def main(argv: list[str]) -> None:
    count = int(argv[0]) if argv else 2000
    messages = long_session(count)
    total = estimate_context_chars(messages)
    explorer = BudgetExplorer(messages, max_chars=total // 2)
    budgets = [max(1, total * step // 40) for step in range(1, 41)]  # 40 moves over the range
    times_ms, html_sizes = [], []
    for budget in budgets:
        start = time.perf_counter()
        explorer.slider.value = budget  # the observer recomputes and re-renders
        times_ms.append((time.perf_counter() - start) * 1000)
        assert explorer.summary.startswith(f"budget {budget} chars")
        html_sizes.append(len(explorer.view.value))
    median, worst = statistics.median(times_ms), max(times_ms)
    print(f"{count} messages, {total} chars, {len(budgets)} slider moves")
    print(f"per move: median {median:.1f} ms, max {worst:.1f} ms (target < {TARGET_MS:.0f} ms)")
    print(f"HTML sent to the browser per move: at most {max(html_sizes)} chars")
    print("OK" if worst < TARGET_MS else "SLOWER THAN TARGET")


if __name__ == "__main__":
    main(sys.argv[1:])
