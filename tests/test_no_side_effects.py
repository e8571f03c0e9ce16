"""A library call changes nothing outside itself (DESIGN v4; issue 24, item 1).

Loading leaves the cycle collector as the caller left it; importing the package registers
nothing; an append never swaps a signal handler (another thread watching sees the caller's
own the whole time); no at-fork hook is registered at all.
"""

from __future__ import annotations

import gc
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mini_agent import UserMessage, load_session
from mini_agent.json_form import JSON

ROOT = Path(__file__).resolve().parent.parent

PACKAGE = ROOT / "mini_agent"


@pytest.mark.parametrize("enabled", [True, False], ids=["collector-on", "collector-off"])
def test_a_load_leaves_the_collector_as_the_caller_left_it(tmp_path: Path, enabled: bool) -> None:
    from mini_agent import json_form

    path = tmp_path / "s.jsonl"
    path.write_text('{"role":"user","content":"x"}\n' * 3, encoding="utf-8")
    seen: list[bool] = []
    real_parse = json_form.parse

    def watching(text: str) -> JSON:
        seen.append(gc.isenabled())
        return real_parse(text)

    (gc.enable if enabled else gc.disable)()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("mini_agent.session.parse", watching)
            assert load_session(path) == [UserMessage("x")] * 3
        assert seen == [enabled] * 3 and gc.isenabled() is enabled
    finally:
        gc.enable()


def test_no_source_reaches_for_process_wide_switches_or_private_modules() -> None:
    # What v3 did and v4 forbids: `gc.disable()` around every load, the private `_signal`
    # module, handlers swapped on every append, an at-fork hook registered on import.
    forbidden = re.compile(
        r"gc\.(disable|freeze)\(|\b_signal\b|signal\.(signal|getsignal|pthread_sigmask)\("
    )
    for source in PACKAGE.rglob("*.py"):
        text = source.read_text(encoding="utf-8")
        assert not forbidden.search(text), (source, forbidden.search(text))
        assert "register_at_fork" not in text, source  # v5: no at-fork hook (a stated limit)


IMPORT_AND_APPEND = textwrap.dedent(
    """
    import json, os, signal, sys, threading
    hooks = []
    real = getattr(os, "register_at_fork", None)  # Windows has no fork
    def counting(**kwargs):
        hooks.append(sorted(kwargs))
        real(**kwargs)
    if real is not None:
        os.register_at_fork = counting
    import mini_agent
    after_import = len(hooks)
    from mini_agent import UserMessage, append_session, load_session

    def mine(signum, frame):
        raise KeyboardInterrupt
    others = [signal.SIGTERM, *([signal.SIGUSR1] if hasattr(signal, "SIGUSR1") else [])]
    handlers = {s: signal.getsignal(s) for s in others}
    signal.signal(signal.SIGINT, mine)
    seen, stop = set(), threading.Event()
    def watch():  # another thread looks at the handlers all the while
        while not stop.is_set():
            seen.add(signal.getsignal(signal.SIGINT) is mine)
            for number, handler in handlers.items():
                seen.add(signal.getsignal(number) is handler)
    # the appender waits at most 0.1 ms for the interpreter, not 5 ms a time for the spinning
    # watcher: 1,000 appends in well under a second here rather than 15 s (more under Wine);
    # v3's swap on every append is still seen
    sys.setswitchinterval(1e-4)
    watcher = threading.Thread(target=watch)
    watcher.start()
    for n in range(1000):
        append_session(sys.argv[1], UserMessage(str(n)))
    loaded = len(load_session(sys.argv[1]))
    stop.set()
    watcher.join()
    print(json.dumps({"after_import": after_import, "hooks": hooks, "seen": sorted(seen),
                      "loaded": loaded}))
    """
)


def test_importing_registers_nothing_and_an_append_swaps_no_handler(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", IMPORT_AND_APPEND, str(tmp_path / "s.jsonl")],
        cwd=ROOT, capture_output=True, encoding="utf-8", timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["after_import"] == 0 and report["hooks"] == []  # no at-fork hook at all (v5)
    assert report["seen"] == [True]  # every look, by the other thread, saw the caller's handlers
    assert report["loaded"] == 1000
