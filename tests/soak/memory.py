"""`python -m tests.soak.memory [MB]`: peak memory of append, load and repair, as multiples.

Each measurement runs in a fresh interpreter and reports (peak RSS - RSS before) / the
record's or the file's size: what docs/DURABILITY.md quotes. Default 256 MB per record. Two
rows are absolute (MB and seconds): an append after a 39-byte unterminated last line of a
file of that size times four (1 GiB by default), and a load of that size of blank lines.
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

    def status_kib(field):
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])

    def rss_kib():  # the peak from here on: clear the high-water mark (Linux >= 4.0), which
        with open("/proc/self/clear_refs", "w") as refs:  # an exec would otherwise carry
            refs.write("5")  # over from the process that started this one
        return status_kib("VmRSS")

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
    peak = status_kib("VmHWM")
    print((peak - before) * 1024 / size, (peak - before) / 1024, time.process_time())
    """
).replace("import os, resource, sys", "import os, sys, time")


def measure(what: str, path: Path, size: int) -> float:
    """The peak memory growth of `what` on `path`, as a multiple of `size`."""
    return measure_absolute(what, path, size)[0]


def measure_absolute(what: str, path: Path, size: int) -> tuple[float, float, float]:
    """(multiple of `size`, MB, CPU seconds of the whole interpreter) for `what` on `path`."""
    run = subprocess.run(
        [sys.executable, "-c", MEASURE, what, str(path), str(size)],
        cwd=ROOT, capture_output=True, encoding="utf-8", check=True,
    )  # fmt: skip
    multiple, megabytes, seconds = map(float, run.stdout.split())
    return multiple, megabytes, seconds


def big_file_with_a_short_unterminated_tail(path: Path, size: int) -> None:
    """`size` bytes of records, then a 39-byte record without its newline (an editor's save)."""
    line = b'{"role":"user","content":"' + b"r" * 973 + b'"}\n'  # 1,000 bytes
    with path.open("wb") as file:
        block = line * 1024
        for _ in range(size // len(block)):
            file.write(block)
        file.write(b'{"role":"user","content":"no newline!"}')  # 39 bytes


def blank_lines(path: Path, size: int) -> None:
    """`size` bytes of blank lines, then one record."""
    with path.open("wb") as file:
        for _ in range(size >> 20):
            file.write(b"\n" * (1 << 20))
        file.write(b'{"role":"user","content":"x"}\n')


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
        torn.unlink()
        print(f"peak memory beyond the start, as a multiple of the data ({megabytes} MB):")
        for what, multiple in rows.items():
            print(f"  {what}: {multiple:.1f}x")
        big = folder / "big.jsonl"
        big_file_with_a_short_unterminated_tail(big, 4 * size)
        _, peak, _ = measure_absolute("append-after-unterminated", big, 39)
        print(
            f"  append after a 39-byte unterminated last line of {4 * megabytes} MB: {peak:.0f} MB"
        )
        big.unlink()
        blank = folder / "blank.jsonl"
        blank_lines(blank, size)
        _, peak, seconds = measure_absolute("load", blank, size)
        print(
            f"  load {megabytes} MB of blank lines (and one record): {peak:.0f} MB, {seconds:.1f} s"
        )


if __name__ == "__main__":
    main()
