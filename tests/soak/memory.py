"""`python -m tests.soak.memory [MB]`: peak memory of append, load and repair, as multiples.

Each measurement runs in a fresh interpreter and reports (peak RSS - RSS before) / the
record's or the file's size: what docs/DURABILITY.md quotes. Default 256 MB per record.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MEASURE = textwrap.dedent(
    """
    import os, resource, sys
    from mini_agent import UserMessage, append_session, load_session
    from mini_agent.repair import repair_session
    what, path, size = sys.argv[1], sys.argv[2], int(sys.argv[3])

    def rss_kib():
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])

    if what == "append":
        before = rss_kib()
        append_session(path, UserMessage("a" * size))
    elif what == "append-after-unterminated":  # a small record; the guard reads the line
        before = rss_kib()
        append_session(path, UserMessage("a"))
    elif what == "load":
        before = rss_kib()
        load_session(path)
    elif what == "repair":
        before = rss_kib()
        repair_session(path)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print((peak - before) * 1024 / size)
    """
)


def measure(what: str, path: Path, size: int) -> float:
    run = subprocess.run(
        [sys.executable, "-c", MEASURE, what, str(path), str(size)],
        cwd=ROOT, capture_output=True, encoding="utf-8", check=True,
    )  # fmt: skip
    return float(run.stdout)


def main() -> None:
    megabytes = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    size = megabytes << 20
    with tempfile.TemporaryDirectory(prefix="memory-") as name:
        folder = Path(name)
        one = folder / "one.jsonl"
        rows = {"append one record to a new file": measure("append", one, size)}
        rows["load a file of that one record"] = measure("load", one, one.stat().st_size)
        unterminated = folder / "unterminated.jsonl"
        unterminated.write_bytes(b'{"role":"user","content":"' + b"u" * size + b'"}')
        rows["append after a last line without its newline (per byte of that line)"] = measure(
            "append-after-unterminated", unterminated, size
        )
        for length in (100, 30):  # 30 bytes: the smallest user record, and its newline
            small = folder / f"small{length}.jsonl"
            line = b'{"role":"user","content":"' + b"s" * (length - 30) + b'"}\n'
            small.write_bytes(line * (size // len(line)))
            rows[f"load {length}-byte records"] = measure("load", small, small.stat().st_size)
        torn = folder / "torn.jsonl"
        torn.write_bytes(
            line * (size // len(line) // 2) + b'{"role":"user","content":"' + b"t" * (size // 2)
        )
        rows["repair a torn last line"] = measure("repair", torn, torn.stat().st_size)
    print(f"peak memory beyond the start, as a multiple of the data ({megabytes} MB):")
    for what, multiple in rows.items():
        print(f"  {what}: {multiple:.1f}x")


if __name__ == "__main__":
    main()
