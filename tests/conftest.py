from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
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
