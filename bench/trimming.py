"""Trimming: `trim_context` against the chapter's literal algorithm and LangChain's
`trim_messages`, on a full-history budget and on a per-turn budget of 200k characters."""

from __future__ import annotations

import gc
import itertools
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mini_agent import ContextBudgetError, Message, estimate_context_chars, trim_context
from mini_agent.session import record_line
from tests.chapter_reference import trim_context as literal_trim

from . import report
from .histories import forget_sizes, orphan_results, random_history, steps_of
from .rivals import (
    langchain_steps,
    langchain_trim,
    memoised_counter,
    to_langchain,
)
from .timing import best_time, time_with_deadline

SIZES = (1_000, 10_000, 100_000, 1_000_000)
TURN_BUDGET = 200_000
DEADLINE = 300.0  # wall-clock seconds before a literal run is stopped
NOT_STARTED = 3  # ... and a size whose n² estimate exceeds this many deadlines is not started


@dataclass
class LiteralRuns:
    """Runs the quadratic literal algorithm while it stays affordable; estimates the rest."""

    measured: list[tuple[int, float]] = field(default_factory=list)

    def estimate(self, n: int) -> float | None:
        if not self.measured:
            return None
        last_n, last_seconds = self.measured[-1]
        return last_seconds * (n / last_n) ** 2

    def run(self, n: int, trim: Callable[[], object]) -> tuple[float | None, str]:
        guess = self.estimate(n)
        if guess is not None and guess > NOT_STARTED * DEADLINE:
            return None, f"not started (n² estimate ≈ {report.seconds(guess)})"
        seconds = time_with_deadline(trim, DEADLINE)
        if seconds is None:
            note = f"stopped after {DEADLINE:.0f} s"
            if guess is not None:
                note += f" (n² estimate ≈ {report.seconds(guess)})"
            return None, note
        self.measured.append((n, seconds))
        return seconds, ""


@dataclass
class SizeResult:
    n: int
    full_cold: float
    full_warm: float
    full_literal: float | None
    full_literal_note: str
    full_literal_estimate: float | None
    full_langchain: float
    convert: float
    turn_first: float
    turn_later: float
    turn_floor: float
    turn_literal: float | None
    turn_literal_note: str
    turn_langchain_first: float
    turn_langchain_later: float
    kept: int
    langchain_kept: int
    orphans: int
    langchain_orphans: int


def measure_size(n: int, full: LiteralRuns, turn: LiteralRuns) -> SizeResult:
    history = random_history(n)
    total = estimate_context_chars(history)

    def cold() -> None:
        forget_sizes(history)

    def trim_all() -> object:
        return trim_context(history, total)

    def trim_turn() -> list[Message]:
        return trim_context(history, TURN_BUDGET)

    full_cold = best_time(trim_all, before=cold, repeat=3)
    trim_all()
    full_warm = best_time(trim_all, repeat=3)
    full_estimate = full.estimate(n)
    full_literal, full_note = full.run(n, lambda: literal_trim(history, total))

    turn_first = best_time(trim_turn, before=cold, repeat=5)
    kept = trim_turn()
    turn_later = best_time(trim_turn, repeat=5)
    turn_floor = best_time(lambda: sum(len(record_line(m)) + 1 for m in kept), repeat=5)
    turn_literal, turn_note = turn.run(n, lambda: literal_trim(history, TURN_BUDGET))

    convert = best_time(lambda: [to_langchain(m) for m in history], repeat=1)
    chat = [to_langchain(m) for m in history]
    full_langchain = best_time(lambda: langchain_trim(chat, total), repeat=3)
    turn_langchain_first = best_time(lambda: langchain_trim(chat, TURN_BUDGET), repeat=3)
    remembered = memoised_counter()
    chat_kept = langchain_trim(chat, TURN_BUDGET, remembered)
    turn_langchain_later = best_time(
        lambda: langchain_trim(chat, TURN_BUDGET, remembered), repeat=3
    )
    result = SizeResult(
        n=n,
        full_cold=full_cold,
        full_warm=full_warm,
        full_literal=full_literal,
        full_literal_note=full_note,
        full_literal_estimate=full_estimate,
        full_langchain=full_langchain,
        convert=convert,
        turn_first=turn_first,
        turn_later=turn_later,
        turn_floor=turn_floor,
        turn_literal=turn_literal,
        turn_literal_note=turn_note,
        turn_langchain_first=turn_langchain_first,
        turn_langchain_later=turn_langchain_later,
        kept=len(kept),
        langchain_kept=len(chat_kept),
        orphans=orphan_results(steps_of(kept)),
        langchain_orphans=orphan_results(langchain_steps(chat_kept)),
    )
    return result


@dataclass
class Consistency:
    trials: int = 0
    refused: int = 0  # trim_context raised ContextBudgetError (budget below the newest unit)
    ours_orphans: int = 0
    literal_differs: int = 0
    langchain_orphans: int = 0
    langchain_empty: int = 0
    human_orphans: int = 0
    human_empty: int = 0
    ours_kept: int = 0
    langchain_kept: int = 0
    human_kept: int = 0


def consistency(trials: int = 300, length: int = 200) -> Consistency:
    """Same random histories and budgets for all: how often does a result start mid-unit?"""
    tally = Consistency(trials=trials)
    rng = random.Random(2026)
    for seed in range(trials):
        history = random_history(length, seed=seed)
        budget = rng.randint(2_000, estimate_context_chars(history))
        chat = [to_langchain(m) for m in history]
        plain = langchain_trim(chat, budget)
        human = langchain_trim(chat, budget, start_on="human")
        tally.langchain_orphans += orphan_results(langchain_steps(plain)) > 0
        tally.langchain_empty += not plain
        tally.langchain_kept += len(plain)
        tally.human_orphans += orphan_results(langchain_steps(human)) > 0
        tally.human_empty += not human
        tally.human_kept += len(human)
        try:
            ours = trim_context(history, budget)
        except ContextBudgetError:
            tally.refused += 1
            continue
        tally.ours_orphans += orphan_results(steps_of(ours)) > 0
        tally.literal_differs += literal_trim(history, budget) != ours
        tally.ours_kept += len(ours)
    return tally


def _faster(slow: float | None, fast: float) -> float | None:
    return None if slow is None else slow / fast


def trimming_report(sizes: Sequence[int] = SIZES, trials: int = 300) -> str:
    full, turn = LiteralRuns(), LiteralRuns()
    results = []
    for n in sizes:
        print(f"trimming {report.count(n)} messages…", file=sys.stderr, flush=True)
        results.append(measure_size(n, full, turn))
        gc.collect()  # the history of this size is gone; free its memory before the next
    tally = consistency(trials)
    return "\n\n".join(
        [
            _full_table(results),
            _turn_table(results),
            _consistency_table(tally),
            _targets(results),
        ]
    )


def _literal_cell(seconds: float | None, note: str) -> str:
    return report.seconds(seconds) if seconds is not None else note


def _full_table(results: Sequence[SizeResult]) -> str:
    rows = [
        [
            report.count(r.n),
            report.seconds(r.full_cold),
            report.seconds(r.full_warm),
            _literal_cell(r.full_literal, r.full_literal_note),
            report.seconds(r.full_langchain),
            report.seconds(r.convert),
        ]
        for r in results
    ]
    headers = [
        "messages",
        "trim_context, sizes not yet known",
        "trim_context, sizes cached",
        "literal algorithm",
        "trim_messages",
        "(converting to LangChain, not counted)",
    ]
    return "### Full-history budget (everything fits)\n\n" + report.table(headers, rows)


def _turn_table(results: Sequence[SizeResult]) -> str:
    rows = [
        [
            report.count(r.n),
            f"{r.kept} / {r.langchain_kept}",
            report.seconds(r.turn_floor),
            f"{report.seconds(r.turn_first)} ({r.turn_first / r.turn_floor:.2f}x floor)",
            f"{report.seconds(r.turn_later)} ({r.turn_later / r.turn_floor:.2f}x floor)",
            _literal_cell(r.turn_literal, r.turn_literal_note),
            report.seconds(r.turn_langchain_first),
            report.seconds(r.turn_langchain_later),
            f"{r.orphans} / {r.langchain_orphans}",
        ]
        for r in results
    ]
    headers = [
        "messages",
        "kept (ours / LangChain)",
        "floor: serialise kept once",
        "trim_context, first turn",
        "trim_context, later turns",
        "literal algorithm",
        "trim_messages",
        "trim_messages, memoised counter",
        "orphan tool results (ours / LangChain)",
    ]
    title = f"### Per-turn budget of {TURN_BUDGET:,} characters\n\n"
    return title + report.table(headers, rows)


def _consistency_table(t: Consistency) -> str:
    answered = t.trials - t.refused
    rows = [
        [
            "trim_context",
            f"{t.ours_orphans}",
            f"{t.refused} (ContextBudgetError)",
            f"{t.ours_kept / max(answered, 1):.0f}",
        ],
        [
            'trim_messages(strategy="last")',
            f"{t.langchain_orphans}",
            f"{t.langchain_empty}",
            f"{t.langchain_kept / t.trials:.0f}",
        ],
        [
            'trim_messages(strategy="last", start_on="human")',
            f"{t.human_orphans}",
            f"{t.human_empty}",
            f"{t.human_kept / t.trials:.0f}",
        ],
    ]
    headers = [
        "trimmer",
        "results starting with an orphan tool result",
        "empty or refused",
        "mean messages kept",
    ]
    title = (
        f"### Whole tool calls: {t.trials} random histories of 200 messages, random budgets\n\n"
        f"The literal algorithm gave the same result as `trim_context` on "
        f"{t.trials - t.refused - t.literal_differs} of {t.trials - t.refused} answered cases.\n\n"
    )
    return title + report.table(headers, rows)


def _targets(results: Sequence[SizeResult]) -> str:
    by_n = {r.n: r for r in results}
    lines = ["### Targets"]
    if 100_000 in by_n:
        r = by_n[100_000]
        measured = _faster(r.full_literal, r.full_cold)
        estimated = (
            None if r.full_literal_estimate is None else r.full_literal_estimate / r.full_cold
        )
        if measured is not None:
            text = f"measured {report.ratio(measured)} — {report.verdict(measured >= 1000)}"
        else:
            bound = DEADLINE / r.full_cold
            text = f"more than {report.ratio(bound)} (the literal run was not finished)"
            if estimated is not None:
                text += f", ≈ {report.ratio(estimated)} by the n² estimate"
            if bound >= 1000:
                text += " — met"
            elif estimated is not None and estimated >= 1000:
                text += " — met by the estimate, not by a finished run"
            else:
                text += " — **missed**"
        lines.append(
            f"- trim_context at 100k (sizes not yet known) ≥ 1000x faster than the literal "
            f"algorithm: {text}"
        )
        for label, ours, theirs in (
            ("full-history budget, sizes not yet known", r.full_cold, r.full_langchain),
            ("full-history budget, sizes cached", r.full_warm, r.full_langchain),
            ("per-turn budget, first turn", r.turn_first, r.turn_langchain_first),
            (
                "per-turn budget, later turns (memoised counter)",
                r.turn_later,
                r.turn_langchain_later,
            ),
        ):
            lines.append(
                f"- trim_context ≥ 10x faster than trim_messages at 100k, {label}: "
                f"{report.ratio(theirs / ours)} — {report.verdict(theirs / ours >= 10)}"
            )
    steps = [(a, b) for a, b in itertools.pairwise(results) if b.n == 10 * a.n]
    for label, attribute in (("sizes not yet known", "full_cold"), ("sizes cached", "full_warm")):
        growth = [getattr(b, attribute) / getattr(a, attribute) for a, b in steps]
        shown = ", ".join(
            f"{report.count(a.n)}→{report.count(b.n)}: {g:.1f}x"
            for (a, b), g in zip(steps, growth, strict=True)
        )
        met = all(g <= 12 for g in growth)
        lines.append(
            f"- 10x the messages costs ≤ 12x the time, full-history budget, {label}: "
            f"{shown} — {report.verdict(met)}"
        )
    worst_first = max(r.turn_first / r.turn_floor for r in results)
    worst_later = max(r.turn_later / r.turn_floor for r in results)
    lines.append(
        f"- per-turn trim within 2x of the floor at every history length: first turn at most "
        f"{worst_first:.2f}x, later turns at most {worst_later:.2f}x — "
        f"{report.verdict(worst_first <= 2 and worst_later <= 2)}"
    )
    return "\n".join(lines)
