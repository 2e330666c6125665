"""The delivery tests that concern the outbox run on each backend: memory, SQLite (a fresh
file) and PostgreSQL (a fresh schema), as the store contract suite does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.contracts.conftest import BACKENDS, _url


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL naming fresh, empty stores of each backend."""
    yield from _url(request.param, tmp_path)
