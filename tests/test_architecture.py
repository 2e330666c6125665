"""Architecture rules (STYLE principles 1, 3, 11, 13), enforced on the source tree."""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).parents[1] / "src" / "parley"

# Layers point one way: a module may import its own layer or lower ones only.
LAYERS = {
    "model": 0,
    "protocol": 1,
    "wire": 2,
    "server": 3,
    "client": 3,
    "testing": 4,
    "asgi": 4,
    "grpc": 4,
    "cli": 5,
    "adapters": 5,
    "inspector": 5,
    "observability": 5,
}
# What the I/O-free core may import besides itself: no asyncio, sockets, files, HTTP.
CORE_ALLOWED = {
    "__future__",
    "abc",
    "base64",
    "binascii",
    "bisect",
    "collections",
    "dataclasses",
    "datetime",
    "enum",
    "functools",
    "hashlib",
    "hmac",
    "itertools",
    "math",
    "msgspec",
    "operator",
    "re",
    "string",
    "struct",
    "typing",
    "urllib.parse",
    "uuid",
    "zlib",
}


def modules() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        if "_pb" in path.parts or path.name.endswith("_pb2.py"):
            continue
        yield path, ast.parse(path.read_text(), str(path))


def imported(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def layer_of(path: Path) -> str:
    relative = path.relative_to(SRC).parts
    return relative[0] if len(relative) > 1 else ""


@pytest.mark.parametrize("layer", ["model", "protocol"])
def test_core_imports_no_io(layer: str) -> None:
    """STYLE 1: model and protocol import only the standard library's pure parts and msgspec."""
    for path, tree in modules():
        if layer_of(path) != layer:
            continue
        for name in imported(tree):
            top = name.split(".")[0]
            if top == "parley":
                continue
            assert top in CORE_ALLOWED or name in CORE_ALLOWED, (
                f"{path.relative_to(SRC)} imports {name}"
            )


UPWARD = {("server/agent.py", "parley.asgi.embedding")}
"""Imports against the layers, each with its reason: `Agent.asgi()` is the authoring API's
door to its HTTP binding (imported when called, and for typing)."""


def test_layers_point_one_way() -> None:
    for path, tree in modules():
        own = LAYERS.get(layer_of(path))
        if own is None:
            continue
        for name in imported(tree):
            parts = name.split(".")
            if parts[0] != "parley" or len(parts) < 2 or parts[1] not in LAYERS:
                continue
            if (path.relative_to(SRC).as_posix(), name) in UPWARD:
                continue
            assert LAYERS[parts[1]] <= own, f"{path.relative_to(SRC)} imports {name}"


VERSION_LITERAL = re.compile(r"(?<![\w.])(0\.3|1\.0)(\.\d+)?(?![\w.])")


def _docstrings(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for statement in body:
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    ids.add(id(statement.value))
    return ids


def test_version_literals_only_in_wire_and_negotiation() -> None:
    """STYLE 3: protocol versions are spelled only in wire/ and in negotiation."""
    for path, tree in modules():
        relative = path.relative_to(SRC)
        if relative.parts[0] == "wire" or relative == Path("protocol/negotiation.py"):
            continue
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and VERSION_LITERAL.search(node.value)
            ):
                raise AssertionError(f"{relative}:{node.lineno} spells a version: {node.value!r}")


def test_module_size_budget() -> None:
    """STYLE 13: no module over 400 lines unless its header says why."""
    for path, tree in modules():
        lines = path.read_text().count("\n")
        if lines > 400:
            header = ast.get_docstring(tree) or ""
            assert "400 lines" in header, f"{path.relative_to(SRC)} has {lines} lines"


def test_every_module_says_what_it_owns() -> None:
    """STYLE 17: every module opens with a docstring."""
    for path, tree in modules():
        if path.name == "__init__.py" and not path.read_text().strip():
            continue
        assert ast.get_docstring(tree), f"{path.relative_to(SRC)} has no docstring"


@pytest.mark.parametrize("package", ["parley", "parley.model"])
def test_curated_public_api(package: str) -> None:
    """STYLE 11: each package exports a curated, sorted `__all__` of names that exist."""
    module = importlib.import_module(package)
    names = module.__all__
    assert names == sorted(names)
    for name in names:
        assert hasattr(module, name), f"{package}.{name}"


def test_model_exports_every_model_class() -> None:
    m = importlib.import_module("parley.model")
    for path, tree in modules():
        if layer_of(path) != "model":
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                assert node.name in m.__all__, node.name
