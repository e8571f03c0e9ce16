"""The chapter's reverse scan, one step at a time, for notebooks and steppers to show.

Chapter 34, section "单位构造的逐步过程". Derived from the package's one scan: `scan_steps`
walks `context.context_units`' outer loop and takes each tool result's assistant from
`context.declaring_assistants` (the chapter's inner search, answered in advance); `looked_at`
lists the messages that inner search passes over on its way back. Each step yields what the
chapter draws: where `index` is, which assistant was found, the unit cut and the units so far.
The units of the last step equal `context_units(messages)` (tests/test_trace.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from mini_agent.context import declaring_assistants
from mini_agent.listing import label, unit_text
from mini_agent.session import Message, ToolMessage

from .text import words

Units = tuple[tuple[Message, ...], ...]


def units_text(units: Units) -> str:
    """`[ [user], [assistant(a,b), tool a, tool b] ]`, as the chapter draws the units."""
    return "[ " + ", ".join("[" + ", ".join(map(label, u)) + "]" for u in units) + " ]"


@dataclass(frozen=True)
class ScanStep:
    """One turn of the chapter's outer loop over `messages`, newest message first.

    - `number`: 1 for the first step;
    - `index` / `message`: the message the loop stands on;
    - `wanted_id`: the call id searched for (a tool result), else `None`;
    - `looked_at`: indices the inner search visited, nearest first (empty if no search);
    - `found`: index of the declaring assistant, or `None` (not a tool, or an orphan);
    - `start`, `end`: the unit cut this step, `messages[start:end]`;
    - `units`: every unit cut so far, oldest first (the chapter's `units` after `unshift`);
    - `next_index`: where `index` goes next (`-1` ends the scan).
    """

    number: int
    index: int
    message: Message
    wanted_id: str | None
    looked_at: tuple[int, ...]
    found: int | None
    start: int
    end: int
    units: Units

    @property
    def unit(self) -> tuple[Message, ...]:
        """The unit cut in this step (the first of `units`)."""
        return self.units[0]

    @property
    def next_index(self) -> int:
        return self.start - 1

    @property
    def is_orphan(self) -> bool:
        """A tool result that no earlier assistant declares: it stays a unit of its own."""
        return self.wanted_id is not None and self.found is None

    def explain(self) -> str:
        """What happened in this step, in one line, as the chapter tells it."""
        w = words()
        if self.wanted_id is None:
            what = w.scan_alone()
        elif self.found is None:
            what = w.scan_orphan(self.wanted_id)
        else:
            what = w.scan_found(self.wanted_id, self.found, self.start, self.end)
        return f"index={self.index} {label(self.message)}：{what}"

    def __repr__(self) -> str:
        return words().scan_step(
            self.number, self.explain(), units_text(self.units), self.next_index
        )


def scan_steps(messages: Sequence[Message]) -> Iterator[ScanStep]:
    """Yield each step of the chapter's reverse scan that builds consistent units.

    Pure: `messages` is only read. An empty history yields no step.
    """
    assistant_for = declaring_assistants(messages)
    units: Units = ()
    index = len(messages) - 1
    number = 0
    while index >= 0:
        message = messages[index]
        looked_at: tuple[int, ...] = ()  # what the chapter's inner search passes over
        wanted_id, found = None, None
        if isinstance(message, ToolMessage):
            wanted_id = message.tool_call_id
            if assistant_for[index] >= 0:
                found = assistant_for[index]
            looked_at = tuple(range(index - 1, (found if found is not None else 0) - 1, -1))
        start = index if found is None else found
        units = (tuple(messages[start : index + 1]), *units)
        number += 1
        yield ScanStep(number, index, message, wanted_id, looked_at, found, start,
                       index + 1, units)  # fmt: skip
        index = start - 1


__all__ = ["ScanStep", "label", "scan_steps", "unit_text", "units_text"]
