from __future__ import annotations

import os

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
