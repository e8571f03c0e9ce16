from __future__ import annotations

import builtins
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

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
