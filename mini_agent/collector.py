"""Beyond the chapter: pausing Python's cycle collector while a session file is parsed.

A parsed session holds no reference cycles, yet every batch of new objects starts a collection
pass, and the growing result makes some of them full passes over everything loaded so far:
about a third of a large load (bench/README.md). The switch is process-wide — every thread
feels it while it lasts — so it has a name that says so and lasts only for the parse.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def cycle_collector_paused() -> Iterator[None]:
    """Disable `gc` for the whole process inside the block; restore the caller's setting after
    (an error too). Two threads pausing at once leave it as the first one found it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
