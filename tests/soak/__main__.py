"""`python -m tests.soak [--scale S]`: the fault trials of tests/faults.py at issue 11's scale.

Targets: >= 500 SIGKILLed appenders, >= 1,000 real ENOSPC trials, 8 x 5,000 concurrent
appends (tmpfs and the ordinary disk), >= 30,000 loads racing multi-MB appends — 0 lost,
0 glued, every torn tail the last line and repairable, 0 false errors; and (issue 17) 2,000
Ctrl-Cs landing in a main thread's appends while 3 threads append too, 500 with none — 0 fds
left open, 0 locks left held; and (issue 25) Ctrl-C in small appends with and without fsync —
0 phantoms (an append that raised, unmarked, whose record is in the file); Ctrl-C inside
`run_agent` — 0 doubled results, memory equal to disk; appends to hard-linked files — 0 made;
an append after the 39-byte unterminated last line of a 1 GiB file — its peak memory. Prints
the figures and the time of each part; exits 1 if any promise was broken. `--scale 0.01` is a
quick rehearsal.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from .. import faults


def part(name: str, run: Callable[[], faults.Tally], results: list[str]) -> bool:
    started = time.monotonic()
    tally = run()
    seconds = time.monotonic() - started
    promises = ("lost", "glued", "leaked", "locked", "phantoms", "doubled", "unequal")
    shown = promises  # shown even when 0
    figures = {
        key: value
        for key, value in vars(tally).items()
        if key != "errors" and (value or key in shown)
    }
    ok = not (tally.errors or any(getattr(tally, promise) for promise in promises))
    line = f"{name}: {'ok' if ok else 'BROKEN'} in {seconds:.0f} s: {figures}"
    if tally.errors:
        line += f"; first errors: {tally.errors[:3]}"
    print(line, flush=True)
    results.append(line)
    return ok


def kills(folder: Path, appenders: int, rng: random.Random) -> faults.Tally:
    total = faults.Tally()
    for round_ in range(math.ceil(appenders / 3)):
        path = folder / f"kill{round_ // 10}.jsonl"  # ten rounds on each file
        total.add(faults.kill_round(path, f"r{round_}", 3, rng, (10, 4 << 20)))
    return total


def enospc(folder: Path, trials: int, rng: random.Random) -> faults.Tally:
    total = faults.Tally()
    done = 0
    while done < trials:  # a fresh small disk every 100 trials, so the session stays small
        batch = min(100, trials - done)
        with faults.small_tmpfs(folder / f"disk{done}", 1 << 20) as disk:
            total.add(faults.enospc_trials(disk, batch, rng))
        done += batch
    return total


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.soak", description=__doc__)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the full soak")
    scale: float = parser.parse_args().scale

    def scaled(count: int) -> int:
        return max(1, round(count * scale))

    rng = random.Random(34)
    results: list[str] = []
    ok = True
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="soak-") as name:
        folder = Path(name)
        (folder / "kills").mkdir()
        ok &= part(
            "SIGKILLed appenders", lambda: kills(folder / "kills", scaled(510), rng), results
        )
        try:
            ok &= part(
                "ENOSPC on a 1 MiB tmpfs", lambda: enospc(folder, scaled(1000), rng), results
            )
        except faults.MountRefused as refused:
            print(f"ENOSPC on a tmpfs: not run ({refused}); RLIMIT_FSIZE below stands in")
        (folder / "rlimit").mkdir()
        ok &= part(
            "EFBIG from RLIMIT_FSIZE",
            lambda: faults.rlimit_trials(folder / "rlimit", scaled(1000), 34),
            results,
        )
        (folder / "disk").mkdir()
        ok &= part(
            "8 x 5,000 concurrent appends (the ordinary disk)",
            lambda: faults.concurrent_appends(folder / "disk", 8, scaled(5000)),
            results,
        )
        try:
            with faults.small_tmpfs(folder / "tmpfs", 2 << 30) as disk:
                ok &= part(
                    "8 x 5,000 concurrent appends (tmpfs)",
                    lambda: faults.concurrent_appends(disk, 8, scaled(5000)),
                    results,
                )
        except faults.MountRefused as refused:
            print(f"concurrent appends on tmpfs: not run ({refused})")
        for helpers, trials in ((3, 2000), (0, 500)):
            own = folder / f"sigint{helpers}"
            own.mkdir()
            ok &= part(
                f"Ctrl-C in appends, {helpers} other threads appending",
                partial(faults.sigint_trials, own, scaled(trials), helpers, 34),
                results,
            )
        for fsync, trials in ((False, 2000), (True, 1000)):
            own = folder / f"outcome{int(fsync)}"
            own.mkdir()
            ok &= part(
                f"Ctrl-C in small appends, {'fsync' if fsync else 'no fsync'}",
                partial(faults.ctrl_c_outcomes, own, scaled(trials), fsync, 25),
                results,
            )
        (folder / "agent").mkdir()
        ok &= part(
            "Ctrl-C inside run_agent (40 steps of 3 tool calls)",
            partial(faults.ctrl_c_in_run_agent, folder / "agent", scaled(1000), 25),
            results,
        )
        (folder / "links").mkdir()
        ok &= part(
            "appends to a file with a second hard link",
            lambda: faults.hard_link_trials(folder / "links", scaled(1000)),
            results,
        )
        ok &= part(
            "append after the 39-byte unterminated last line of a 1 GiB file",
            lambda: faults.unterminated_tail_memory(folder, 1 << 30),
            results,
        )
        (folder / "race").mkdir()
        ok &= part(
            "loads racing 1-4 MB appends",
            lambda: faults.racing_loads(
                folder / "race", scaled(30_000), 3600, (1 << 20, 4 << 20), 34, appenders=2
            ),
            results,
        )
    print(f"soak {'passed' if ok else 'FAILED'} in {time.monotonic() - started:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
