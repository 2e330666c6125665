"""Test-wide settings: Hypothesis runs deterministically (CI must not flake) and without
time limits per example (the machine may be loaded); the official SDK's client imported
before its server (see below)."""

from __future__ import annotations

# The official SDK's client factory imports its 0.3 gRPC transport inside a try/except
# ImportError. When the SDK's server routes are imported first, that import hits a circular
# import and the factory silently loses 0.3 over gRPC (it then speaks 1.0 to a 0.3 card).
# Importing the client factory first, once, gives every test the real factory.
import a2a.client.client_factory  # noqa: F401
from hypothesis import HealthCheck, settings

settings.register_profile(
    "parley",
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("parley")
