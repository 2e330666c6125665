"""Spec rules of `AgentService` not pinned elsewhere, each test citing its R-line: a repeated
cancel changes nothing (R-TASK-11); push configs persist through a task's turns until it
ends or they are deleted (R-PUSH-2); one context id is one conversation across tasks
(R-CTX-6, R-CTX-16); in-task authorization is tracked as a task, explained, resumed by the
next message, and grants nothing by itself (R-SEC-7..9, R-SEC-12, R-SEC-18, R-SEC-20);
results come back as artifacts of a task (R-MSG-1, R-MSG-2)."""

from __future__ import annotations

import pytest

from parley.model import (
    CancelTaskRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from parley.protocol.errors import TaskNotCancelableError, TaskNotFoundError
from parley.server.agent import Agent
from parley.server.context import CallContext, Caller
from parley.server.task_context import TaskContext
from tests.server.support import (
    ALICE,
    BOB,
    as_task,
    get,
    run,
    send,
    serve,
    text_of,
    wait_for_state,
)

HOOK = "https://client.example.com/hook"


def asking_agent(*, question: str = "What is your name?", auth: bool = False) -> Agent:
    agent = Agent("Asker", push_notifications=True)

    @agent.skill()
    async def turn(task: TaskContext) -> str:
        move = task.auth_required if auth else task.ask
        reply = await move(question)
        return f"got {text_of(reply)} from {task.caller.id} with {sorted(task.caller.scopes)}"

    return agent


def test_a_repeated_cancel_changes_nothing() -> None:
    """R-TASK-11: the second cancel of a canceled task is refused as the first one's
    result stands: the task keeps its state, generation and history."""
    service, _ = serve(asking_agent())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hi")))
        canceled = await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        assert canceled.status.state is TaskState.CANCELED
        for _ in range(2):
            with pytest.raises(TaskNotCancelableError) as caught:
                await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
            assert caught.value.metadata == {"taskId": task.id}
        after = await get(service, task.id)
        assert after.status.state is TaskState.CANCELED
        assert after.generation == canceled.generation
        assert after.history == canceled.history

    run(main())


def test_a_cancel_of_a_task_never_made_is_not_found_every_time() -> None:
    service, _ = serve(asking_agent())

    async def main() -> None:
        for _ in range(2):
            with pytest.raises(TaskNotFoundError):
                await service.cancel_task(ALICE, CancelTaskRequest(id="never"))

    run(main())


def test_push_configs_persist_through_the_tasks_turns() -> None:
    """R-PUSH-2: a config stays until the task completes or it is deleted — a follow-up
    turn does not drop it, and one set inline with the follow-up joins it."""
    service, _ = serve(asking_agent())

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("hi")))
        await service.create_task_push_notification_config(
            ALICE, TaskPushNotificationConfig(url=HOOK, task_id=task.id, id="first")
        )
        inline = TaskPushNotificationConfig(url=HOOK + "/2", id="second")
        second = as_task(
            await service.send_message(ALICE, send("Ada", task_id=task.id, push=inline))
        )
        assert second.status.state is TaskState.COMPLETED
        listed = await service.list_task_push_notification_configs(
            ALICE, ListTaskPushNotificationConfigsRequest(task_id=task.id)
        )
        assert sorted(config.id for config in listed.configs) == ["first", "second"]
        first = await service.get_task_push_notification_config(
            ALICE, GetTaskPushNotificationConfigRequest(task_id=task.id, id="first")
        )
        assert first.url == HOOK

    run(main())


def test_one_context_is_one_conversation_across_tasks() -> None:
    """R-CTX-6/R-CTX-16: tasks sent with the same context id belong together: the agent
    sees the shared context, and ListTasks by context finds exactly them."""
    seen: list[tuple[str, str]] = []
    agent = Agent("Context")

    @agent.skill()
    async def remember(task: TaskContext) -> str:
        seen.append((task.context_id, task.text))
        return task.text

    service, _ = serve(agent)

    async def main() -> tuple[list[Task], list[Task]]:
        first = as_task(await service.send_message(ALICE, send("one")))
        second = as_task(
            await service.send_message(ALICE, send("two", context_id=first.context_id))
        )
        other = as_task(await service.send_message(ALICE, send("three")))
        assert second.id != first.id
        assert other.context_id != first.context_id
        together = await service.list_tasks(
            ALICE, ListTasksRequest(context_id=first.context_id, include_artifacts=True)
        )
        apart = await service.list_tasks(
            ALICE, ListTasksRequest(context_id=other.context_id, include_artifacts=True)
        )
        return list(together.tasks), list(apart.tasks)

    together, apart = run(main())
    assert sorted(task.text for task in together) == ["one", "two"]
    assert [task.text for task in apart] == ["three"]
    assert seen[0][0] == seen[1][0] != seen[2][0]


def test_in_task_authorization_is_a_task_explained_in_its_status() -> None:
    """R-SEC-7/R-SEC-8/R-SEC-9: the work is a Task, in AUTH_REQUIRED, whose status message
    says what is needed."""
    service, _ = serve(asking_agent(question="Sign in at the portal, then say done", auth=True))

    async def main() -> Task:
        return as_task(await service.send_message(ALICE, send("pay")))

    task = run(main())
    assert task.status.state is TaskState.AUTH_REQUIRED
    assert text_of(task.status.message) == "Sign in at the portal, then say done"
    assert task.id


def test_a_task_in_auth_required_takes_the_next_message() -> None:
    """R-SEC-12: the credentials came out of band; the next message resumes the task."""
    service, _ = serve(asking_agent(auth=True))

    async def main() -> Task:
        task = as_task(await service.send_message(ALICE, send("pay")))
        return as_task(await service.send_message(ALICE, send("done", task_id=task.id)))

    done = run(main())
    assert done.status.state is TaskState.COMPLETED
    assert done.text == "got done from alice with []"


def test_auth_required_grants_nothing_to_another_caller() -> None:
    """R-SEC-18/R-SEC-20: the AUTH_REQUIRED transition authorizes nobody: another caller's
    message to the task is refused as for any task it cannot see, and the task waits on."""
    service, _ = serve(asking_agent(auth=True))

    async def main() -> Task:
        task = as_task(await service.send_message(ALICE, send("pay")))
        with pytest.raises(TaskNotFoundError):
            await service.send_message(BOB, send("done", task_id=task.id))
        return await get(service, task.id)

    assert run(main()).status.state is TaskState.AUTH_REQUIRED


def test_the_resumed_turn_runs_with_the_callers_own_scopes_only() -> None:
    """R-SEC-20: answering AUTH_REQUIRED adds no scope to the caller: the resumed agent sees
    the caller as authenticated for this call, nothing more."""
    service, _ = serve(asking_agent(auth=True))
    scoped = CallContext(caller=Caller(id="alice", scopes=frozenset({"read"})))

    async def main() -> Task:
        task = as_task(await service.send_message(scoped, send("pay")))
        return as_task(await service.send_message(scoped, send("done", task_id=task.id)))

    assert run(main()).text == "got done from alice with ['read']"


def test_a_non_blocking_auth_required_is_seen_by_polling() -> None:
    """R-SEC-14 (the server's half): a client without a stream finds the state by GetTask."""
    service, _ = serve(asking_agent(auth=True))

    async def main() -> Task:
        task = as_task(await service.send_message(ALICE, send("pay", return_immediately=True)))
        return await wait_for_state(service, task.id, TaskState.AUTH_REQUIRED)

    assert text_of(run(main()).status.message) == "What is your name?"


def test_a_returned_result_is_an_artifact_of_the_task_not_a_message() -> None:
    """R-MSG-1/R-MSG-2: what the agent returns is the task's artifact; its history holds
    only the messages exchanged."""
    agent = Agent("Worker")

    @agent.skill()
    async def work(task: TaskContext) -> str:
        await task.update("working on it")
        return "the result"

    service, _ = serve(agent)
    task = as_task(run(service.send_message(ALICE, send("go"))))
    assert task.status.state is TaskState.COMPLETED
    assert [artifact.text for artifact in task.artifacts] == ["the result"]
    assert all("the result" not in message.text for message in task.history)
