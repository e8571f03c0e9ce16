from __future__ import annotations

import ctypes
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from .loopback_server import KEY, KEY_ENV, LoopbackModelServer, Reply

# pytester: tests/test_kit.py runs pytest in-process on a made-up test file; tests.platforms:
# `@posix_only(reason)`, skipped and counted on Windows; tests.timings writes the times the
# browser tests measured to docs/timings.json when a run is over; tests.regenerate_hint:
# a stale notebook output's failure names `python kit.py regenerate`
pytest_plugins = ["pytester", "tests.platforms", "tests.timings", "tests.regenerate_hint"]

# CI runs more examples, derandomised so a red build can be replayed; locally, the default.
settings.register_profile(
    "ci",
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# Every Python the tests start writes UTF-8 to its pipes, which the tests read as UTF-8
# (`encoding="utf-8"`, never the locale's guess): the same bytes on Linux, macOS and a Windows
# code page. What a real GBK console does is tests/test_gbk_locale.py's job.
os.environ["PYTHONIOENCODING"] = "utf-8"


# Live-model tests: a loopback server, and nothing else on the network.


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy, a test key, and a socket that refuses any address but 127.0.0.1."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv(KEY_ENV, KEY)
    connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> None:
        assert address[0] == "127.0.0.1", f"test traffic to {address[0]}"
        connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture
def serve() -> Iterator[Callable[..., LoopbackModelServer]]:
    """Start a loopback server per call; every one is stopped and joined after the test."""
    servers: list[LoopbackModelServer] = []

    def start(*replies: Reply) -> LoopbackModelServer:
        server = LoopbackModelServer(replies).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)
    assert all(server.stopped for server in servers)


@pytest.fixture
def deny() -> Iterator[Callable[[Path, int], None]]:
    """`deny(path, mode)`: chmod the file, and let the kernel enforce it on this test.

    The tests run as root, whom mode bits do not stop; so, for this test only, the thread
    gives up the capabilities that bypass them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) and
    is refused as the file's unprivileged owner would be — a real EACCES, not a fake `open`.
    """
    dropped = False

    def deny(path: Path, mode: int) -> None:
        nonlocal dropped
        path.chmod(mode)
        if hasattr(os, "geteuid") and os.geteuid() == 0 and not dropped:  # not on Windows
            _set_dac_override(False)
            dropped = True

    yield deny
    if dropped:
        _set_dac_override(True)


_CAP_VERSION_3 = 0x20080522
_DAC_CAPABILITIES = (1 << 1) | (1 << 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _set_dac_override(on: bool) -> None:
    """Raise or lower the calling thread's effective DAC capabilities (Linux `capset`)."""
    libc = ctypes.CDLL(None, use_errno=True)
    data = (_CapData * 2)()
    if libc.capget(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    if on:
        data[0].effective |= _DAC_CAPABILITIES & data[0].permitted
    else:
        data[0].effective &= ~_DAC_CAPABILITIES
    if libc.capset(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")
