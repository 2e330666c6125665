"""Architecture rules of STYLE.md, each its own test over the source tree.

Each rule is a small pure checker over an import graph (or parsed modules) that returns
its violations; one test runs it on `src/parley`, a second plants a violation and shows
it is caught. Departures from a rule are allow-list entries here, each with its reason.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from parley.protocol.negotiation import Version

SRC = Path(__file__).parents[1] / "src" / "parley"


# -- the graph ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """One parsed module: `name` is dotted (`parley.server.proxy`; a package's
    `__init__` is the package's name)."""

    name: str
    text: str
    tree: ast.Module


@dataclass(frozen=True)
class Import:
    """`importer` imports `target` at `line`. `target` is the module, or for
    `from m import x` the dotted `m.x` (a submodule or a name: both live under `m`)."""

    importer: str
    target: str
    line: int


def sources(root: Path) -> list[Source]:
    """Every module of the package at `root` (generated protobuf code left out)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root.parent).with_suffix("")
        if "_pb" in relative.parts or relative.name.endswith(("_pb2", "_pb2_grpc")):
            continue
        parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
        text = path.read_text()
        found.append(Source(".".join(parts), text, ast.parse(text, str(path))))
    return found


def imports(source: Source, is_package: bool = False) -> Iterator[Import]:
    """What `source` imports, anywhere in it (typing-only and deferred imports too:
    they tie the layers as much as any)."""
    package = source.name if is_package else source.name.rpartition(".")[0]
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(source.name, alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                target = base if alias.name == "*" else f"{base}.{alias.name}"
                yield Import(source.name, target, node.lineno)


def graph(root: Path) -> list[Import]:
    packages = {".".join(p.relative_to(root.parent).parts[:-1]) for p in root.rglob("__init__.py")}
    return [edge for s in sources(root) for edge in imports(s, s.name in packages)]


def layer_of(module: str, layers: Mapping[str, int]) -> str:
    """The top-level package of a `parley.*` module ("" for the root module)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in layers else ""


def _allowed(edge: Import, entries: Iterable[tuple[str, str]]) -> bool:
    return any(
        edge.importer == importer and (edge.target + ".").startswith(target + ".")
        for importer, target in entries
    )


def _show(edge: Import) -> str:
    return f"{edge.importer}:{edge.line} imports {edge.target}"


# -- the rules, as pure checkers ------------------------------------------------------


def layer_violations(
    edges: Iterable[Import],
    layers: Mapping[str, int],
    package: str,
    exceptions: Iterable[tuple[str, str]] = (),
) -> list[str]:
    """STYLE 1: `package` imports itself or strictly lower layers only (a layer's
    siblings are not below it). `exceptions` are (importer, target prefix) pairs."""
    found = []
    for edge in edges:
        if layer_of(edge.importer, layers) != package or not edge.target.startswith("parley."):
            continue
        if edge.target in NEUTRAL or _allowed(edge, exceptions):
            continue
        target = layer_of(edge.target, layers)
        if target != package and layers[target] >= layers[package]:
            found.append(f"{_show(edge)} (layer {layers[target]} from {layers[package]})")
    return found


def forbidden_imports(
    edges: Iterable[Import], importer: str, forbidden: Iterable[str]
) -> list[str]:
    """Every import from package `importer` into any of the `forbidden` packages."""
    prefixes = tuple(f"parley.{name}." for name in forbidden)
    own = f"parley.{importer}."
    return [
        _show(edge)
        for edge in edges
        if (edge.importer + ".").startswith(own) and (edge.target + ".").startswith(prefixes)
    ]


def unlayered(packages: Iterable[str], layers: Mapping[str, int]) -> list[str]:
    """Packages that have no layer (and so no rule)."""
    return sorted(set(packages) - set(layers))


def core_io_violations(
    edges: Iterable[Import], core: Iterable[str], allowed: Iterable[str]
) -> list[str]:
    """STYLE 1: the core imports Parley's core and the pure parts of the standard
    library (and msgspec) only."""
    allowed = set(allowed)
    own = tuple(f"parley.{name}." for name in core)
    found = []
    for edge in edges:
        if not (edge.importer + ".").startswith(own):
            continue
        module = edge.target.rpartition(".")[0] if edge.target.count(".") else edge.target
        if edge.target.split(".")[0] == "parley":
            continue
        if not ({edge.target, module, edge.target.split(".")[0]} & allowed):
            found.append(_show(edge))
    return found


def version_pattern(versions: Iterable[str]) -> re.Pattern[str]:
    """A protocol version as a word: `1.0`, `1.0.2`; not `HTTP/1.1`, nor in an OID."""
    spelled = "|".join(re.escape(version) for version in sorted(versions))
    return re.compile(rf"(?<![\w./])({spelled})(\.\d+)?(?![\w.])")


def _docstrings(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for statement in body:
                if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                    ids.add(id(statement.value))
    return ids


def version_literals(
    modules: Iterable[Source], pattern: re.Pattern[str], allowed: Iterable[str]
) -> list[str]:
    """STYLE 3: string constants spelling a protocol version, outside `allowed`
    modules (a package name allows its whole package). Docstrings do not count."""
    allowed = tuple(allowed)
    found = []
    for source in modules:
        if any((source.name + ".").startswith(name + ".") for name in allowed):
            continue
        docs = _docstrings(source.tree)
        spelled = []
        for node in ast.walk(source.tree):
            if isinstance(node, ast.Constant) and id(node) not in docs:
                value = node.value
                text = value.decode("latin-1") if isinstance(value, bytes) else value
                if isinstance(text, str) and pattern.search(text):
                    spelled.append((node.lineno, f"spells a version: {value!r}"))
        found += [f"{source.name}:{line} {what}" for line, what in sorted(spelled)]
    return found


def oversized(modules: Iterable[Source], budget: int = 400) -> list[str]:
    """STYLE 13: modules over `budget` lines whose header does not say why."""
    return [
        f"{source.name} has {source.text.count(chr(10))} lines"
        for source in modules
        if source.text.count("\n") > budget
        and f"{budget} lines" not in (ast.get_docstring(source.tree) or "")
    ]


def undocumented(modules: Iterable[Source]) -> list[str]:
    """STYLE 17: modules that do not open with a docstring (empty files aside)."""
    return [
        source.name
        for source in modules
        if source.text.strip() and not ast.get_docstring(source.tree)
    ]


# -- the house's layering ---------------------------------------------------------------

LAYERS = {
    "model": 0,
    "protocol": 1,
    "wire": 2,
    "server": 3,
    "client": 3,  # the runtime: server and client are siblings, neither below the other
    "asgi": 4,
    "grpc": 4,  # the bindings, siblings
    "testing": 4,  # in-memory transport: a Client wired to a server, no binding
    "conformance": 4,  # `parley check`: runs as a client over the wire
    "adapters": 5,
    "inspector": 5,
    "observability": 5,
    "cli": 6,
    "": 7,  # the root module: a facade over everything (lazy), on top
}
NEUTRAL = {"parley.__version__"}
"""Imports of no layer: the distribution's version string, defined in the root module
before (and without) any import."""

LAYER_EXCEPTIONS = {
    # Agent.asgi() is the authoring API's door to its HTTP binding: imported when
    # called (and for typing), so the server never loads the binding by itself.
    ("parley.server.agent", "parley.asgi.embedding"),
    # The proxy agent is a server that forwards each request to a remote agent through
    # the Client: a sibling import, one way (the client never imports the server).
    ("parley.server.proxy", "parley.client"),
}

CORE = ("model", "protocol")
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
"""What the I/O-free core may import besides itself: no asyncio, sockets, files, HTTP."""

SERVING = ("server", "asgi", "grpc")
BINDINGS = ("asgi", "grpc")

VERSION_SPELLERS = (
    "parley.wire",  # the codecs: one per (version, format)
    "parley.protocol.negotiation",  # the `Version` enum and what each version means
    # The option `--a2a-1.1-draft` and its help text: the name a user types to opt into
    # the draft, mapped to `DRAFT_VERSIONS` at once (no code path branches on it).
    "parley.cli.a2a_draft",
)
VERSIONS = version_pattern(version.value for version in Version)


@pytest.fixture(scope="module")
def tree() -> list[Source]:
    return sources(SRC)


@pytest.fixture(scope="module")
def edges() -> list[Import]:
    return graph(SRC)


def planted(*pairs: tuple[str, str]) -> list[Import]:
    """An in-memory graph: (importer, target) edges."""
    return [Import(importer, target, 1) for importer, target in pairs]


def parsed(name: str, code: str) -> Source:
    return Source(name, code, ast.parse(code))


# -- STYLE 1: layers point one way ------------------------------------------------------


def test_every_package_has_a_layer() -> None:
    packages = {path.parent.name for path in SRC.glob("*/__init__.py")}
    assert not unlayered(packages, LAYERS), "place each package in LAYERS"


def test_a_package_without_a_layer_is_caught() -> None:
    assert unlayered({"model", "plugins"}, LAYERS) == ["plugins"]


@pytest.mark.parametrize("package", sorted(name for name in LAYERS if name))
def test_layer_imports_only_lower_layers(edges: list[Import], package: str) -> None:
    found = layer_violations(edges, LAYERS, package, LAYER_EXCEPTIONS)
    assert not found, f"{package} imports its own layer or one above: {found}"


def test_every_layer_exception_is_still_needed(edges: list[Import]) -> None:
    """An allow-list entry nothing matches any more is taken out, not left to widen."""
    for entry in LAYER_EXCEPTIONS:
        assert any(_allowed(edge, [entry]) for edge in edges), entry


def test_the_root_facade_may_import_everything(edges: list[Import]) -> None:
    assert not layer_violations(edges, LAYERS, "", LAYER_EXCEPTIONS)


@pytest.mark.parametrize(
    ("importer", "target"),
    [
        ("parley.model.tasks", "parley.protocol.lifecycle.transition"),
        ("parley.protocol.operations", "parley.wire.jsonrpc"),
        ("parley.wire.v1_0.protojson_codec", "parley.server.service.AgentService"),
        ("parley.server.runner", "parley.client.Client"),  # a sibling, not below
        ("parley.server.service", "parley.asgi.app"),
        ("parley.cli.main", "parley.Client"),  # the root facade sits on top
    ],
)
def test_an_upward_or_sibling_import_is_caught(importer: str, target: str) -> None:
    package = layer_of(importer, LAYERS)
    found = layer_violations(planted((importer, target)), LAYERS, package, LAYER_EXCEPTIONS)
    assert found == [f"{importer}:1 imports {target} ({_layers(importer, target)})"]


def _layers(importer: str, target: str) -> str:
    return f"layer {LAYERS[layer_of(target, LAYERS)]} from {LAYERS[layer_of(importer, LAYERS)]}"


def test_a_downward_import_or_an_allowed_one_passes() -> None:
    fine = planted(
        ("parley.asgi.app", "parley.server.service.AgentService"),
        ("parley.server.agent", "parley.asgi.embedding.agent_app"),
        ("parley.server.push.delivery", "parley.__version__"),
        ("parley.server.stores.memory", "parley.server.stores.contract"),
    )
    assert not layer_violations(fine, LAYERS, "server", LAYER_EXCEPTIONS)
    assert not layer_violations(fine, LAYERS, "asgi", LAYER_EXCEPTIONS)


def test_the_import_graph_is_read_from_source(tmp_path: Path) -> None:
    """Absolute, `from` and relative imports, nested ones too, all reach the graph."""
    root = tmp_path / "parley"
    (root / "client").mkdir(parents=True)
    (root / "__init__.py").write_text('"""Root."""\n')
    (root / "client" / "__init__.py").write_text('"""Client."""\nfrom . import session\n')
    (root / "client" / "session.py").write_text(
        '"""A session."""\n'
        "import json\n"
        "from parley import server\n"
        "def open() -> None:\n"
        "    from ..asgi.app import A2AApp\n"
    )
    found = {(edge.importer, edge.target) for edge in graph(root)}
    assert found == {
        ("parley.client", "parley.client.session"),
        ("parley.client.session", "json"),
        ("parley.client.session", "parley.server"),
        ("parley.client.session", "parley.asgi.app.A2AApp"),
    }
    assert forbidden_imports(graph(root), "client", SERVING) == [
        "parley.client.session:3 imports parley.server",
        "parley.client.session:5 imports parley.asgi.app.A2AApp",
    ]


# -- STYLE 1: the core has no I/O -----------------------------------------------------


def test_core_imports_no_io(edges: list[Import]) -> None:
    found = core_io_violations(edges, CORE, CORE_ALLOWED)
    assert not found, f"model and protocol import only pure standard library: {found}"


def test_io_in_the_core_is_caught() -> None:
    edges = planted(
        ("parley.protocol.lifecycle", "asyncio"),
        ("parley.model.parts", "urllib.request.urlopen"),
        ("parley.model.parts", "urllib.parse.quote"),
        ("parley.model.parts", "msgspec.Struct"),
        ("parley.server.runner", "asyncio"),
    )
    assert core_io_violations(edges, CORE, CORE_ALLOWED) == [
        "parley.protocol.lifecycle:1 imports asyncio",
        "parley.model.parts:1 imports urllib.request.urlopen",
    ]


# -- the client stands alone ------------------------------------------------------------


def test_client_is_independent_of_the_server(edges: list[Import]) -> None:
    found = forbidden_imports(edges, "client", SERVING)
    assert not found, f"the client must not import the server or its bindings: {found}"


def test_a_client_importing_the_server_is_caught() -> None:
    edges = planted(
        ("parley.client.client", "parley.server.service.AgentService"),
        ("parley.client.grpc", "parley.grpc.errors"),
        ("parley.client.http", "parley.wire.jsonrpc"),
        ("parley.clients.x", "parley.server"),  # another package, whose name starts alike
    )
    assert forbidden_imports(edges, "client", SERVING) == [
        "parley.client.client:1 imports parley.server.service.AgentService",
        "parley.client.grpc:1 imports parley.grpc.errors",
    ]


# -- the stores keep their own format ---------------------------------------------------


def test_stores_import_no_codec(edges: list[Import]) -> None:
    """A codec's change never changes what a database holds: the stores write model
    objects in their own row format, so they import nothing of `parley.wire`."""
    found = forbidden_imports(edges, "server.stores", ["wire"])
    assert not found, f"the stores must not import a wire codec: {found}"


def test_a_store_importing_a_codec_is_caught() -> None:
    edges = planted(
        ("parley.server.stores.rows", "parley.wire.v1_0.protojson_codec.CODEC"),
        ("parley.server.stores.sqlite", "parley.wire"),
        ("parley.server.push.outbox", "parley.wire.v1_0.protojson_codec.CODEC"),  # a body to send
        ("parley.server.storesx.y", "parley.wire.json_bytes"),  # a name that starts alike
    )
    assert forbidden_imports(edges, "server.stores", ["wire"]) == [
        "parley.server.stores.rows:1 imports parley.wire.v1_0.protojson_codec.CODEC",
        "parley.server.stores.sqlite:1 imports parley.wire",
    ]


# -- bindings are siblings --------------------------------------------------------------


@pytest.mark.parametrize("binding", BINDINGS)
def test_bindings_are_independent(edges: list[Import], binding: str) -> None:
    others = [name for name in BINDINGS if name != binding]
    found = forbidden_imports(edges, binding, others)
    assert not found, f"{binding} imports another binding: {found}"


def test_a_binding_importing_another_is_caught() -> None:
    edges = planted(("parley.grpc.servicer", "parley.asgi.calls.to_a2a_error"))
    assert forbidden_imports(edges, "grpc", ["asgi"]) == [
        "parley.grpc.servicer:1 imports parley.asgi.calls.to_a2a_error"
    ]
    assert not forbidden_imports(edges, "asgi", ["grpc"])


# -- STYLE 3: versions are codecs at the edge -------------------------------------------


def test_version_literals_only_in_codecs_and_negotiation(tree: list[Source]) -> None:
    found = version_literals(tree, VERSIONS, VERSION_SPELLERS)
    assert not found, f"spell versions only in {VERSION_SPELLERS}: {found}"


def test_every_version_speller_spells_one(tree: list[Source]) -> None:
    """Each allow-list entry is still needed: the rule stays as narrow as the code."""
    for name in VERSION_SPELLERS:
        mine = [s for s in tree if (s.name + ".").startswith(name + ".")]
        assert version_literals(mine, VERSIONS, ()), name


def test_a_version_literal_outside_the_allow_list_is_caught() -> None:
    code = (
        '"""Says 1.0 in its docstring: fine."""\n'
        'CURRENT = "1.0"\n'
        'DRAFT = f"a2a-{1}-1.1-draft"\n'
        'HEADER = b"HTTP/1.1 200"\n'
        'OID = "0.9.2342.19200300.100.1.1"\n'
        'OLD = "0.3.0"\n'
    )
    modules = [parsed("parley.server.x", code), parsed("parley.wire.v1_0.x", code)]
    assert version_literals(modules, VERSIONS, VERSION_SPELLERS) == [
        "parley.server.x:2 spells a version: '1.0'",
        "parley.server.x:3 spells a version: '-1.1-draft'",
        "parley.server.x:6 spells a version: '0.3.0'",
    ]


def test_every_version_is_looked_for() -> None:
    for version in Version:
        assert VERSIONS.search(f'"{version.value}"'), version


# -- STYLE 13: size budgets -----------------------------------------------------------


def test_module_size_budget(tree: list[Source]) -> None:
    found = oversized(tree)
    assert not found, f"over 400 lines without a header saying why: {found}"


def test_an_oversized_module_is_caught() -> None:
    body = "x = 1\n" * 401
    modules = [
        parsed("parley.server.big", '"""Big."""\n' + body),
        parsed("parley.wire.table", '"""A table: over 400 lines, one row each."""\n' + body),
        parsed("parley.server.small", '"""Small."""\n' + "x = 1\n" * 398),
    ]
    assert oversized(modules) == ["parley.server.big has 402 lines"]


# -- STYLE 17: every module says what it owns -----------------------------------------


def test_every_module_says_what_it_owns(tree: list[Source]) -> None:
    found = undocumented(tree)
    assert not found, f"modules without a docstring: {found}"


def test_a_module_without_a_docstring_is_caught() -> None:
    modules = [
        parsed("parley.a", "x = 1\n"),
        parsed("parley.b", '"""B."""\nx = 1\n'),
        parsed("parley.c", ""),
    ]
    assert undocumented(modules) == ["parley.a"]


# -- STYLE 11: explicit public API ----------------------------------------------------


@pytest.mark.parametrize("package", ["parley", "parley.model"])
def test_curated_public_api(package: str) -> None:
    """Each package exports a curated, sorted `__all__` of names that exist."""
    module = importlib.import_module(package)
    names = module.__all__
    assert names == sorted(names)
    for name in names:
        assert hasattr(module, name), f"{package}.{name}"


def test_model_exports_every_model_class(tree: list[Source]) -> None:
    m = importlib.import_module("parley.model")
    for source in tree:
        if layer_of(source.name, LAYERS) != "model":
            continue
        for node in source.tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                assert node.name in m.__all__, node.name
