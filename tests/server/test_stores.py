"""The in-memory stores: versioned task saves (a stale write raises), scoping by
(tenant, caller), ListTasks filtering and paging; push configs scoped the same way
(R-SCOPE-1..8, R-TASK-4..9, R-PUSH-5/7)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from msgspec.structs import replace

from parley.model import (
    ListTasksRequest,
    Message,
    Role,
    Task,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from parley.server.stores import (
    InMemoryPushConfigStore,
    InMemoryTaskStore,
    Scope,
    StaleWriteError,
    StoredTask,
    TaskPage,
)
from tests.server.support import T0, run

ALICE: Scope = ("", "alice")
BOB: Scope = ("", "bob")
ALICE_ELSEWHERE: Scope = ("tenant-2", "alice")


def make_task(
    task_id: str,
    *,
    context_id: str = "c",
    state: TaskState = TaskState.WORKING,
    minute: int | None = 0,
) -> Task:
    stamp = None if minute is None else T0 + timedelta(minutes=minute)
    first = Message(message_id=f"m-{task_id}", role=Role.USER, parts=(TextPart(text=task_id),))
    return Task(
        id=task_id,
        context_id=context_id,
        status=TaskStatus(state=state, timestamp=stamp),
        history=(first,),
    )


def update(task: Task, state: TaskState) -> tuple[Task, tuple[TaskStatusUpdateEvent]]:
    status = TaskStatus(state=state, timestamp=T0 + timedelta(hours=1))
    event = TaskStatusUpdateEvent(task_id=task.id, context_id=task.context_id, status=status)
    return replace(task, status=status), (event,)


# ----------------------------------------------------------------------------- tasks


def test_create_get_and_versioned_save() -> None:
    async def main() -> None:
        store = InMemoryTaskStore()
        created = await store.create(ALICE, make_task("t1"))
        assert created == StoredTask(task=make_task("t1"), version=1)
        assert await store.get(ALICE, "t1") == created
        working, events = update(created.task, TaskState.COMPLETED)
        saved = await store.save(ALICE, working, events, expected_version=1)
        assert saved.version == 2
        assert (await store.get(ALICE, "t1")) == saved
        assert len(store) == 1

    run(main())


def test_a_stale_write_raises_and_changes_nothing() -> None:
    async def main() -> None:
        store = InMemoryTaskStore()
        created = await store.create(ALICE, make_task("t1"))
        first, events = update(created.task, TaskState.INPUT_REQUIRED)
        await store.save(ALICE, first, events, expected_version=1)
        second, events = update(created.task, TaskState.FAILED)
        for version in (1, 0, 3):
            with pytest.raises(StaleWriteError):
                await store.save(ALICE, second, events, expected_version=version)
        stored = await store.get(ALICE, "t1")
        assert stored is not None
        assert (stored.version, stored.task.status.state) == (2, TaskState.INPUT_REQUIRED)

    run(main())


def test_creating_a_task_twice_or_saving_an_unknown_one_raises() -> None:
    async def main() -> None:
        store = InMemoryTaskStore()
        await store.create(ALICE, make_task("t1"))
        with pytest.raises(StaleWriteError):
            await store.create(ALICE, make_task("t1"))
        task, events = update(make_task("ghost"), TaskState.COMPLETED)
        with pytest.raises(StaleWriteError):
            await store.save(ALICE, task, events, expected_version=1)

    run(main())


@pytest.mark.parametrize("other", [BOB, ALICE_ELSEWHERE], ids=["other-caller", "other-tenant"])
def test_tasks_are_scoped(other: Scope) -> None:
    """R-SCOPE-1/3/6: another scope cannot read, overwrite or list the task; the same id
    may exist independently in each scope."""

    async def main() -> None:
        store = InMemoryTaskStore()
        created = await store.create(ALICE, make_task("t1"))
        assert await store.get(other, "t1") is None
        task, events = update(created.task, TaskState.CANCELED)
        with pytest.raises(StaleWriteError):
            await store.save(other, task, events, expected_version=1)
        page = await store.list(other, ListTasksRequest(), 50)
        assert page == TaskPage(tasks=(), next_page_token="", total_size=0)
        theirs = await store.create(other, make_task("t1", state=TaskState.SUBMITTED))
        assert theirs.version == 1
        assert await store.get(ALICE, "t1") == created
        assert len(store) == 2

    run(main())


def test_list_filters_and_orders() -> None:
    """R-TASK-7 order (status timestamp descending, ties by id, untimed last) and the
    §8.5 filters."""

    async def main() -> None:
        store = InMemoryTaskStore()
        for task in (
            make_task("a", minute=1, context_id="c1", state=TaskState.COMPLETED),
            make_task("b", minute=3, context_id="c2"),
            make_task("c", minute=2, context_id="c1"),
            make_task("d", minute=3, context_id="c1", state=TaskState.COMPLETED),
            make_task("e", minute=None, context_id="c2"),
        ):
            await store.create(ALICE, task)
        await store.create(BOB, make_task("z", minute=9))

        async def ids(request: ListTasksRequest, size: int = 50) -> list[str]:
            return [t.id for t in (await store.list(ALICE, request, size)).tasks]

        assert await ids(ListTasksRequest()) == ["d", "b", "c", "a", "e"]
        assert await ids(ListTasksRequest(context_id="c1")) == ["d", "c", "a"]
        assert await ids(ListTasksRequest(status=TaskState.COMPLETED)) == ["d", "a"]
        assert await ids(ListTasksRequest(context_id="c2", status=TaskState.WORKING)) == [
            "b",
            "e",
        ]
        after = T0 + timedelta(minutes=2)
        assert await ids(ListTasksRequest(status_timestamp_after=after)) == ["d", "b", "c"]
        page = await store.list(ALICE, ListTasksRequest(context_id="c1"), 50)
        assert page.total_size == 3

    run(main())


def test_list_pages_with_cursor_tokens() -> None:
    """R-TASK-4/6: tokens continue after the last task of the previous page; the last
    page has an empty token; total_size counts all matches."""

    async def main() -> None:
        store = InMemoryTaskStore()
        for minute in range(7):
            await store.create(ALICE, make_task(f"t{minute}", minute=minute))
        seen: list[str] = []
        token = ""
        sizes: list[int] = []
        while True:
            page = await store.list(ALICE, ListTasksRequest(page_token=token), 3)
            assert page.total_size == 7
            seen += [t.id for t in page.tasks]
            sizes.append(len(page.tasks))
            token = page.next_page_token
            if not token:
                break
        assert sizes == [3, 3, 1]
        assert seen == [f"t{m}" for m in reversed(range(7))]

    run(main())


def test_a_task_updated_between_pages_is_not_repeated() -> None:
    """The cursor is a position, so a task that moves to the top is neither repeated
    nor does it shift the tasks that did not change."""

    async def main() -> None:
        store = InMemoryTaskStore()
        for minute in range(4):
            await store.create(ALICE, make_task(f"t{minute}", minute=minute))
        first = await store.list(ALICE, ListTasksRequest(), 2)
        assert [t.id for t in first.tasks] == ["t3", "t2"]
        stored = await store.get(ALICE, "t0")
        assert stored is not None
        moved, events = update(stored.task, TaskState.COMPLETED)
        await store.save(ALICE, moved, events, stored.version)
        second = await store.list(ALICE, ListTasksRequest(page_token=first.next_page_token), 2)
        assert [t.id for t in second.tasks] == ["t1"]
        assert second.next_page_token == ""

    run(main())


# ----------------------------------------------------------------------------- push configs


def config(
    config_id: str, task_id: str = "t1", url: str = "https://h/1"
) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(url=url, task_id=task_id, id=config_id)


def test_push_configs_put_get_list_delete() -> None:
    """R-PUSH-3/5/6/7: put replaces by id; delete is idempotent."""

    async def main() -> None:
        store = InMemoryPushConfigStore()
        await store.put(ALICE, config("a"))
        await store.put(ALICE, config("b"))
        await store.put(ALICE, config("a", url="https://h/2"))
        await store.put(ALICE, config("other-task", task_id="t2"))
        got = await store.get(ALICE, "t1", "a")
        assert got is not None
        assert got.url == "https://h/2"
        assert [c.id for c in await store.list(ALICE, "t1")] == ["a", "b"]
        await store.delete(ALICE, "t1", "a")
        await store.delete(ALICE, "t1", "a")
        await store.delete(ALICE, "t1", "never")
        await store.delete(ALICE, "t9", "never")
        assert await store.get(ALICE, "t1", "a") is None
        assert [c.id for c in await store.list(ALICE, "t1")] == ["b"]
        await store.delete(ALICE, "t1", "b")
        assert await store.list(ALICE, "t1") == ()
        assert [c.id for c in await store.list(ALICE, "t2")] == ["other-task"]

    run(main())


@pytest.mark.parametrize("other", [BOB, ALICE_ELSEWHERE], ids=["other-caller", "other-tenant"])
def test_push_configs_are_scoped(other: Scope) -> None:
    """R-SCOPE-7, R-PUSH-4: configs are invisible and untouchable from another scope."""

    async def main() -> None:
        store = InMemoryPushConfigStore()
        await store.put(ALICE, config("a"))
        assert await store.get(other, "t1", "a") is None
        assert await store.list(other, "t1") == ()
        await store.delete(other, "t1", "a")
        await store.put(other, config("a", url="https://theirs"))
        mine = await store.get(ALICE, "t1", "a")
        assert mine is not None
        assert mine.url == "https://h/1"
        theirs = await store.get(other, "t1", "a")
        assert theirs is not None
        assert theirs.url == "https://theirs"

    run(main())


def test_a_stored_push_config_carries_the_scopes_tenant() -> None:
    async def main() -> None:
        store = InMemoryPushConfigStore()
        await store.put(ALICE_ELSEWHERE, replace(config("a"), tenant="spoofed"))
        stored = await store.get(ALICE_ELSEWHERE, "t1", "a")
        assert stored is not None
        assert stored.tenant == "tenant-2"

    run(main())
