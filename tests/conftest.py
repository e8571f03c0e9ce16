from __future__ import annotations

import builtins
import errno
import os
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from .loopback_server import KEY, KEY_ENV, LoopbackModelServer, Reply

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
def deny(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path, int], None]]:
    """`deny(path, mode)`: chmod the file; as root, whom the kernel lets through, make
    `open` refuse what the mode bits refuse a non-root owner (the tests run as root in CI)."""
    real_open, real_os_open = builtins.open, os.open

    def deny(path: Path, mode: int) -> None:
        path.chmod(mode)
        if os.geteuid() != 0:
            return  # the kernel refuses by itself

        def check(file: object, reading: bool, writing: bool) -> None:
            refused = (reading and not mode & stat.S_IRUSR) or (writing and not mode & stat.S_IWUSR)
            if refused and isinstance(file, (str, os.PathLike)) and Path(file) == path:
                raise PermissionError(errno.EACCES, "Permission denied", str(file))

        def simulated_open(file: Any, open_mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            check(file, "r" in open_mode or "+" in open_mode, any(c in open_mode for c in "wax+"))
            return real_open(file, open_mode, *args, **kwargs)

        def simulated_os_open(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            access = flags & os.O_ACCMODE
            check(file, access != os.O_WRONLY, access != os.O_RDONLY)
            return real_os_open(file, flags, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", simulated_open)
        monkeypatch.setattr(os, "open", simulated_os_open)

    yield deny
