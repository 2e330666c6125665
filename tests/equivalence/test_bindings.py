"""Functional equivalence of the bindings (issue 6, acceptance 2): one table of scenarios,
each run through the Parley client over JSON-RPC, HTTP+JSON and gRPC, in each protocol
version, against one Parley server serving all three from one service. The outcomes —
results field by field, errors by class, message, metadata, field violations and data —
must be equal once ids and timestamps are normalised (`tests.equivalence.normal`).

The comparison is exact. A difference the version's own wire forms impose is pinned as it
is (`KNOWN`: the reason and each binding's exact differences); a difference that is a
defect is an expected failure (`DEFECTS`, strict) until it is fixed.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from parley.client import Client, ClientStream, Connecting, StreamItem, user_message
from parley.model import AuthenticationInfo, Message, RawPart, Task, TaskState
from parley.protocol.errors import A2AError
from parley.protocol.negotiation import RELEASED_VERSIONS, Version
from tests.client.agents import EXTENSION
from tests.equivalence.conftest import Server
from tests.equivalence.normal import Normaliser, differences, kind

pytestmark = pytest.mark.anyio

BINDINGS = ("JSONRPC", "HTTP+JSON", "GRPC")


@dataclass
class Run:
    """One scenario over one binding: the connected client, and how to connect another."""

    server: Server
    version: Version
    binding: str
    client: Client

    def connect(self, **options: Any) -> Connecting:
        return Client.connect(
            self.server.url, versions=[self.version], bindings=[self.binding], **options
        )


def key(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def ask(text: str, skill: str, **ids: str) -> Message:
    return user_message(text, metadata={"skill": skill}, **ids)


async def task_of(client: Client, message: Message, *, return_immediately: bool = False) -> Task:
    result = await client.send(message, return_immediately=return_immediately)
    assert isinstance(result, Task)
    return result


async def collect(stream: ClientStream) -> list[StreamItem]:
    async with stream:
        return [item async for item in stream]


async def wait_until(check: Callable[[], bool]) -> None:
    with anyio.fail_after(5):
        while not check():
            await anyio.sleep(0.01)


# ---------------------------------------------------------------------------- scenarios


async def send_task(run: Run) -> object:
    return await run.client.send(ask(key("echo"), "echo"))


async def send_message(run: Run) -> object:
    return await run.client.send(ask(key("hi"), "direct"))


async def stream_task(run: Run) -> object:
    return await collect(run.client.stream(ask(key("chunks"), "chunks")))


async def stream_message(run: Run) -> object:
    return await collect(run.client.stream(ask(key("hi"), "direct")))


async def multi_turn_then_get(run: Run) -> object:
    asked = await task_of(run.client, ask(key("greet"), "greet"))
    done = await run.client.send(user_message("Ada", task_id=asked.id), history_length=1)
    full = await run.client.get_task(asked.id)
    last = await run.client.get_task(asked.id, history_length=1)
    return [asked, done, full, last]


async def get_without_history(run: Run) -> object:
    done = await task_of(run.client, ask(key("echo"), "echo"))
    return await run.client.get_task(done.id, history_length=0)


async def list_with_filters(run: Run) -> object:
    context_id = uuid.uuid4().hex
    for _ in range(3):
        await task_of(run.client, ask(key("list"), "echo", context_id=context_id))
    first = await run.client.list_tasks(context_id=context_id, page_size=2)
    rest = await run.client.list_tasks(context_id=context_id, page_token=first.next_page_token)
    done = await run.client.list_tasks(context_id=context_id, status=TaskState.COMPLETED)
    working = await run.client.list_tasks(context_id=context_id, status=TaskState.WORKING)
    return [first, rest, done, working]


async def cancel(run: Run) -> object:
    text = key("cancel")
    task = await task_of(run.client, ask(text, "until_cancelled"), return_immediately=True)
    await wait_until(run.server.probe.started(text).is_set)
    return await run.client.cancel_task(task.id)


async def subscribe(run: Run) -> object:
    text = key("background")
    task = await task_of(run.client, ask(text, "background"), return_immediately=True)
    await wait_until(run.server.probe.started(text).is_set)
    async with run.client.subscribe(task.id) as stream:
        first = await anext(stream)
        run.server.probe.gate(text).set()
        return [first, *[item async for item in stream]]


async def push_config_crud(run: Run) -> object:
    task = await task_of(run.client, ask(key("push"), "echo"))
    auth = AuthenticationInfo(scheme="Bearer", credentials="hook-token")
    client = run.client
    created = await client.create_push_config(
        task.id, "https://example.com/hook", config_id="c1", token="t0k", authentication=auth
    )
    got = await client.get_push_config(task.id, "c1")
    listed = await client.list_push_configs(task.id)
    await client.delete_push_config(task.id, "c1")
    after = await client.list_push_configs(task.id)
    gone: object
    try:
        gone = await client.get_push_config(task.id, "c1")
    except A2AError as error:
        gone = error
    return [created, got, listed, after, gone]


async def extended_card(run: Run) -> object:
    return await run.client.get_extended_card()


async def unknown_task(run: Run) -> object:
    return await run.client.get_task(str(uuid.uuid4()))


async def cancel_finished(run: Run) -> object:
    done = await task_of(run.client, ask(key("done"), "echo"))
    return await run.client.cancel_task(done.id)


async def subscribe_finished(run: Run) -> object:
    done = await task_of(run.client, ask(key("done"), "echo"))
    return await collect(run.client.subscribe(done.id))


async def invalid_params(run: Run) -> object:
    done = await task_of(run.client, ask(key("done"), "echo"))
    return await run.client.get_task(done.id, history_length=-1)


async def send_to_finished(run: Run) -> object:
    done = await task_of(run.client, ask(key("done"), "echo"))
    return await run.client.send("more", task_id=done.id)


async def missing_extension(run: Run) -> object:
    async with run.connect() as bare:
        return await bare.get_task(str(uuid.uuid4()))


async def unsupported_version(run: Run) -> object:
    async with run.connect(extensions=[EXTENSION], headers={"A2A-Version": "9.9"}) as other:
        return await other.get_task(str(uuid.uuid4()))


async def unsupported_media_type(run: Run) -> object:
    """R-SEND-9: a part of a media type no input mode of the card accepts."""
    image = RawPart(raw=b"\x89PNG", media_type="image/png")
    return await run.client.send(user_message([image], metadata={"skill": "echo"}))


async def unsupported_output_mode(run: Run) -> object:
    """R-SEND-6/9: accepted output modes the agent produces none of."""
    return await run.client.send(ask(key("hi"), "echo"), accepted_output_modes=["image/png"])


Scenario = Callable[[Run], Awaitable[object]]
V1, V03 = Version.V1_0, Version.V0_3

SCENARIOS: dict[str, tuple[Scenario, dict[Version, str]]] = {
    "send-task": (send_task, {V1: "Task", V03: "Task"}),
    "send-message": (send_message, {V1: "Message", V03: "Message"}),
    "stream-task": (stream_task, {V1: "list", V03: "list"}),
    "stream-message": (stream_message, {V1: "list", V03: "list"}),
    "get-history-length": (multi_turn_then_get, {V1: "list", V03: "list"}),
    "get-history-length-0": (get_without_history, {V1: "Task", V03: "Task"}),
    "list-with-filters": (list_with_filters, {V1: "list", V03: "MethodNotFoundError"}),
    "cancel": (cancel, {V1: "Task", V03: "Task"}),
    "subscribe": (subscribe, {V1: "list", V03: "list"}),
    "push-config-crud": (push_config_crud, {V1: "list", V03: "list"}),
    "extended-card": (extended_card, {V1: "AgentCard", V03: "AgentCard"}),
    "unknown-task": (unknown_task, {V1: "TaskNotFoundError", V03: "TaskNotFoundError"}),
    "cancel-finished": (
        cancel_finished,
        {V1: "TaskNotCancelableError", V03: "TaskNotCancelableError"},
    ),
    "subscribe-finished": (
        subscribe_finished,
        {V1: "UnsupportedOperationError", V03: "UnsupportedOperationError"},
    ),
    "invalid-params": (invalid_params, {V1: "InvalidParamsError", V03: "InvalidParamsError"}),
    "unsupported-operation": (
        send_to_finished,
        {V1: "UnsupportedOperationError", V03: "UnsupportedOperationError"},
    ),
    "missing-extension": (
        missing_extension,
        {V1: "ExtensionSupportRequiredError", V03: "ExtensionSupportRequiredError"},
    ),
    "unsupported-version": (
        unsupported_version,
        {V1: "VersionNotSupportedError", V03: "VersionNotSupportedError"},
    ),
    "unsupported-media-type": (
        unsupported_media_type,
        {V1: "ContentTypeNotSupportedError", V03: "ContentTypeNotSupportedError"},
    ),
    "unsupported-output-mode": (
        unsupported_output_mode,
        {V1: "ContentTypeNotSupportedError", V03: "ContentTypeNotSupportedError"},
    ),
}

REST, GRPC = BINDINGS[1], BINDINGS[2]
ERROR_DETAILS_03 = (
    "0.3 defines no error details: JSON-RPC carries them as free-form `error.data` "
    "(decoded as `data`), and so does REST, whose body is JSON-RPC's error object (what "
    "the official 0.3 clients decode); Parley's gRPC carries them as ErrorInfo metadata "
    "and BadRequest (decoded as `metadata`, `field_violations`)"
)


def details_03(at: str = "", **values: str) -> dict[str, list[str]]:
    """What 0.3 gRPC makes of an error (at path `at`) whose JSON-RPC `data` holds
    `values` (REST carries the same `data`)."""
    data = f"{at}.data: {{" + ", ".join(f"{k}: {v!r}" for k, v in values.items()) + "} != None"
    metadata = [f"{at}.metadata.{k}: None != {v!r}" for k, v in sorted(values.items())]
    return {GRPC: [data, *metadata]}


VIOLATIONS_03 = (
    ".data: {fieldViolations: [{field: 'historyLength', description: 'must be >= 0, got -1'}]}"
    " != None"
)
VERSIONS_03 = {"requestedVersion": "9.9", "supportedVersions": "1.0, 0.3"}

KNOWN: dict[tuple[str, Version], tuple[str, dict[str, list[str]]]] = {
    ("get-history-length-0", V03): (
        "0.3's protobuf (gRPC, and REST's ProtoJSON of it) cannot tell historyLength 0 "
        "from unset, which is unlimited; the 0.3 JSON-RPC schema can: no history",
        {REST: [".history: [] != [<Message>]"], GRPC: [".history: [] != [<Message>]"]},
    ),
    ("unknown-task", V03): (ERROR_DETAILS_03, details_03(taskId="<id0>")),
    ("cancel-finished", V03): (ERROR_DETAILS_03, details_03(taskId="<id0>")),
    ("subscribe-finished", V03): (ERROR_DETAILS_03, details_03(taskId="<id0>")),
    ("unsupported-operation", V03): (
        ERROR_DETAILS_03,
        details_03(taskId="<id0>", state="COMPLETED"),
    ),
    ("push-config-crud", V03): (
        ERROR_DETAILS_03 + " (GetTaskPushNotificationConfig of the deleted config)",
        details_03("[4]", taskId="<id0>", configId="c1"),
    ),
    ("unsupported-media-type", V03): (ERROR_DETAILS_03, details_03(mediaType="image/png")),
    ("unsupported-output-mode", V03): (
        ERROR_DETAILS_03,
        details_03(acceptedOutputModes="image/png"),
    ),
    ("invalid-params", V03): (
        ERROR_DETAILS_03,
        {GRPC: [VIOLATIONS_03, ".field_violations: [] != [<FieldViolation>]"]},
    ),
    ("missing-extension", V03): (ERROR_DETAILS_03, details_03(extension=EXTENSION)),
    ("unsupported-version", V03): (
        "An A2A-Version no interface serves: JSON-RPC answers in 0.3's form (details as "
        "`data`), REST in the first served version's (1.0: ErrorInfo metadata); the 0.3 "
        "gRPC service ignores `a2a-version` (docs/decisions.md, gRPC binding) and runs the "
        "call",
        {
            REST: [
                details_03(**VERSIONS_03)[GRPC][0],
                *[f".metadata.{k}: None != {v!r}" for k, v in VERSIONS_03.items()],
            ],
            GRPC: [
                ".<error>: 'VersionNotSupportedError' != 'TaskNotFoundError'",
                details_03(**VERSIONS_03)[GRPC][0],
                ".message: \"A2A-Version '9.9' is not supported; this interface serves 1.0, 0.3\""
                " != 'Task <id0> not found'",
                ".metadata.taskId: None != '<id0>'",
            ],
        },
    ),
}
"""Differences that are not a defect of one binding, pinned exactly: the reason (the
version's own wire forms, or a documented choice), and each binding's differences from
JSON-RPC's outcome."""

DEFECTS: dict[tuple[str, Version], str] = {}
"""Differences that are defects (of the server): expected failures, strict, until fixed."""


def cases() -> Iterator[Any]:
    for version in RELEASED_VERSIONS:
        for name in SCENARIOS:
            reason = DEFECTS.get((name, version))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            yield pytest.param(name, version, id=f"{version.value}-{name}", marks=marks)


async def outcome(scenario: Scenario, run: Run) -> Any:
    normal = Normaliser()
    try:
        return normal(await scenario(run))
    except A2AError as error:
        return normal(error)


async def settled(server: Server) -> None:
    """Every task finished and every stream closed before the next binding's run."""
    deadline = time.monotonic() + 5
    while server.leftovers() != (0, 0):
        assert time.monotonic() < deadline, f"left behind: {server.leftovers()}"
        await anyio.sleep(0.01)


@pytest.mark.parametrize(("name", "version"), list(cases()))
async def test_every_binding_gives_the_same_outcome(
    server: Server, name: str, version: Version
) -> None:
    scenario, expected = SCENARIOS[name]
    outcomes: dict[str, Any] = {}
    for binding in BINDINGS:
        async with Client.connect(
            server.url, versions=[version], bindings=[binding], extensions=[EXTENSION]
        ) as client:
            assert client.interface is not None
            assert client.interface.protocol_binding == binding
            run = Run(server, version, binding, client)
            outcomes[binding] = await outcome(scenario, run)
        await settled(server)
    reference = outcomes[BINDINGS[0]]
    assert kind(reference) == expected[version]
    found = {binding: list(differences(reference, outcomes[binding])) for binding in BINDINGS[1:]}
    _, known = KNOWN.get((name, version), ("", {}))
    assert found == {binding: known.get(binding, []) for binding in BINDINGS[1:]}, (
        f"{name} ({version.value}) differs from {BINDINGS[0]}"
    )
