"""Skills that need scopes (`Agent.skill(scopes=...)`): the card declares them on the skill
in terms of the agent's schemes, and a message going to such a skill from a caller without
them is refused with PermissionDeniedError before any task exists — a follow-up is checked
against the suspended skill it resumes, and only once the task is known to be the caller's
(another's task stays TaskNotFound)."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from parley.model import (
    GetTaskRequest,
    ListTasksRequest,
    Message,
    SecurityRequirement,
    StreamEvent,
    Task,
    TaskState,
    TextPart,
)
from parley.protocol.errors import PermissionDeniedError, TaskNotFoundError
from parley.server.agent import SKILL_METADATA_KEY, Agent
from parley.server.auth import ApiKeys, BearerTokens, Security
from parley.server.context import CallContext, Caller
from parley.server.execution import RequestContext
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.server.support import run, send, user

WRITE = "reports:write"
READER = CallContext(caller=Caller(id="alice", scopes=frozenset({"reports:read"})))
WRITER = CallContext(caller=Caller(id="alice", scopes=frozenset({"reports:read", WRITE})))
OTHER_WRITER = CallContext(caller=Caller(id="bob", scopes=frozenset({WRITE})))


def reports_agent(security: Security | None = None) -> Agent:
    agent = Agent("Reports", security=security)

    @agent.skill()
    async def read(task: TaskContext) -> str:
        return "report"

    @agent.skill(scopes=[WRITE])
    async def write(task: TaskContext) -> str:
        return "written"

    @agent.skill(scopes=[WRITE, "reports:approve"])
    async def approve(task: TaskContext) -> str:
        reply = await task.ask("Sure?")
        return f"approved: {reply.text}"

    return agent


def to(skill: str, text: str = "go", task_id: str = "") -> Message:
    return user(text, task_id=task_id, metadata={SKILL_METADATA_KEY: skill})


def sent(service: AgentService, ctx: CallContext, message: Message) -> Task:
    async def scenario() -> Task:
        result = await service.send_message(ctx, replace(send(), message=message))
        assert isinstance(result, Task)
        return result

    return run(scenario())


def listed(service: AgentService, ctx: CallContext) -> tuple[Task, ...]:
    return run(service.list_tasks(ctx, ListTasksRequest())).tasks


def test_the_card_declares_each_skills_scopes_on_the_agents_schemes() -> None:
    security = Security(ApiKeys({"k": "kim"}), BearerTokens({"t": "tim"}))
    card = reports_agent(security).card("http://reports.example")
    declared = {skill.id: skill.security_requirements for skill in card.skills}
    assert declared["read"] == ()
    assert declared["write"] == (
        SecurityRequirement(schemes={"apiKey": (WRITE,)}),
        SecurityRequirement(schemes={"bearer": (WRITE,)}),
    )
    assert declared["approve"][0] == SecurityRequirement(
        schemes={"apiKey": ("reports:approve", WRITE)}
    )
    both = Security(
        ApiKeys({"k": "kim"}), BearerTokens({"t": "tim"}), require=[["apiKey", "bearer"]]
    )
    card = reports_agent().card("http://reports.example", security=both)  # as `parley serve`
    (requirement,) = card.skills[1].security_requirements
    assert requirement == SecurityRequirement(schemes={"apiKey": (WRITE,), "bearer": ()})
    assert set(card.security_schemes) == {"apiKey", "bearer"}


def test_without_security_nothing_is_declared() -> None:
    card = reports_agent().card("http://reports.example")
    assert all(skill.security_requirements == () for skill in card.skills)


def test_a_caller_without_the_scopes_is_refused_before_any_task() -> None:
    agent = reports_agent()
    service = AgentService(agent.executor(), agent.card("http://t"))
    with pytest.raises(PermissionDeniedError, match=WRITE):
        sent(service, READER, to("write"))
    assert listed(service, READER) == ()
    assert sent(service, READER, to("read")).status.state is TaskState.COMPLETED
    assert sent(service, READER, user("no skill named")).status.state is TaskState.COMPLETED
    written = sent(service, WRITER, to("write"))
    assert written.status.state is TaskState.COMPLETED
    assert written.artifacts[0].parts == (TextPart(text="written"),)


def test_a_follow_up_is_checked_against_the_skill_it_resumes() -> None:
    agent = reports_agent()
    service = AgentService(agent.executor(), agent.card("http://t"))
    approver = CallContext(caller=Caller(id="alice", scopes=frozenset({WRITE, "reports:approve"})))

    async def sending(ctx: CallContext, message: Message) -> Task:
        result = await service.send_message(ctx, replace(send(), message=message))
        assert isinstance(result, Task)
        return result

    async def scenario() -> None:  # one event loop: the suspended skill lives in it
        asked = await sending(approver, to("approve"))
        assert asked.status.state is TaskState.INPUT_REQUIRED
        # The same principal, now with fewer scopes, names no skill: still the approve skill.
        with pytest.raises(PermissionDeniedError, match="reports:approve"):
            await sending(WRITER, user("yes", task_id=asked.id))
        # Another principal learns nothing about the task: it is not found, as any other.
        with pytest.raises(TaskNotFoundError):
            await sending(OTHER_WRITER, user("yes", task_id=asked.id))
        still = await service.get_task(approver, GetTaskRequest(id=asked.id))
        assert still.status.state is TaskState.INPUT_REQUIRED
        done = await sending(approver, user("yes", task_id=asked.id))
        assert done.status.state is TaskState.COMPLETED
        assert done.artifacts[0].parts == (TextPart(text="approved: yes"),)

    run(scenario())


def test_an_executor_driven_by_another_handler_still_checks() -> None:
    """Without AgentService's check first, the executor refuses to start the skill: the
    run fails before the function is called."""
    agent = reports_agent()
    executor = agent.executor()
    message = to("write")
    context = RequestContext(message=message, task_id="t-1", context_id="c-1", call=READER)

    class Sink:
        async def emit(self, event: StreamEvent) -> None:
            raise AssertionError("the skill ran")

    with pytest.raises(PermissionDeniedError):
        run(executor.execute(context, Sink()))
    assert executor.session_count() == 0
    executor.admit(WRITER, message)  # with the scopes: admitted
