"""Real faults, each a bounded trial: shared by tests/test_faults.py (few) and tests/soak (many).

Nothing here is mocked: a size-limited tmpfs or RLIMIT_FSIZE fills the disk, SIGKILL stops
appender processes mid-write, other processes append multi-MB records while loads race them.
Each trial checks the promises itself and raises `AssertionError` with what it saw.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from mini_agent import Message, SessionFormatError, UserMessage, append_session, load_session
from mini_agent.repair import repair_session

from .helpers import HARD_KILL, KILLED_STATUS

ROOT = Path(__file__).resolve().parent.parent
PAGE = 4096


# --- a small disk ---------------------------------------------------------------------------------


class MountRefused(Exception):
    """This machine will not mount a tmpfs for us (not root, or a container without the right)."""


@contextlib.contextmanager
def small_tmpfs(folder: Path, size: int) -> Iterator[Path]:
    """A tmpfs of `size` bytes mounted on `folder` for the block's duration."""
    folder.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)],
        capture_output=True,
        encoding="utf-8",
    )
    if mounted.returncode != 0:
        raise MountRefused(
            f"mount -t tmpfs refused: {mounted.stderr.strip() or mounted.returncode}"
        )
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


@contextlib.contextmanager
def ext4_on_a_full_device(
    folder: Path, *, journal: bool
) -> Iterator[tuple[Path, Callable[[bool], None]]]:
    """An ext4 file system on a loop device whose backing file lives on a small tmpfs:
    yields its mount point and `fill`, which fills the tmpfs, so that writes the file system
    accepted into its cache fail when written back — at `fsync`, or silently; `fill(False)`
    frees it again. Unmounted (see `remount_loop`), what never reached the device is gone,
    as after a crash. Needs root, `mkfs.ext4` and a free loop device (`MountRefused` otherwise)."""
    back, mount = folder / "backing", folder / "ext4"
    image = back / "image"
    with small_tmpfs(back, 6 << 20):
        with image.open("wb") as file:  # sparse: only what ext4 writes takes tmpfs pages
            file.truncate(64 << 20)
        options = [] if journal else ["-O", "^has_journal"]
        made = subprocess.run(
            ["mkfs.ext4", "-q", "-F", *options, str(image)], capture_output=True, encoding="utf-8"
        )
        if made.returncode != 0:
            raise MountRefused(f"mkfs.ext4 failed: {made.stderr.strip() or made.returncode}")
        mount.mkdir(exist_ok=True)
        mounted = subprocess.run(
            ["mount", "-o", "loop", str(image), str(mount)], capture_output=True, encoding="utf-8"
        )
        if mounted.returncode != 0:
            raise MountRefused(f"mount -o loop refused: {mounted.stderr.strip()}")
        try:
            yield (
                mount,
                lambda full: fill(back / "filler", 0) if full else (back / "filler").unlink(),
            )
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True)


def remount_loop(mount: Path) -> None:
    """Unmount and mount again the loop file system at `mount` (what a reboot would find)."""
    source = subprocess.run(
        ["findmnt", "-n", "-o", "SOURCE", str(mount)],
        capture_output=True,
        encoding="utf-8",
        check=True,
    ).stdout.strip()
    image = subprocess.run(
        ["losetup", "-n", "-O", "BACK-FILE", source],
        capture_output=True,
        encoding="utf-8",
        check=True,
    ).stdout.strip()
    subprocess.run(["umount", str(mount)], capture_output=True)  # write-back errors: expected
    subprocess.run(["mount", "-o", "loop", image, str(mount)], check=True)


def fill(filler: Path, leave: int) -> None:
    """Fill the disk holding `filler` to the last byte, then free about `leave` bytes."""
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for chunk in (b"f" * 65536, b"f" * PAGE, b"f"):
            with contextlib.suppress(OSError):
                for _ in range(1 << 20):  # bounded: a few hundred chunks fill the small disk
                    os.write(fd, chunk)
        size = os.fstat(fd).st_size
        os.ftruncate(fd, max(0, size - leave))
    finally:
        os.close(fd)


@dataclass
class Tally:
    """What a run of trials saw; every field a count."""

    trials: int = 0
    refused: int = 0  # the write failed with ENOSPC/EFBIG and the file was left as it was
    fitted: int = 0  # the record fitted after all, and loads back
    torn: int = 0  # a torn last line found (killed mid-write), cut by repair
    killed: int = 0
    acknowledged: int = 0
    lost: int = 0
    glued: int = 0
    loads: int = 0
    leaked: int = 0  # an fd left open on the session after a Ctrl-C
    locked: int = 0  # ... and holding its lock
    phantoms: int = 0  # an append raised, unmarked, yet its record is in the file
    marked: int = 0  # an append raised marked `written_anyway`, and its record is there
    doubled: int = 0  # a tool call with two results (on disk or in memory)
    unequal: int = 0  # memory and disk differ after an interrupted run
    later: int = 0  # a Ctrl-C that came after the trial's first append had returned
    peak_mb: int = 0  # the largest growth of peak memory measured (MB)
    errors: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)


def enospc_trials(disk: Path, trials: int, rng: random.Random) -> Tally:
    """Appends cut off by a full disk: refused whole, or fitted whole; a first append leaves
    no file. `disk` is a small, empty tmpfs."""
    tally = Tally()
    path, filler = disk / "s.jsonl", disk / "filler"
    history: list[Message] = [
        UserMessage(f"message {n} " + "h" * rng.randint(0, 2000)) for n in range(8)
    ]
    for message in history:
        append_session(path, message)
    for trial in range(trials):
        before = path.read_bytes()
        fill(filler, rng.randint(0, 16 * PAGE))
        record = UserMessage(f"trial {trial} " + "r" * rng.randint(1, 40 * PAGE))
        new = disk / f"new-{trial}.jsonl"
        tally.trials += 1
        try:
            append_session(path, record)
        except OSError as err:
            assert err.errno == errno.ENOSPC, err
            assert path.read_bytes() == before, "a refused append changed the file"
            tally.refused += 1
        else:
            history.append(record)
            tally.fitted += 1
        fill(filler, 0)
        with contextlib.suppress(OSError):  # the disk is full: a first append must leave nothing
            append_session(new, record)
        assert not new.exists() or load_session(new) == [record], (
            "a failed first append left a file"
        )
        with contextlib.suppress(FileNotFoundError):
            new.unlink()
        filler.unlink()
        assert load_session(path) == history
    return tally


RLIMIT_TRIALS = textwrap.dedent(
    """
    import errno, os, random, resource, signal, sys
    from mini_agent import UserMessage, append_session, load_session
    path, trials, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(seed)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death
    unlimited = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
    refused = 0
    append_session(path, UserMessage("before the limit"))
    for trial in range(trials):
        new = f"{path}.new{trial}"
        size = os.path.getsize(path)
        before = open(path, "rb").read()
        record = UserMessage(f"trial {trial} " + "r" * rng.randint(1, 200_000))
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + rng.randint(0, 100_000), unlimited))
        try:
            append_session(path, record)
        except OSError as err:
            assert err.errno == errno.EFBIG, err
            assert open(path, "rb").read() == before
            refused += 1
        resource.setrlimit(resource.RLIMIT_FSIZE, (rng.randint(0, 4096), unlimited))
        try:
            append_session(new, UserMessage("x" * 8192))  # a first append that cannot fit
        except OSError as err:
            assert err.errno == errno.EFBIG and not os.path.exists(new), "left a file behind"
        resource.setrlimit(resource.RLIMIT_FSIZE, (unlimited, unlimited))
        if os.path.exists(new):
            os.unlink(new)
        load_session(path)
    print(refused)
    """
)


def rlimit_trials(folder: Path, trials: int, seed: int) -> Tally:
    """Appends cut off by RLIMIT_FSIZE (EFBIG, no mount needed), in a child process."""
    run = subprocess.run(
        [sys.executable, "-c", RLIMIT_TRIALS, str(folder / "s.jsonl"), str(trials), str(seed)],
        cwd=ROOT,
        capture_output=True,
        encoding="utf-8",
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    refused = int(run.stdout)
    return Tally(trials=trials, refused=refused, fitted=trials - refused)


# --- appenders killed mid-write ------------------------------------------------------------------

APPENDER = textwrap.dedent(
    """
    import random, sys
    from mini_agent import SessionFormatError, UserMessage, append_session
    path, writer, seed, low, high = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
    rng = random.Random(seed)
    for number in range(1_000_000):
        try:
            append_session(path, UserMessage(f"{writer}:{number}:" + "k" * rng.randint(low, high)))
        except SessionFormatError:
            sys.exit(3)  # another appender was killed mid-record: its torn line stays last
        print(number, flush=True)  # acknowledged: append_session returned
    """
)


def _read_acks(stream: object, into: list[int]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        if line.endswith("\n"):
            into.append(int(line))


def kill_round(
    path: Path, name: str, writers: int, rng: random.Random, sizes: tuple[int, int]
) -> Tally:
    """Start `writers` appenders on `path`, SIGKILL each at a random moment, then check that
    every acknowledged record is there, in order, none glued, any torn tail last and cut."""
    tally = Tally(trials=1)
    processes, acks, readers = [], [], []
    for writer in range(writers):
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                APPENDER,
                str(path),
                f"{name}w{writer}",
                str(rng.randrange(1 << 30)),
                str(sizes[0]),
                str(sizes[1]),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            encoding="utf-8",
        )
        acked: list[int] = []
        reader = threading.Thread(target=_read_acks, args=(process.stdout, acked))
        reader.start()
        processes.append(process)
        acks.append(acked)
        readers.append(reader)
    deadline = time.monotonic() + 20
    for process, acked in zip(processes, acks, strict=True):
        wanted = rng.randint(0, 6)  # let it acknowledge a few records (bounded wait), then kill
        while len(acked) < wanted and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.02))
        process.send_signal(HARD_KILL)
    for process, reader in zip(processes, readers, strict=True):
        process.wait(timeout=30)
        reader.join(timeout=30)
        tally.killed += process.returncode == KILLED_STATUS
    _check_after_kills(path, [f"{name}w{writer}" for writer in range(writers)], acks, tally)
    return tally


def _check_after_kills(path: Path, names: list[str], acks: list[list[int]], tally: Tally) -> None:
    if not path.exists():
        messages: list[Message] = []
    else:
        data = path.read_bytes()
        try:
            messages = load_session(path)
        except SessionFormatError as err:
            last = data.count(b"\n") + 1
            if err.line != last or data.endswith(b"\n"):
                tally.glued += 1  # damage before the last line: a glued or interleaved record
                tally.errors.append(str(err))
                return
            report = repair_session(path)
            assert report.repaired, report.summary()
            tally.torn += 1
            messages = load_session(path)
    for name, acked in zip(names, acks, strict=True):
        numbers = [
            int(m.content.split(":")[1]) for m in messages if m.content.startswith(f"{name}:")
        ]
        tally.acknowledged += len(acked)
        if numbers != list(range(len(numbers))):
            tally.errors.append(f"{name}: records out of order or repeated")
        lost = len(acked) - len(numbers)
        if lost > 0:
            tally.lost += lost
        elif lost < -1:  # at most the one record whose acknowledgement the kill cut off
            tally.errors.append(f"{name}: {-lost} records nobody wrote")


# --- loads racing appends of multi-MB records -----------------------------------------------------

BIG_APPENDER = textwrap.dedent(
    """
    import os, random, sys
    from mini_agent import UserMessage, append_session, store
    path, stop, seed, low, high, cap = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:7])
    rng = random.Random(seed)
    for number in range(1_000_000):
        if os.path.exists(stop):
            break
        append_session(path, UserMessage(f"{number}:" + "m" * rng.randint(low, high)))
        if os.path.getsize(path) > cap:  # start over, as a cooperating writer: under the lock
            with store.open_locked(path, write=True) as file:
                os.ftruncate(file.fileno(), 0)
    print(number)
    """
)


def racing_loads(
    folder: Path, loads: int, seconds: float, sizes: tuple[int, int], seed: int, appenders: int = 1
) -> Tally:
    """Load in a loop while other processes append records of `sizes` bytes: every load must
    succeed (no torn line seen while a write is in progress). `trials` counts the loads that
    returned at least one such record (a load of the file just emptied proves nothing), up
    to `loads`; bounded in time too. The appenders empty the file past two records' size."""
    path, stop = folder / "race.jsonl", folder / "stop"
    append_session(path, UserMessage("start"))
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                BIG_APPENDER,
                str(path),
                str(stop),
                str(seed + n),
                str(sizes[0]),
                str(sizes[1]),
                str(sizes[1]),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            encoding="utf-8",
        )
        for n in range(appenders)
    ]
    tally = Tally()
    deadline = time.monotonic() + seconds
    try:
        while tally.trials < loads and time.monotonic() < deadline:
            try:
                messages = load_session(path)
            except SessionFormatError as err:
                tally.errors.append(str(err)[:200])
                messages = []
            tally.loads += 1
            tally.trials += any(len(message.content) >= sizes[0] for message in messages)
    finally:
        stop.touch()
        for process in processes:
            out, _ = process.communicate(timeout=120)
            assert process.returncode == 0, process.returncode
            tally.acknowledged += int(out)
    return tally


def concurrent_appends(folder: Path, writers: int, count: int) -> Tally:
    """`writers` processes append `count` records each, at once: none lost, none glued."""
    path, start = folder / "many.jsonl", folder / "start"
    script = textwrap.dedent(
        """
        import os, sys, time
        from mini_agent import UserMessage, append_session
        path, writer, count, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
        for _ in range(10_000):
            if os.path.exists(start):
                break
            time.sleep(0.001)
        for number in range(count):
            padding = "x" * ((number * 7919) % 65536 if number % 10 == 0 else number % 50)
            append_session(path, UserMessage(f"{writer}:{number}:{padding}"))
        """
    )
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), f"w{w}", str(count), str(start)], cwd=ROOT
        )
        for w in range(writers)
    ]
    start.touch()
    codes = [process.wait(timeout=1800) for process in processes]
    assert codes == [0] * writers, codes
    tally = Tally(trials=writers * count, acknowledged=writers * count)
    raw = path.read_bytes()
    tally.glued += raw.count(b"\n\n") + (not raw.endswith(b"\n"))
    messages = load_session(path)
    for w in range(writers):
        numbers = [int(m.content.split(":")[1]) for m in messages if m.content.startswith(f"w{w}:")]
        tally.lost += count - len(numbers)
        if numbers != list(range(count)):
            tally.errors.append(f"w{w}: out of order or lost")
    return tally


# --- Ctrl-C landing anywhere in an append, with other threads using the package -------------------

SIGINT_TRIALS = textwrap.dedent(
    """
    import fcntl, json, os, random, signal, sys, threading, time
    from mini_agent import SessionFormatError, UserMessage, append_session, load_session
    folder, trials, helpers, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job inherits SIG_IGN
    rng = random.Random(seed)
    path = os.path.join(folder, "main.jsonl")
    stop = threading.Event()

    def helper(number):  # other threads append to files of their own all the while
        own = os.path.join(folder, f"helper{number}.jsonl")
        count = 0
        while not stop.is_set():
            append_session(own, UserMessage(f"h{number}:{count}"))
            count += 1
            if count % 200 == 0:
                os.unlink(own)

    def fds_on(name):
        inode = os.stat(name).st_ino
        found = []
        for entry in os.listdir("/proc/self/fd"):
            try:
                if os.stat(f"/proc/self/fd/{entry}").st_ino == inode:
                    found.append(entry)
            except OSError:
                pass
        return found

    def lock_is_free(name):
        fd = os.open(name, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(fd)

    threads = [threading.Thread(target=helper, args=(n,), daemon=True) for n in range(helpers)]
    for thread in threads:
        thread.start()
    tally = {"trials": 0, "interrupted": 0, "leaked": 0, "locked": 0, "errors": []}
    appended = 0
    for trial in range(trials):
        delay = rng.uniform(0, 0.003)
        killer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
        tally["trials"] += 1
        try:
            killer.start()
            for _ in range(2_000):  # until the Ctrl-C lands (bounded)
                append_session(path, UserMessage(f"m:{appended}:" + "x" * rng.randint(0, 70_000)))
                appended += 1
            tally["errors"].append("the Ctrl-C never came")
        except KeyboardInterrupt:
            tally["interrupted"] += 1
        killer.join()
        if os.path.exists(path):
            leaked = fds_on(path)
            tally["leaked"] += bool(leaked)
            if not lock_is_free(path):
                tally["locked"] += 1
                for fd in leaked:  # free it, so that the next trials can run at all
                    os.close(int(fd))
            if trial % 25 == 0:
                try:
                    load_session(path)
                except SessionFormatError as err:
                    tally["errors"].append(str(err)[:200])
                os.unlink(path)
    stop.set()
    for thread in threads:
        thread.join(30)
    print(json.dumps(tally))
    """
)


def sigint_trials(folder: Path, trials: int, helpers: int, seed: int) -> Tally:
    """Ctrl-C (a real SIGINT) at random moments of a main thread's appends while `helpers`
    threads append too: after each, no fd on the session is left open and its lock is free."""
    return signal_trials(SIGINT_TRIALS, folder, trials, helpers, seed)


def signal_trials(script: str, *arguments: object) -> Tally:
    """Run one of the Ctrl-C scripts in a fresh interpreter; the tally it prints, as a Tally
    (its "interrupted" count is the trials the Ctrl-C reached: `refused`)."""
    run = subprocess.run(
        [sys.executable, "-c", script, *map(str, arguments)],
        cwd=ROOT, capture_output=True, encoding="utf-8", timeout=900,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout)
    seen["refused"] = seen.pop("interrupted")
    return Tally(**seen)


# --- one outcome per append: raised means not in the file (issue 25) ------------------------------

CTRL_C_OUTCOMES = textwrap.dedent(
    """
    import json, os, random, signal, sys, threading, time
    from mini_agent import UserMessage, append_session, load_session
    from mini_agent.store import written_anyway
    folder, trials, fsync, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4])
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job inherits SIG_IGN
    rng = random.Random(seed)
    tally = {"trials": 0, "interrupted": 0, "phantoms": 0, "marked": 0, "later": 0, "errors": []}
    path = os.path.join(folder, "outcomes.jsonl")
    # The Ctrl-C is armed after 0 to 4 appends of the trial and lands within a few appends'
    # time of this disk. A timer armed before the first append (v1 of this test) measured wall
    # time, not progress: on a loaded CI machine the main thread got so little of it that a
    # Ctrl-C came inside the first append in half the trials, or in every one on a slow disk,
    # and a trial without a record cannot fail. Armed by progress, 4 in 5 trials have records
    # before the Ctrl-C whatever the load ("later" counts them).
    began = time.perf_counter()
    for _ in range(20):
        append_session(path, UserMessage("calibrate " + "x" * 100), fsync=fsync)
    window = max(0.002, 4 * (time.perf_counter() - began) / 20)
    os.unlink(path)
    for trial in range(trials):
        tally["trials"] += 1
        armed_after = rng.randint(0, 4)
        killer = threading.Timer(rng.uniform(0, window), os.kill, (os.getpid(), signal.SIGINT))
        sent = None
        done = 0
        try:
            for number in range(100_000):  # small records, as most of a session's are
                if number == armed_after:
                    killer.start()
                sent = UserMessage(f"t{trial}:{number}:" + "x" * rng.randint(0, 200))
                append_session(path, sent, fsync=fsync)
                sent = None
                done += 1
            tally["errors"].append("the Ctrl-C never came")
        except KeyboardInterrupt as error:
            tally["interrupted"] += 1
            tally["later"] += done > 0
            there = load_session(path)[-1:] == [sent]
            if there and written_anyway(error):
                tally["marked"] += 1
            elif there:
                tally["phantoms"] += 1
            elif written_anyway(error):
                tally["errors"].append("marked as written, yet not in the file")
        killer.join()
        if trial % 50 == 49 and os.path.exists(path):
            os.unlink(path)
    print(json.dumps(tally))
    """
)


def ctrl_c_outcomes(folder: Path, trials: int, fsync: bool, seed: int) -> Tally:
    """A real SIGINT at a random moment of small appends: an append that raised has its record
    in the file only when the exception is marked `written_anyway` (0 phantoms)."""
    return signal_trials(CTRL_C_OUTCOMES, folder, trials, int(fsync), seed)


CTRL_C_IN_RUN_AGENT = textwrap.dedent(
    """
    import json, os, random, signal, sys, threading, time
    from collections import Counter
    from mini_agent import (AssistantMessage, ScriptedClient, Tool, ToolCall, ToolMessage,
                            load_session, run_agent)
    folder, trials, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rng = random.Random(seed)

    def slow(value):  # a tool: a little work, so that a Ctrl-C can land inside it too
        end = time.perf_counter() + rng.uniform(0, 0.00005)
        while time.perf_counter() < end:
            pass
        return "done " + json.dumps(value)

    tools = [Tool("work", "does a little work", slow)]

    def turns(attempt):  # 40 steps of three calls each, every call id new
        steps = [AssistantMessage(f"step {n}", tuple(
            ToolCall(f"a{attempt}_c{n}_{k}", "work", {"k": k}) for k in range(3)))
            for n in range(40)]
        return [*steps, AssistantMessage("all done")]

    def results_per_call(messages):
        counts = Counter(m.tool_call_id for m in messages if isinstance(m, ToolMessage))
        calls = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
        return counts, calls

    tally = {"trials": 0, "interrupted": 0, "doubled": 0, "unequal": 0, "errors": []}
    for trial in range(trials):
        tally["trials"] += 1
        path = os.path.join(folder, f"run{trial}.jsonl")
        killer = threading.Timer(rng.uniform(0, 0.02), os.kill, (os.getpid(), signal.SIGINT))
        memory = None
        try:
            killer.start()
            for attempt in range(1_000):  # until the Ctrl-C lands (bounded)
                run_agent(f"go {attempt}", client=ScriptedClient(turns(attempt)), tools=tools,
                          session_path=path, max_turns=60)
            tally["errors"].append("the Ctrl-C never came")
        except KeyboardInterrupt as error:
            tally["interrupted"] += 1
            traceback = error.__traceback__
            while traceback is not None:  # run_agent's frame holds what was in memory
                if traceback.tb_frame.f_code.co_name == "run_agent":
                    memory = traceback.tb_frame.f_locals.get("messages")
                traceback = traceback.tb_next
            del error, traceback
        killer.join()
        disk = load_session(path)
        if memory is not None and list(memory) != disk:
            tally["unequal"] += 1
        counts, _ = results_per_call(disk)
        if any(n > 1 for n in counts.values()):
            tally["doubled"] += 1
            tally["errors"].append(f"trial {trial}: doubled on disk: " + "; ".join(
                f"{m.role} {getattr(m, 'tool_call_id', '')} {m.content[:40]}" for m in disk[-8:]))
        resumed = run_agent("go on", client=ScriptedClient([AssistantMessage("ok")]),
                            session_path=path)  # the next run closes what is still open
        counts, calls = results_per_call(resumed.messages)
        if sorted(counts) != sorted(calls) or any(n != 1 for n in counts.values()):
            tally["errors"].append(f"trial {trial}: results per call {dict(counts)}")
        os.unlink(path)
    print(json.dumps(tally))
    """
)


def ctrl_c_in_run_agent(folder: Path, trials: int, seed: int) -> Tally:
    """A real SIGINT at a random moment of a scripted multi-tool run: no call id ever has two
    results, on disk or in memory; memory equals disk; the next run leaves exactly one each."""
    return signal_trials(CTRL_C_IN_RUN_AGENT, folder, trials, seed)


def hard_link_trials(folder: Path, trials: int) -> Tally:
    """Appends to a session whose file has a second name: every one refused, the file kept."""
    from mini_agent import UserMessage, append_session
    from mini_agent.store import HardLinkRefusedError

    tally = Tally()
    for trial in range(trials):
        victim, link = folder / f"rc{trial}", folder / f"h{trial}.jsonl"
        victim.write_bytes(b"alias ls='ls -F'\n")
        os.link(victim, link)
        tally.trials += 1
        try:
            append_session(link, UserMessage("prompt"))
        except HardLinkRefusedError:
            tally.refused += 1
        if victim.read_bytes() != b"alias ls='ls -F'\n":
            tally.lost += 1
            tally.errors.append(f"trial {trial}: the other file changed")
        victim.unlink()
        link.unlink()
    return tally


def unterminated_tail_memory(folder: Path, size: int) -> Tally:
    """The peak memory of an append after a 39-byte unterminated last line of `size` bytes."""
    from .soak.memory import big_file_with_a_short_unterminated_tail, measure_absolute

    big = folder / "big.jsonl"
    big_file_with_a_short_unterminated_tail(big, size)
    try:
        _, peak_mb, _ = measure_absolute("append-after-unterminated", big, 39)
    finally:
        big.unlink()
    return Tally(trials=1, peak_mb=round(peak_mb))
