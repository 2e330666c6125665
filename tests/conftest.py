"""Test-wide settings: Hypothesis runs deterministically (CI must not flake) and without
time limits per example (the machine may be loaded)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "parley",
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("parley")
