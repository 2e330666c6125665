"""Bad input (acceptance: fuzzing). Random and mutated JSON documents go to every decoder
of both JSON codecs and to the JSON-RPC envelope; only Parley's typed errors may come out
(never KeyError, TypeError, RecursionError, ...). Deterministic: fixed seeds.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import random
import sys
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest

from benchmarks.payloads import send_v03, send_v10, task_v03, task_v10
from parley import model as m
from parley.protocol.errors import (
    A2AError,
    InvalidParamsError,
    InvalidRequestError,
    JSONParseError,
)
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS
from parley.wire import json_bytes as wire_json
from parley.wire import jsonrpc
from parley.wire.codec_seam import Codec
from parley.wire.limits import Limits
from parley.wire.v0_3.jsonrpc_codec import CODEC as CODEC03
from parley.wire.v1_0.protojson_codec import CODEC as CODEC10
from parley.wire.v1_1.protojson_codec import CODEC as CODEC11
from tests.strategies import Flavor, all_models

DOCUMENTS = 20_000
"""Documents per version (fixed seeds: the same documents on every run)."""
CODECS: dict[Version, Codec[Any]] = {
    Version.V1_1: CODEC11,
    Version.V1_0: CODEC10,
    Version.V0_3: CODEC03,
}
SCALARS: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**31,
    2**63 - 1,
    -(2**63),
    1.5,
    -0.0,
    1e308,
    "",
    "x",
    "TASK_STATE_WORKING",
    "completed",
    "text",
    "ROLE_USER",
    "user",
    "2025-10-28T10:30:00.000Z",
    "not-a-date",
    "YQ==",
    "%%%",
    "\u0000",
    "é",
]


def random_json(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        return rng.choice(SCALARS)
    if roll < 0.7:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = [
        "id",
        "kind",
        "text",
        "parts",
        "message",
        "status",
        "state",
        "data",
        "raw",
        "url",
        "file",
        "bytes",
        "uri",
        "metadata",
        "artifact",
        "taskId",
        "contextId",
        "role",
        "messageId",
        "configuration",
        "task",
        "statusUpdate",
        "artifactUpdate",
        "flows",
        "securitySchemes",
        "type",
        "schemes",
        "list",
        rng.choice(SCALARS[14:]) or "k",
    ]
    return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def nodes(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from nodes(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from nodes(child, (*path, index))


def deep(rng: random.Random) -> Any:
    value: Any = rng.choice(SCALARS)
    for _ in range(rng.randint(30, 400)):
        value = [value] if rng.random() < 0.5 else {"metadata": value}
    return value


def replacement(rng: random.Random, old: Any) -> Any:
    roll = rng.random()
    if roll < 0.5:
        return random_json(rng)
    if roll < 0.6:
        return deep(rng)
    if roll < 0.7:
        return [old] * rng.randint(2, 50)
    if roll < 0.8:
        return {"x": old}
    if roll < 0.9:
        return "A" * rng.choice([1, 1000, 100_000])
    return rng.choice(SCALARS)


def mutate(rng: random.Random, document: Any) -> Any:
    document = copy.deepcopy(document)
    for _ in range(rng.randint(1, 3)):
        paths = list(nodes(document))
        path = rng.choice(paths)
        if not path:
            document = replacement(rng, document)
            continue
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        key = path[-1]
        if isinstance(parent, dict) and rng.random() < 0.3:
            del parent[key]
        else:
            parent[key] = replacement(rng, parent[key])
    return document


def seeds(codec: Codec[Any], version: Version) -> list[Any]:
    """Valid payloads of many shapes in this version's wire form."""
    legacy = version is Version.V0_3
    base = [task_v03(2, 2), send_v03()] if legacy else [task_v10(2, 2), send_v10()]
    task = codec.decode(m.Task, base[0])
    request = codec.decode_request(OPERATIONS_BY_NAME["SendMessage"], base[1])
    assert isinstance(request, m.SendMessageRequest)
    samples: list[m.Model] = [task, request, request.message, *task.artifacts, task.status]
    samples += [
        m.TaskStatusUpdateEvent(task_id="t", context_id="c", status=task.status),
        m.TaskArtifactUpdateEvent(task_id="t", context_id="c", artifact=task.artifacts[0]),
        m.TaskPushNotificationConfig(
            url="https://h/x",
            task_id="t",
            id="p",
            authentication=m.AuthenticationInfo(scheme="Bearer"),
        ),
        CARD,
    ]
    return base + [codec.encode(sample) for sample in samples] + [codec.encode_card(CARD)]


OPERATIONS_BY_NAME = {op.value: op for op in OPERATIONS}
CARD = m.AgentCard(
    name="n",
    description="d",
    version="1",
    supported_interfaces=(
        m.AgentInterface(url="https://h", protocol_binding="JSONRPC", protocol_version="0.3"),
    ),
    capabilities=m.AgentCapabilities(streaming=True, extensions=(m.AgentExtension(uri="u"),)),
    default_input_modes=("text/plain",),
    default_output_modes=("text/plain",),
    skills=(m.AgentSkill(id="s", name="s", description="d", tags=("t",)),),
    security_schemes={
        "k": m.APIKeySecurityScheme(name="k", location="header"),
        "o": m.OAuth2SecurityScheme(
            flows=m.OAuthFlows(
                client_credentials=m.ClientCredentialsOAuthFlow(
                    token_url="https://t", scopes={"a": "b"}
                )
            )
        ),
        "i": m.OpenIdConnectSecurityScheme(open_id_connect_url="https://o"),
        "t": m.MutualTlsSecurityScheme(),
        "h": m.HTTPAuthSecurityScheme(scheme="Bearer"),
    },
    security_requirements=(m.SecurityRequirement(schemes={"k": ()}),),
)


def decoders(codec: Codec[Any], version: Version) -> list[Callable[[Any], object]]:
    flavor = Flavor.V1_0 if version is Version.V1_0 else Flavor.V0_3
    out: list[Callable[[Any], object]] = [codec.decode_event, codec.decode_card]
    out += [functools.partial(codec.decode, kind) for kind in all_models(flavor)]
    for operation in OPERATIONS:
        out.append(functools.partial(codec.decode_request, operation))
        out.append(functools.partial(codec.decode_response, operation))
    return out


def documents(rng: random.Random, base: list[Any]) -> Iterator[Any]:
    for index in range(DOCUMENTS):
        if index % 5 == 0:
            yield random_json(rng)
        elif index % 97 == 0:
            raw = bytearray(orjson.dumps(rng.choice(base)))
            for _ in range(rng.randint(1, 4)):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            try:
                yield wire_json.loads(bytes(raw[: rng.randint(0, len(raw))] if index % 2 else raw))
            except JSONParseError:
                continue
        else:
            yield mutate(rng, rng.choice(base))


@contextlib.contextmanager
def untraced() -> Iterator[None]:
    """The line tracer (coverage's, in the test run) off: the fuzz loop proves robustness,
    and under the tracer its 50,000 documents per version took two minutes each."""
    tracer = sys.gettrace()
    sys.settrace(None)
    try:
        yield
    finally:
        sys.settrace(tracer)


@pytest.mark.parametrize("version", list(Version))
def test_every_decoder_raises_only_typed_errors(version: Version) -> None:
    codec = CODECS[version]
    rng = random.Random(20261122 + len(version.value))
    targets = decoders(codec, version)
    fed = 0
    with untraced():
        for document in documents(rng, seeds(codec, version)):
            fed += 1
            for decode in targets:
                with contextlib.suppress(A2AError):
                    decode(document)
            with contextlib.suppress(A2AError):
                jsonrpc.parse_request(document)
    assert fed >= DOCUMENTS * 0.98


def test_random_bytes_give_parse_errors_only() -> None:
    rng = random.Random(7)
    sample = orjson.dumps(task_v10(2, 2))
    for index in range(DOCUMENTS // 5):
        if index % 2:
            raw = bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
        else:
            mutated = bytearray(sample)
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
            raw = bytes(mutated[: rng.randint(1, len(mutated))])
        with contextlib.suppress(JSONParseError):
            wire_json.loads(raw)


def test_deeply_nested_json_is_refused_clearly() -> None:
    with pytest.raises(JSONParseError, match="nested too deeply"):
        wire_json.loads(b"[" * 5000 + b"]" * 5000)


def test_huge_body_is_refused_clearly() -> None:
    with pytest.raises(InvalidRequestError, match="exceeds the limit"):
        wire_json.loads(b'"' + b"a" * 2048 + b'"', Limits(max_body_bytes=1024))


@pytest.mark.parametrize("version", list(Version))
def test_deep_metadata_is_refused_with_the_field_named(version: Version) -> None:
    nested: Any = "x"
    for _ in range(100):
        nested = {"k": nested}
    payload = task_v10(0, 0) if version is Version.V1_0 else task_v03(0, 0)
    payload["metadata"] = nested
    with pytest.raises(InvalidParamsError, match="metadata") as raised:
        CODECS[version].decode(m.Task, payload)
    assert "nested deeper than" in raised.value.message
