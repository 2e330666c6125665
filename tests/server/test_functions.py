"""`FunctionExecutor`'s tasks: called by the runner, an agent function runs in its run's own
asyncio task, which goes on holding it while it waits for the user (the run ends there);
behind a wrapper it runs in a task of its own. Either way a follow-up resumes it, its
errors fail the task, and a cancel stops it."""

from __future__ import annotations

import asyncio

from parley.model import CancelTaskRequest, TaskState
from parley.server.agent import Agent
from parley.server.execution import AgentExecutor, EventSink, RequestContext
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.server.support import ALICE, as_task, get, run, send, serve, settle, text_of


def test_a_function_runs_in_its_runs_own_task() -> None:
    agent = Agent("Gated")
    gate = asyncio.Event()

    @agent.skill()
    async def gated(task: TaskContext) -> str:
        await task.update("waiting")
        await gate.wait()
        return "done"

    service, _ = serve(agent)

    async def main() -> None:
        before = len(asyncio.all_tasks())
        task = as_task(await service.send_message(ALICE, send("go", return_immediately=True)))
        await settle()
        assert len(asyncio.all_tasks()) == before + 1  # the run, which runs the function
        gate.set()
        await settle()
        assert len(asyncio.all_tasks()) == before
        assert (await get(service, task.id)).status.state is TaskState.COMPLETED

    run(main())


def test_the_task_of_a_paused_function_holds_it_for_the_next_runs() -> None:
    """The run ends when the function asks; the follow-ups resume it in the same task."""
    agent = Agent("Form")
    tasks: list[asyncio.Task[object] | None] = []

    @agent.skill()
    async def form(task: TaskContext) -> str:
        tasks.append(asyncio.current_task())
        name = await task.ask("name?")
        tasks.append(asyncio.current_task())
        age = await task.ask("age?")
        tasks.append(asyncio.current_task())
        return f"{text_of(name)}, {text_of(age)}"

    service, executor = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("start")))
        await settle()
        assert service.runner.live_count() == 0  # no run: the function waits
        assert executor.session_count() == 1
        task = as_task(await service.send_message(ALICE, send("Ada", task_id=task.id)))
        assert text_of(task.status.message) == "age?"
        task = as_task(await service.send_message(ALICE, send("36", task_id=task.id)))
        assert task.status.state is TaskState.COMPLETED
        assert task.artifacts[0].parts[0].text == "Ada, 36"
        await settle()
        assert executor.session_count() == 0
        assert service.runner.live_count() == 0
        assert len(set(tasks)) == 1
        assert tasks[0] is not asyncio.current_task()

    run(main())


def test_an_error_after_a_resume_fails_the_task_in_the_run_that_resumed_it() -> None:
    agent = Agent("Fragile")

    @agent.skill()
    async def fragile(task: TaskContext) -> str:
        await task.ask("really?")
        raise RuntimeError("broken")

    service, executor = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("start")))
        task = as_task(await service.send_message(ALICE, send("yes", task_id=task.id)))
        assert task.status.state is TaskState.FAILED
        assert "failed" in text_of(task.status.message)
        await settle()
        assert executor.session_count() == 0
        assert service.runner.live_count() == 0

    run(main())


def test_a_cancel_stops_a_paused_function() -> None:
    agent = Agent("Asker")
    stopped = asyncio.Event()

    @agent.skill()
    async def asker(task: TaskContext) -> str:
        try:
            await task.ask("?")
        except asyncio.CancelledError:
            stopped.set()
            raise
        return "never"

    service, executor = serve(agent)

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("x")))
        canceled = await service.cancel_task(ALICE, CancelTaskRequest(id=task.id))
        assert canceled.status.state is TaskState.CANCELED
        assert stopped.is_set()
        assert executor.session_count() == 0
        await settle()
        assert service.runner.live_count() == 0

    run(main())


class _Wrapped:
    """An executor between the runner and the function executor (as tracing is): it must
    see each run end."""

    def __init__(self, executor: AgentExecutor) -> None:
        self.executor = executor
        self.returned: list[str] = []

    async def execute(self, context: RequestContext, events: EventSink) -> None:
        await self.executor.execute(context, events)
        self.returned.append(context.message.parts[0].text)

    async def cancel(self, context: RequestContext) -> None:
        await self.executor.cancel(context)


def test_behind_a_wrapper_a_function_runs_in_a_task_of_its_own() -> None:
    agent = Agent("Form")

    @agent.skill()
    async def form(task: TaskContext) -> str:
        name = await task.ask("name?")
        return text_of(name)

    wrapped = _Wrapped(agent.executor())
    service = AgentService(wrapped, agent.card("http://test"))

    async def main() -> None:
        task = as_task(await service.send_message(ALICE, send("start")))
        await settle()
        assert wrapped.returned == ["start"]  # its run ended as the function paused
        task = as_task(await service.send_message(ALICE, send("Ada", task_id=task.id)))
        assert task.status.state is TaskState.COMPLETED
        await settle()
        assert wrapped.returned == ["start", "Ada"]

    run(main())
