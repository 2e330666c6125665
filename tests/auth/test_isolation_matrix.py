"""The isolation matrix (DESIGN 8, R-SCOPE 1-8, REFERENCE §6.3 non-disclosure): tasks owned
by one (tenant, principal) are, to every other (tenant, principal), exactly a task id that
never existed — on every binding (JSON-RPC, HTTP+JSON, gRPC), in both versions.

Callers: three tenants in 1.0 (the default one, `acme`, `umbrella`; 0.3 has no tenant, so
its callers are in the default one) by four principals (two API keys, a bearer token,
anonymous, let in without credentials). Every other
caller tries every operation that addresses a task — GetTask, CancelTask, SubscribeToTask,
a SendMessage and a SendStreamingMessage follow-up carrying the task's id and context,
Create (over the owner's config id), Get, List and Delete TaskPushNotificationConfig — and
ListTasks (unfiltered, and filtered by the owner's context; 1.0 only). Each answer is
compared, byte for byte once the ids are replaced, with what the same caller gets for a
random missing task and context: TaskNotFound for the task-addressed ones, the same list
for ListTasks. Tasks are completed ones, and live ones: still working, in INPUT_REQUIRED,
and working with the owner's SendStreamingMessage still open. Afterwards the tasks are as
their owners left them, and the owners can still do all of it (the positive control, so
the matrix cannot pass by refusing everyone).

Probes go out as raw requests so the whole answer is compared (`matrix_support.Wire`);
owners use Parley's client transports. Every leak is collected, so one run shows them all.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parley.client import CallOptions
from parley.client.transport import EventStream, Transport
from parley.model import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Model,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.protocol.errors import TaskNotCancelableError, UnsupportedOperationError
from parley.protocol.negotiation import Version
from parley.protocol.operations import OPERATIONS, Operation
from tests.auth.matrix_support import (
    BINDINGS,
    PRINCIPALS,
    Answer,
    Served,
    forms,
    serving,
    task_not_found,
    text_of,
    with_skill,
)
from tests.contracts.support import run

TENANTS = ("acme", "umbrella")
MINIMUM_CASES = 500
"""Each test runs at least this many cases: the matrix cannot shrink unnoticed."""
TIMEOUT = 240.0
"""Seconds for a whole test: generous, so a run full of hanging leaks still reports them."""

HOOK = "https://example.com/hook"
INTRUDER_HOOK = "https://intruder.example/hook"
OWNER_CONFIG = "owner-hook"
"""The push config id every owned task has: others try to read, replace and delete it."""
OPTIONS = CallOptions(timeout=10)
CONCURRENCY = 8
"""Probes in flight at once."""


@dataclass(frozen=True)
class Vantage:
    """Where a call comes from: a principal, the tenant it names, the version it speaks."""

    principal: str
    tenant: str
    version: Version

    @property
    def scope(self) -> tuple[str, str]:
        return (self.tenant, self.principal)

    def __str__(self) -> str:
        return f"{self.principal}@{self.tenant or '(default)'} {self.version.value}"


VANTAGES = (
    *(Vantage(p, t, Version.V1_0) for t in ("", *TENANTS) for p in PRINCIPALS),
    *(Vantage(p, "", Version.V0_3) for p in PRINCIPALS),
)


def reach(owner: Vantage) -> list[Vantage]:
    """The vantages an owner sees its tasks from: a default-tenant task in 1.0 as well."""
    if owner.tenant:
        return [owner]
    return [Vantage(owner.principal, "", Version.V0_3), Vantage(owner.principal, "", Version.V1_0)]


@dataclass(frozen=True)
class Owned:
    """A task and who owns it; `kind` says what state the matrix holds it in."""

    kind: str
    owner: Vantage
    task_id: str
    context_id: str

    def __str__(self) -> str:
        return f"{self.kind} task of {self.owner}"


def ask(text: str, skill: str = "echo", *, task_id: str = "", context_id: str = "") -> Message:
    message = Message(
        message_id=f"m-{uuid.uuid4()}",
        role=Role.USER,
        parts=(TextPart(text=text),),
        task_id=task_id,
        context_id=context_id,
    )
    return with_skill(message, skill)


def intrusion(task_id: str, context_id: str, tenant: str) -> SendMessageRequest:
    message = Message(
        message_id="m-intruder",
        role=Role.USER,
        parts=(TextPart(text="intruder"),),
        task_id=task_id,
        context_id=context_id,
    )
    return SendMessageRequest(message=message, tenant=tenant)


@dataclass(frozen=True)
class Probe:
    """One thing another caller tries: the operation and its request, built from the task
    id, its context id and the caller's tenant; a listing answers a list, not an error."""

    name: str
    operation: Operation
    build: Callable[[str, str, str], Model]
    listing: bool = False


PROBES = (
    Probe("GetTask", Operation.GET_TASK, lambda t, c, n: GetTaskRequest(id=t, tenant=n)),
    Probe("CancelTask", Operation.CANCEL_TASK, lambda t, c, n: CancelTaskRequest(id=t, tenant=n)),
    Probe(
        "SubscribeToTask",
        Operation.SUBSCRIBE_TO_TASK,
        lambda t, c, n: SubscribeToTaskRequest(id=t, tenant=n),
    ),
    Probe("SendMessage follow-up", Operation.SEND_MESSAGE, intrusion),
    Probe("SendStreamingMessage follow-up", Operation.SEND_STREAMING_MESSAGE, intrusion),
    Probe(
        "CreateTaskPushNotificationConfig",
        Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        lambda t, c, n: TaskPushNotificationConfig(
            url=INTRUDER_HOOK, task_id=t, id=OWNER_CONFIG, tenant=n
        ),
    ),
    Probe(
        "GetTaskPushNotificationConfig",
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        lambda t, c, n: GetTaskPushNotificationConfigRequest(task_id=t, id=OWNER_CONFIG, tenant=n),
    ),
    Probe(
        "ListTaskPushNotificationConfigs",
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        lambda t, c, n: ListTaskPushNotificationConfigsRequest(task_id=t, tenant=n),
    ),
    Probe(
        "DeleteTaskPushNotificationConfig",
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
        lambda t, c, n: DeleteTaskPushNotificationConfigRequest(
            task_id=t, id=OWNER_CONFIG, tenant=n
        ),
    ),
    Probe(
        "ListTasks by contextId",
        Operation.LIST_TASKS,
        lambda t, c, n: ListTasksRequest(context_id=c, tenant=n),
        listing=True,
    ),
    Probe(
        "ListTasks", Operation.LIST_TASKS, lambda t, c, n: ListTasksRequest(tenant=n), listing=True
    ),
)


def first_difference(left: bytes, right: bytes) -> str:
    """Where two answers first differ (in the body, when the bodies differ)."""
    left_body, right_body = left.partition(b"\n\n")[2], right.partition(b"\n\n")[2]
    if left_body != right_body:
        left, right = left_body, right_body
    at = next((i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b), None)
    at = min(len(left), len(right)) if at is None else at
    return f"at {at}: {left[at : at + 60]!r} vs {right[at : at + 60]!r}"


@dataclass(frozen=True)
class Attempt:
    """One way another caller tries a task: who, on which binding (and HTTP+JSON verb),
    with which probe."""

    vantage: Vantage
    binding: str
    form: str
    probe: Probe

    def __str__(self) -> str:
        return " ".join(filter(None, (str(self.vantage), self.binding, self.form, self.probe.name)))

    @property
    def expected(self) -> str:
        """The code of the answer: a list for a listing, else TaskNotFound."""
        return "ok" if self.probe.listing else task_not_found(self.binding, self.vantage.version)


def attempts(task: Owned) -> Iterator[Attempt]:
    """Every other caller's every probe on every binding (and HTTP+JSON verb)."""
    for vantage in VANTAGES:
        if vantage.scope == task.owner.scope:
            continue
        for binding in BINDINGS:
            for probe in PROBES:
                if vantage.version in OPERATIONS[probe.operation].bindings:
                    for form in forms(binding, vantage.version, probe.operation):
                        yield Attempt(vantage, binding, form, probe)


@dataclass
class Findings:
    """The cases run so far, the leaks among them, and the owners' failed controls."""

    cases: int = 0
    leaks: list[str] = field(default_factory=list)
    owner_failures: list[str] = field(default_factory=list)


@dataclass
class Matrix:
    """Probes and controls against one served agent, adding to the findings."""

    served: Served
    findings: Findings
    _missing: dict[Attempt, tuple[Answer, str, str]] = field(default_factory=dict)

    async def call(self, attempt: Attempt, task_id: str, context_id: str) -> Answer:
        vantage, probe = attempt.vantage, attempt.probe
        request = probe.build(task_id, context_id, vantage.tenant)
        return await self.served.wire.call(
            attempt.binding,
            vantage.version,
            vantage.principal,
            probe.operation,
            request,
            form=attempt.form,
        )

    async def missing(self, attempt: Attempt) -> tuple[bytes, str]:
        """What the attempt gets for a task and a context that never existed (asked once),
        with the ids replaced; and the answer's code."""
        if attempt not in self._missing:
            task_id, context_id = str(uuid.uuid4()), str(uuid.uuid4())
            answer = await self.call(attempt, task_id, context_id)
            self._missing[attempt] = (answer, task_id, context_id)
        answer, task_id, context_id = self._missing[attempt]
        return answer.without(task_id, context_id), answer.code

    async def probe_all(self, task: Owned) -> None:
        """Every other caller, every binding, every probe, against one task, a few at a
        time (so calls that hang, if any, wait out their deadlines together)."""
        limit = asyncio.Semaphore(CONCURRENCY)

        async def limited(attempt: Attempt) -> None:
            async with limit:
                await self.probe(task, attempt)

        async with asyncio.TaskGroup() as group:
            for attempt in attempts(task):
                group.create_task(limited(attempt))

    async def probe(self, task: Owned, attempt: Attempt) -> None:
        """One attempt on a task: answered as for a missing task and context, or a leak."""
        self.findings.cases += 1
        answer = await self.call(attempt, task.task_id, task.context_id)
        missing, missing_code = await self.missing(attempt)
        seen = answer.without(task.task_id, task.context_id)
        where = f"{task}: {attempt}"
        if answer.code != attempt.expected:
            self.findings.leaks.append(f"{where}: answered {answer.code} (missing: {missing_code})")
        elif seen != missing:
            difference = first_difference(seen, missing)
            self.findings.leaks.append(f"{where}: unlike a missing id, {difference}")
        elif attempt.probe.listing and (
            task.task_id.encode() in answer.whole or task.context_id.encode() in answer.whole
        ):
            self.findings.leaks.append(f"{where}: the list names the task or its context")

    async def expect(self, label: str, call: Awaitable[Any], check: Callable[[Any], bool]) -> Any:
        """One owner control: `call`'s result (or error) must pass `check`."""
        self.findings.cases += 1
        try:
            outcome = await call
        except Exception as error:
            outcome = error
        try:
            passed = check(outcome)
        except (AttributeError, TypeError, IndexError):  # an error where a result belongs
            passed = False
        if not passed:
            self.findings.owner_failures.append(f"{label}: {outcome!r:.300}")
        return outcome


def transport(served: Served, binding: str, vantage: Vantage) -> Transport:
    return served.transport(binding, vantage.version, vantage.principal)


async def first_event(stream: EventStream) -> Any:
    """The first event of a stream, which is then closed."""
    try:
        return await asyncio.wait_for(anext(stream), 10)
    finally:
        await stream.aclose()


def is_task(task_id: str, *states: TaskState) -> Callable[[Any], bool]:
    return lambda o: isinstance(o, Task) and o.id == task_id and o.status.state in states


async def own(served: Served, kind: str, owner: Vantage, request: SendMessageRequest) -> Owned:
    """A task `owner` starts through JSON-RPC, with the owner's push config on it."""
    client = transport(served, "JSONRPC", owner)
    task = await client.send_message(request, OPTIONS)
    assert isinstance(task, Task), task
    config = TaskPushNotificationConfig(
        url=HOOK, task_id=task.id, id=OWNER_CONFIG, tenant=owner.tenant
    )
    await client.create_task_push_notification_config(config, OPTIONS)
    return Owned(kind, owner, task.id, task.context_id)


async def holding(served: Served, owner: Vantage) -> Owned:
    """A `hold` task, WORKING until its gate opens (sent without waiting for it)."""
    name = f"hold-{uuid.uuid4()}"
    configuration = SendMessageConfiguration(return_immediately=True)
    request = SendMessageRequest(
        message=ask(name, "hold"), configuration=configuration, tenant=owner.tenant
    )
    task = await own(served, "working", owner, request)
    await asyncio.wait_for(served.gates.started(name).wait(), 10)
    return task


async def interviewing(served: Served, owner: Vantage) -> Owned:
    """An `interview` task, in INPUT_REQUIRED."""
    request = SendMessageRequest(message=ask("hello", "interview"), tenant=owner.tenant)
    return await own(served, "input-required", owner, request)


async def streaming(served: Served, owner: Vantage, binding: str) -> tuple[Owned, EventStream, str]:
    """A `hold` task the owner started with SendStreamingMessage on `binding`, the stream
    still open (read up to the WORKING update); its gate's name."""
    name = f"hold-{uuid.uuid4()}"
    request = SendMessageRequest(message=ask(name, "hold"), tenant=owner.tenant)
    client = transport(served, binding, owner)
    stream = client.send_streaming_message(request, CallOptions(timeout=None))
    first = await asyncio.wait_for(anext(stream), 10)
    assert isinstance(first, Task), first
    await asyncio.wait_for(served.gates.started(name).wait(), 10)
    config = TaskPushNotificationConfig(
        url=HOOK, task_id=first.id, id=OWNER_CONFIG, tenant=owner.tenant
    )
    await client.create_task_push_notification_config(config, OPTIONS)
    return Owned(f"streaming ({binding})", owner, first.id, first.context_id), stream, name


# ----------------------------------------------------------------------------- controls


async def untouched(matrix: Matrix, task: Owned, state: TaskState, history: int) -> None:
    """After the probes: the task is as its owner left it, its config the owner's."""
    client = transport(matrix.served, "JSONRPC", task.owner)
    request = GetTaskRequest(id=task.task_id, tenant=task.owner.tenant)
    got = await matrix.expect(
        f"{task}: get after probes", client.get_task(request, OPTIONS), is_task(task.task_id, state)
    )
    if isinstance(got, Task) and (
        len(got.history) != history or any(text_of(m) == "intruder" for m in got.history)
    ):
        matrix.findings.leaks.append(f"{task}: its history changed under the probes")
    config = GetTaskPushNotificationConfigRequest(
        task_id=task.task_id, id=OWNER_CONFIG, tenant=task.owner.tenant
    )
    await matrix.expect(
        f"{task}: its push config after probes",
        client.get_task_push_notification_config(config, OPTIONS),
        lambda o: isinstance(o, TaskPushNotificationConfig) and o.url == HOOK,
    )


async def sees(
    matrix: Matrix, task: Owned, binding: str, vantage: Vantage, state: TaskState
) -> None:
    """The owner reads, lists, subscribes to and manages push configs of its task."""
    client, t, n = transport(matrix.served, binding, vantage), task.task_id, vantage.tenant
    label = f"{task}: owner {vantage} {binding}"
    await matrix.expect(
        f"{label} get", client.get_task(GetTaskRequest(id=t, tenant=n), OPTIONS), is_task(t, state)
    )
    if vantage.version is Version.V1_0:
        for name, request in (
            ("list", ListTasksRequest(tenant=n)),
            ("list by context", ListTasksRequest(context_id=task.context_id, tenant=n)),
        ):
            await matrix.expect(
                f"{label} {name}",
                client.list_tasks(request, OPTIONS),
                lambda o: any(listed.id == t for listed in o.tasks),
            )
    subscribe = client.subscribe_to_task(SubscribeToTaskRequest(id=t, tenant=n), OPTIONS)
    if state is TaskState.COMPLETED:
        await matrix.expect(
            f"{label} subscribe",
            first_event(subscribe),
            lambda o: isinstance(o, UnsupportedOperationError),
        )
    else:
        await matrix.expect(f"{label} subscribe", first_event(subscribe), is_task(t, state))
    config_id = f"hook-{binding}-{vantage.version.value}"
    config = TaskPushNotificationConfig(url=HOOK, task_id=t, id=config_id, tenant=n)
    await matrix.expect(
        f"{label} create config",
        client.create_task_push_notification_config(config, OPTIONS),
        lambda o: isinstance(o, TaskPushNotificationConfig) and o.id == config_id,
    )
    get = GetTaskPushNotificationConfigRequest(task_id=t, id=OWNER_CONFIG, tenant=n)
    await matrix.expect(
        f"{label} get config",
        client.get_task_push_notification_config(get, OPTIONS),
        lambda o: isinstance(o, TaskPushNotificationConfig) and o.url == HOOK,
    )
    listed = ListTaskPushNotificationConfigsRequest(task_id=t, tenant=n)
    await matrix.expect(
        f"{label} list configs",
        client.list_task_push_notification_configs(listed, OPTIONS),
        lambda o: {c.id for c in o.configs} == {OWNER_CONFIG, config_id},
    )
    delete = DeleteTaskPushNotificationConfigRequest(task_id=t, id=config_id, tenant=n)
    await matrix.expect(
        f"{label} delete config",
        client.delete_task_push_notification_config(delete, OPTIONS),
        lambda o: o is None,
    )


async def finished(matrix: Matrix, task: Owned, binding: str, vantage: Vantage) -> None:
    """The owner of a completed task is told it is finished, not that it is missing."""
    client, t, n = transport(matrix.served, binding, vantage), task.task_id, vantage.tenant
    label = f"{task}: owner {vantage} {binding}"
    await matrix.expect(
        f"{label} cancel",
        client.cancel_task(CancelTaskRequest(id=t, tenant=n), OPTIONS),
        lambda o: isinstance(o, TaskNotCancelableError),
    )
    follow_up = SendMessageRequest(message=ask("again", task_id=t), tenant=n)
    await matrix.expect(
        f"{label} follow-up",
        client.send_message(follow_up, OPTIONS),
        lambda o: isinstance(o, UnsupportedOperationError),
    )


def carries(task_id: str, message_id: str) -> Callable[[Any], bool]:
    """The task, still INPUT_REQUIRED, with the message in its history."""
    asking = is_task(task_id, TaskState.INPUT_REQUIRED)
    return lambda o: asking(o) and any(m.message_id == message_id for m in o.history)


async def continues(matrix: Matrix, task: Owned) -> None:
    """The owner's follow-ups continue its INPUT_REQUIRED task on every binding; "done"
    completes it."""
    t, owner = task.task_id, task.owner
    for vantage in reach(owner):
        for binding in BINDINGS:
            client = transport(matrix.served, binding, vantage)
            message = ask("more", task_id=t, context_id=task.context_id)
            await matrix.expect(
                f"{task}: owner {vantage} {binding} follow-up",
                client.send_message(
                    SendMessageRequest(message=message, tenant=vantage.tenant), OPTIONS
                ),
                carries(t, message.message_id),
            )
    done = SendMessageRequest(message=ask("done", task_id=t), tenant=owner.tenant)
    client = transport(matrix.served, "JSONRPC", owner)
    await matrix.expect(
        f"{task}: owner {owner} done",
        client.send_message(done, OPTIONS),
        is_task(t, TaskState.COMPLETED),
    )


async def cancels(
    matrix: Matrix, owner: Vantage, start: Callable[[Served, Vantage], Awaitable[Owned]]
) -> None:
    """The owner cancels live tasks of its own on every binding (a fresh one each)."""
    for vantage in reach(owner):
        for binding in BINDINGS:
            task = await start(matrix.served, owner)
            client = transport(matrix.served, binding, vantage)
            request = CancelTaskRequest(id=task.task_id, tenant=vantage.tenant)
            await matrix.expect(
                f"{task}: owner {vantage} {binding} cancel",
                client.cancel_task(request, OPTIONS),
                is_task(task.task_id, TaskState.CANCELED),
            )


async def finishes(matrix: Matrix, task: Owned, stream: EventStream, gate: str) -> None:
    """Released, the task completes on the stream its owner kept open through the probes."""
    matrix.served.gates.gate(gate).set()

    async def rest() -> list[Any]:
        try:
            return [event async for event in stream]
        finally:
            await stream.aclose()

    def completed(events: Any) -> bool:
        last = events[-1] if isinstance(events, list) and events else None
        return (
            isinstance(last, TaskStatusUpdateEvent)
            and last.task_id == task.task_id
            and last.status.state is TaskState.COMPLETED
        )

    await matrix.expect(f"{task}: the owner's stream", asyncio.wait_for(rest(), 10), completed)


async def history_of(served: Served, task: Owned) -> int:
    client = transport(served, "JSONRPC", task.owner)
    got = await client.get_task(GetTaskRequest(id=task.task_id, tenant=task.owner.tenant), OPTIONS)
    return len(got.history)


# ----------------------------------------------------------------------------- the matrix


def verify(scenario: Callable[[Findings], Coroutine[Any, Any, None]]) -> None:
    """Run the scenario; no leaks, every owner control passed, enough cases. A scenario
    that runs out of time (calls that hang are leaks too) reports what it found so far."""
    findings = Findings()
    try:
        run(scenario(findings), TIMEOUT)
    except TimeoutError:
        findings.leaks.append(f"the matrix did not finish in {TIMEOUT:.0f} s: calls hung")
    assert findings.leaks == [], "\n".join(["leaks:", *sorted(findings.leaks)])
    failures = sorted(findings.owner_failures)
    assert findings.owner_failures == [], "\n".join(["owners refused:", *failures])
    assert findings.cases >= MINIMUM_CASES, findings.cases


def test_finished_tasks_are_missing_to_everyone_but_their_owner(tmp_path: Path) -> None:
    owners = (
        Vantage("alice", "acme", Version.V1_0),
        Vantage("carol", "umbrella", Version.V1_0),
        Vantage("anonymous", "acme", Version.V1_0),
        Vantage("bob", "", Version.V0_3),
    )

    async def scenario(findings: Findings) -> None:
        async with serving(tmp_path) as served:
            matrix = Matrix(served, findings)
            tasks = [
                await own(
                    served,
                    "completed",
                    owner,
                    SendMessageRequest(message=ask("finished"), tenant=owner.tenant),
                )
                for owner in owners
            ]
            histories = [await history_of(served, task) for task in tasks]
            for task in tasks:
                await matrix.probe_all(task)
            for task, history in zip(tasks, histories, strict=True):
                await untouched(matrix, task, TaskState.COMPLETED, history)
                for vantage in reach(task.owner):
                    for binding in BINDINGS:
                        await sees(matrix, task, binding, vantage, TaskState.COMPLETED)
                        await finished(matrix, task, binding, vantage)

    verify(scenario)


def test_live_tasks_and_open_streams_are_missing_to_everyone_but_their_owner(
    tmp_path: Path,
) -> None:
    async def scenario(findings: Findings) -> None:
        async with serving(tmp_path) as served:
            matrix = Matrix(served, findings)
            working = await holding(served, Vantage("carol", "acme", Version.V1_0))
            waiting = await interviewing(served, Vantage("alice", "", Version.V0_3))
            streams = [
                await streaming(served, Vantage("bob", "umbrella", Version.V1_0), binding)
                for binding in BINDINGS
            ]
            tasks = [
                (working, TaskState.WORKING),
                (waiting, TaskState.INPUT_REQUIRED),
                *((task, TaskState.WORKING) for task, _, _ in streams),
            ]
            histories = [await history_of(served, task) for task, _ in tasks]
            for task, _ in tasks:
                await matrix.probe_all(task)
            for (task, state), history in zip(tasks, histories, strict=True):
                await untouched(matrix, task, state, history)
                for vantage in reach(task.owner):
                    for binding in BINDINGS:
                        await sees(matrix, task, binding, vantage, state)
            await continues(matrix, waiting)
            await cancels(matrix, working.owner, holding)
            await cancels(matrix, waiting.owner, interviewing)
            for task, stream, gate in streams:
                await finishes(matrix, task, stream, gate)

    verify(scenario)
