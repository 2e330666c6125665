"""The specification files in spec/ are unmodified copies of the upstream files."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

SPEC = Path(__file__).parents[1] / "spec"

SHA256 = {
    "a2a-v1.0.proto": "e195bf96ab630c69797851970203e1b2b6b19528f2e9803b7d904b91a5104016",
    "a2a-v0.3.proto": "012d8072227377f7e0d2dbafc13f85359c566bcb3bb5c2621d72e667b1eb3f40",
    "a2a-v0.3.schema.json": "97d6e2435336836cd1d41dffacf83a1a97902b62b826ef14ec5704db85c95f17",
}


@pytest.mark.parametrize(("name", "digest"), sorted(SHA256.items()))
def test_spec_file_is_the_upstream_copy(name: str, digest: str) -> None:
    assert hashlib.sha256((SPEC / name).read_bytes()).hexdigest() == digest
