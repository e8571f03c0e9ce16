"""`make bench`: every benchmark in one run, printed as the Markdown of bench/README.md.

`python -m bench --quick` runs small sizes only, to check that the benchmark itself works.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

from .loading import LOAD_MESSAGES, loading_report
from .trimming import SIZES, trimming_report


def machine() -> str:
    cpu = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"- machine: {os.cpu_count()} cores (nproc), CPU {cpu}, "
        f"Python {platform.python_version()} on {platform.system()}\n"
        f"- load average when the run started: {load:.2f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    sizes = SIZES[:2] if args.quick else SIZES
    print(machine(), "\n", flush=True)
    print("## Trimming the context\n", flush=True)
    print(trimming_report(sizes, trials=30 if args.quick else 300), "\n", flush=True)
    print("## Loading and appending the session file\n", flush=True)
    print(loading_report(15_000 if args.quick else LOAD_MESSAGES), "\n", flush=True)
    print(f"Whole run: {time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
