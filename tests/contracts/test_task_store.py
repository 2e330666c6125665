"""The TaskStore contract, against every backend (memory, SQLite, PostgreSQL): versioned
saves (a stale write raises and changes nothing), events appended and the task read back
exactly as folded, scoping in every method (R-SCOPE-1..8), ListTasks filters, order,
shaping and cursor paging (R-TASK-1..9), restart recovery and purging."""

from __future__ import annotations

from datetime import timedelta

import pytest
from msgspec.structs import replace

from parley.model import (
    Artifact,
    DataPart,
    ListTasksRequest,
    Message,
    RawPart,
    Role,
    Task,
    TaskEvent,
    TaskPushNotificationConfig,
    TaskState,
    TaskStatus,
    TextPart,
    UrlPart,
)
from parley.protocol import folding, paging
from parley.protocol.errors import InvalidParamsError
from parley.server.stores import (
    RESTART_MESSAGE,
    DurableTaskStore,
    StaleWriteError,
    StoredTask,
    TaskPage,
)
from parley.server.stores.namespaces import prefix
from tests.contracts.support import (
    ALICE,
    ALICE_ELSEWHERE,
    BOB,
    T0,
    Clock,
    apply,
    artifact_event,
    make_task,
    move,
    opened,
    run,
    status_event,
    text_message,
    texts,
)

S = TaskState


def test_create_get_and_versioned_save(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as (store, _):
            created = await store.create(ALICE, make_task("t1"))
            assert created == StoredTask(task=make_task("t1"), version=1)
            assert await store.get(ALICE, "t1") == created
            assert await store.get(ALICE, "t2") is None
            saved = await apply(store, ALICE, created, status_event(created.task, S.COMPLETED))
            assert saved.version == 2
            assert saved.task.status.state is S.COMPLETED
            assert await store.get(ALICE, "t1") == saved

    run(main())


def test_a_stale_write_raises_and_changes_nothing(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as (store, _):
            created = await store.create(ALICE, make_task("t1"))
            first = await apply(store, ALICE, created, status_event(created.task, S.INPUT_REQUIRED))
            event = status_event(created.task, S.FAILED, note="late")
            late = replace(created.task, status=event.status)
            for version in (1, 0, 3):
                with pytest.raises(StaleWriteError):
                    await store.save(ALICE, late, (event,), expected_version=version)
            assert await store.get(ALICE, "t1") == first

    run(main())


def test_creating_twice_or_saving_an_unknown_task_raises(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as (store, _):
            await store.create(ALICE, make_task("t1"))
            with pytest.raises(StaleWriteError):
                await store.create(ALICE, make_task("t1", state=S.SUBMITTED))
            ghost = make_task("ghost")
            event = status_event(ghost, S.COMPLETED)
            with pytest.raises(StaleWriteError):
                await store.save(ALICE, replace(ghost, status=event.status), (event,), 1)
            stored = await store.get(ALICE, "t1")
            assert stored == StoredTask(task=make_task("t1"), version=1)

    run(main())


def test_events_are_appended_and_read_back_exactly_as_folded(store_url: str) -> None:
    """Status messages moving to history, messages, metadata merges, new artifacts,
    appended chunks, replaced artifacts: after every save the stored task is the folded
    one, equal in every field."""

    async def main() -> None:
        async with opened(store_url) as (store, _):
            stored = await store.create(ALICE, make_task("t1", state=S.SUBMITTED))
            task = stored.task
            events: list[TaskEvent] = [
                status_event(task, S.WORKING, note="thinking", minute=1, step=1),
                artifact_event(task, "a1", "Hel", name="greeting"),
                artifact_event(task, "a1", "lo", ", world", append=True),
                replace(text_message("agent-said"), task_id=task.id),
                artifact_event(task, "a2", "first"),
                status_event(task, S.WORKING, note="still thinking", minute=2, step=2),
                artifact_event(task, "a2", "second", name="replaced"),
                artifact_event(task, "a3", "x", append=True),
                artifact_event(task, "a2", "third", append=True),
                status_event(task, S.INPUT_REQUIRED, note="your name?", minute=3),
                replace(text_message("user-answer", role=Role.USER), task_id=task.id),
                status_event(task, S.COMPLETED, note="done", minute=4, done=True),
            ]
            for event in events:
                stored = await apply(store, ALICE, stored, event)
                assert await store.get(ALICE, "t1") == stored
            final = stored.task
            assert [m.message_id for m in final.history] == [
                "m-t1",
                "thinking",
                "agent-said",
                "still thinking",
                "your name?",
                "user-answer",
            ]
            assert [(a.artifact_id, a.name, texts(a)) for a in final.artifacts] == [
                ("a1", "greeting", ["Hel", "lo", ", world"]),
                ("a2", "replaced", ["second", "third"]),
                ("a3", "", ["x"]),
            ]
            assert final.metadata == {"step": 2, "done": True}
            assert stored.version == len(events) + 1

    run(main())


def test_several_events_in_one_save(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as (store, _):
            stored = await store.create(ALICE, make_task("t1"))
            task = stored.task
            events = (
                artifact_event(task, "a", "1"),
                artifact_event(task, "a", "2", append=True),
                artifact_event(task, "a", "3"),
                artifact_event(task, "a", "4", append=True),
                status_event(task, S.WORKING, note="n1"),
                status_event(task, S.COMPLETED, note="n2"),
            )
            folded = task
            for event in events:
                folded = folding.apply_event(folded, event)
            saved = await store.save(ALICE, folded, events, 1)
            assert saved == StoredTask(task=folded, version=2)
            assert await store.get(ALICE, "t1") == saved
            assert texts(folded.artifacts[0]) == ["3", "4"]

    run(main())


def test_every_kind_of_content_round_trips(store_url: str) -> None:
    """Parts of every kind, metadata, extensions, reference ids, unicode, microseconds, a
    snapshot with artifacts at creation — and what only the model allows (empty parts,
    an empty message id)."""

    async def main() -> None:
        parts = (
            TextPart(text="héllo \u0000 \U0001f600", media_type="text/plain", filename="a.txt"),
            RawPart(raw=b"\x00\xff bytes", media_type="image/png", filename="x.png"),
            UrlPart(url="https://example.com/f", media_type="application/pdf"),
            DataPart(data={"n": 1.5, "big": 2**53, "list": [None, True, "s"]}, metadata={"k": []}),
            DataPart(data=[1, 2, 3]),
        )
        message = Message(
            message_id="m1",
            role=Role.USER,
            parts=parts,
            context_id="c",
            task_id="t1",
            metadata={"deep": {"er": [1, {"x": "y"}]}},
            extensions=("https://ext/1",),
            reference_task_ids=("t0",),
        )
        odd = Message(message_id="", role=Role.AGENT, parts=())
        task = Task(
            id="t1",
            context_id="c",
            status=TaskStatus(
                state=S.WORKING,
                message=odd,
                timestamp=T0.replace(microsecond=123456),
            ),
            artifacts=(
                Artifact(artifact_id="a", parts=parts, description="d", extensions=("e",)),
                Artifact(artifact_id="empty", parts=(), metadata={"m": 1}),
            ),
            history=(message, odd),
            metadata={"task": "meta", "n": None},
        )
        async with opened(store_url) as (store, _):
            await store.create(ALICE, task)
            stored = await store.get(ALICE, "t1")
            assert stored == StoredTask(task=task, version=1)
            stored = await apply(store, ALICE, stored, status_event(task, S.COMPLETED))
            assert await store.get(ALICE, "t1") == stored
            assert stored.task.history[-1] == odd

    run(main())


@pytest.mark.parametrize("other", [BOB, ALICE_ELSEWHERE], ids=["other-caller", "other-tenant"])
def test_tasks_are_scoped_in_every_method(store_url: str, other: tuple[str, str]) -> None:
    """R-SCOPE-1/3/6: another scope cannot read, overwrite, list, recover or purge the
    task as its own; the same id may exist independently in each scope."""

    async def main() -> None:
        async with opened(store_url) as (store, _):
            created = await store.create(ALICE, make_task("t1"))
            assert await store.get(other, "t1") is None
            event = status_event(created.task, S.CANCELED)
            with pytest.raises(StaleWriteError):
                await store.save(other, replace(created.task, status=event.status), (event,), 1)
            empty = TaskPage(tasks=(), next_page_token="", total_size=0)
            assert await store.list(other, ListTasksRequest(), 50) == empty
            assert await store.list(other, ListTasksRequest(context_id="c"), 50) == empty
            theirs = await store.create(other, make_task("t1", state=S.SUBMITTED, minute=5))
            assert theirs.version == 1
            assert await store.get(ALICE, "t1") == created
            assert await store.get(other, "t1") == theirs
            mine = await apply(store, ALICE, created, status_event(created.task, S.COMPLETED))
            assert await store.get(other, "t1") == theirs
            assert [t.id for t in (await store.list(ALICE, ListTasksRequest(), 50)).tasks] == ["t1"]
            assert (await store.list(other, ListTasksRequest(), 50)).total_size == 1
            # purge and recover act on each scope's own task only
            assert await store.purge(T0 + timedelta(days=36500)) == 1
            assert await store.get(ALICE, "t1") is None
            assert await store.get(other, "t1") == theirs
            assert mine.task.status.state is S.COMPLETED
            assert await store.recover(T0) == 1
            recovered = await store.get(other, "t1")
            assert recovered is not None
            assert recovered.task.status.state is S.FAILED

    run(main())


async def _seed(store: DurableTaskStore) -> None:
    for task in (
        make_task("a", minute=1, context_id="c1", state=S.COMPLETED),
        make_task("b", minute=3, context_id="c2"),
        make_task("c", minute=2, context_id="c1"),
        make_task("d", minute=3, context_id="c1", state=S.COMPLETED),
        make_task("e", minute=None, context_id="c2"),
        make_task("f", minute=None, context_id="c1", state=S.SUBMITTED),
    ):
        await store.create(ALICE, task)
    await store.create(BOB, make_task("z", minute=9))


def test_list_filters_and_orders(store_url: str) -> None:
    """R-TASK-7 order (status timestamp descending, ties by id descending, untimed last)
    and every §8.5 filter, alone and combined; total_size counts all matches."""

    async def main() -> None:
        async with opened(store_url) as (store, _):
            await _seed(store)

            async def ids(**filters: object) -> list[str]:
                page = await store.list(ALICE, ListTasksRequest(**filters), 50)  # type: ignore[arg-type]
                assert page.total_size == len(page.tasks)
                assert page.next_page_token == ""
                return [t.id for t in page.tasks]

            assert await ids() == ["d", "b", "c", "a", "f", "e"]
            assert await ids(context_id="c1") == ["d", "c", "a", "f"]
            assert await ids(context_id="nope") == []
            assert await ids(status=S.COMPLETED) == ["d", "a"]
            assert await ids(context_id="c2", status=S.WORKING) == ["b", "e"]
            assert await ids(status_timestamp_after=T0 + timedelta(minutes=2)) == ["d", "b", "c"]
            after = T0 + timedelta(minutes=2, microseconds=1)
            assert await ids(status_timestamp_after=after, context_id="c1") == ["d"]
            assert await ids(status_timestamp_after=after, status=S.WORKING) == ["b"]

    run(main())


def test_list_shapes_history_and_artifacts(store_url: str) -> None:
    """R-TASK-1/2/3: historyLength keeps the most recent messages (0: none, absent: all);
    artifacts only with includeArtifacts."""

    async def main() -> None:
        async with opened(store_url) as (store, _):
            stored = await store.create(ALICE, make_task("t1"))
            task = stored.task
            stored = await apply(
                store,
                ALICE,
                stored,
                replace(text_message("m2"), task_id="t1"),
                replace(text_message("m3"), task_id="t1"),
                artifact_event(task, "a", "x"),
                artifact_event(task, "a", "y", append=True),
            )
            full = stored.task

            async def listed(**options: object) -> Task:
                page = await store.list(ALICE, ListTasksRequest(**options), 10)  # type: ignore[arg-type]
                (only,) = page.tasks
                return only

            bare = replace(full, artifacts=())
            assert await listed() == bare
            assert await listed(include_artifacts=True) == full
            assert await listed(include_artifacts=False, history_length=0) == replace(
                bare, history=()
            )
            assert await listed(history_length=2) == replace(bare, history=full.history[-2:])
            assert await listed(history_length=3) == bare
            assert await listed(history_length=30, include_artifacts=True) == full
            with pytest.raises(InvalidParamsError):
                await store.list(ALICE, ListTasksRequest(history_length=-1), 10)

    run(main())


def test_get_reads_only_the_history_asked_for(store_url: str) -> None:
    """R-TASK-1/2: GetTask's historyLength is applied by the store's read (None: all;
    0: none; n: the n most recent), artifacts always included, version unchanged."""

    async def main() -> None:
        async with opened(store_url) as (store, _):
            stored = await store.create(ALICE, make_task("t1"))
            stored = await apply(
                store,
                ALICE,
                stored,
                replace(text_message("m2"), task_id="t1"),
                replace(text_message("m3"), task_id="t1"),
                artifact_event(stored.task, "a", "x"),
            )
            full = stored.task
            assert len(full.history) == 3

            async def got(history_length: int | None) -> Task:
                found = await store.get(ALICE, "t1", history_length=history_length)
                assert found is not None
                assert found.version == stored.version
                return found.task

            assert await got(None) == full
            assert await got(0) == replace(full, history=())
            assert await got(2) == replace(full, history=full.history[-2:])
            assert await got(3) == full
            assert await got(30) == full
            assert await store.get(ALICE_ELSEWHERE, "t1", history_length=1) is None

    run(main())


def test_list_pages_with_cursor_tokens(store_url: str) -> None:
    """R-TASK-4/6: tokens continue after the last task of the previous page; the last
    page has an empty token; total_size counts every match."""

    async def main() -> None:
        async with opened(store_url) as (store, _):
            for minute in range(7):
                await store.create(ALICE, make_task(f"t{minute}", minute=minute))
            await store.create(ALICE, make_task("untimed", minute=None))
            seen: list[str] = []
            sizes: list[int] = []
            token = ""
            while True:
                page = await store.list(ALICE, ListTasksRequest(page_token=token), 3)
                assert page.total_size == 8
                seen += [t.id for t in page.tasks]
                sizes.append(len(page.tasks))
                token = page.next_page_token
                if not token:
                    break
            assert sizes == [3, 3, 2]
            assert seen == [f"t{m}" for m in reversed(range(7))] + ["untimed"]
            exact = await store.list(ALICE, ListTasksRequest(), 8)
            assert exact.next_page_token == ""

    run(main())


def test_paging_stays_correct_while_tasks_are_inserted_and_updated(store_url: str) -> None:
    """The cursor is a position: a task inserted or moved to the top after the first page
    is neither repeated nor shifts the rest; tasks that did not move are each listed
    exactly once."""

    async def main() -> None:
        async with opened(store_url) as (store, _):
            for minute in range(10):
                await store.create(ALICE, make_task(f"t{minute}", minute=minute))
            first = await store.list(ALICE, ListTasksRequest(), 3)
            assert [t.id for t in first.tasks] == ["t9", "t8", "t7"]
            await store.create(ALICE, make_task("new", minute=30))
            await move(store, ALICE, "t2", S.COMPLETED, minute=40)  # from page 3 to the top
            await move(store, ALICE, "t8", S.COMPLETED, minute=41)  # already listed
            await store.create(ALICE, make_task("t55", minute=5))  # ties with t5, sorts before
            rest: list[str] = []
            token = first.next_page_token
            while token:
                page = await store.list(ALICE, ListTasksRequest(page_token=token), 3)
                rest += [t.id for t in page.tasks]
                token = page.next_page_token
            assert rest == ["t6", "t55", "t5", "t4", "t3", "t1", "t0"]

    run(main())


@pytest.mark.parametrize("size", [0, -1, 101, 1000])
def test_page_size_out_of_range_is_refused(store_url: str, size: int) -> None:
    """R-TASK-9: 1..100, refused (never clamped) outside."""

    async def main() -> None:
        async with opened(store_url) as (store, _):
            with pytest.raises(InvalidParamsError):
                await store.list(ALICE, ListTasksRequest(), size)
            assert len((await store.list(ALICE, ListTasksRequest(), 100)).tasks) == 0
            assert len((await store.list(ALICE, ListTasksRequest(), 1)).tasks) == 0

    run(main())


def test_a_bad_page_token_is_refused(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as (store, _):
            for token in (
                "garbage",
                "AAAA",
                paging.encode_page_token(paging.PageCursor(timestamp=T0, task_id="x"))[:-2],
            ):
                with pytest.raises(InvalidParamsError):
                    await store.list(ALICE, ListTasksRequest(page_token=token), 10)

    run(main())


def test_recover_fails_the_tasks_left_running(store_url: str) -> None:
    """The restart policy: SUBMITTED and WORKING tasks of every scope move to FAILED
    with a status message (the previous one goes to history); others are untouched."""

    async def main() -> None:
        async with opened(store_url) as (store, _):
            working = await store.create(ALICE, make_task("working"))
            working = await apply(
                store, ALICE, working, status_event(working.task, S.WORKING, note="busy")
            )
            await store.create(BOB, make_task("submitted", state=S.SUBMITTED))
            waiting = await store.create(ALICE, make_task("waiting", state=S.INPUT_REQUIRED))
            done = await store.create(ALICE, make_task("done", state=S.COMPLETED))
            now = T0 + timedelta(days=1)
            assert await store.recover(now) == 2
            assert await store.recover(now) == 0
            for scope, task_id, before in ((ALICE, "working", working), (BOB, "submitted", None)):
                stored = await store.get(scope, task_id)
                assert stored is not None
                status = stored.task.status
                assert status.state is S.FAILED
                assert status.timestamp == now
                assert status.message is not None
                assert status.message.parts == (TextPart(text=RESTART_MESSAGE),)
                assert status.message.role is Role.AGENT
                if before is not None:
                    assert stored.version == before.version + 1
                    assert stored.task.history[-1].message_id == "busy"
            assert await store.get(ALICE, "waiting") == waiting
            assert await store.get(ALICE, "done") == done

    run(main())


def test_recover_in_a_namespace_fails_that_agents_tasks_only(store_url: str) -> None:
    """Agents sharing a store: recovery with a namespace touches the tasks stored under
    it, in every (tenant, caller) scope of it, and no one else's ("": the unnamespaced)."""

    async def main() -> None:
        async with opened(store_url) as (store, _):
            mine = [(prefix("Weather") + tenant, caller) for tenant, caller in (ALICE, BOB)]
            others = [(prefix("Travel") + ALICE[0], ALICE[1]), ALICE, ALICE_ELSEWHERE]
            for scope in (*mine, *others):
                await store.create(scope, make_task("t"))
            assert await store.recover(T0, namespace="Weather") == 2
            for scope in mine:
                assert await _state(store, scope) is S.FAILED
            for scope in others:
                assert await _state(store, scope) is S.WORKING
            assert await store.recover(T0, namespace="") == 2
            assert await _state(store, others[0]) is S.WORKING

    run(main())


async def _state(store: DurableTaskStore, scope: tuple[str, str]) -> TaskState:
    stored = await store.get(scope, "t")
    assert stored is not None
    return stored.task.status.state


def test_purge_measures_a_task_from_when_it_finished(store_url: str) -> None:
    """A task created, and worked on, before the cutoff but finished after it stays."""

    async def main() -> None:
        clock = Clock()
        async with opened(store_url, clock) as (store, _):
            created = await store.create(ALICE, make_task("late"))
            clock.advance(timedelta(days=1))
            working = await apply(store, ALICE, created, artifact_event(created.task, "a", "x"))
            clock.advance(timedelta(days=9))
            await apply(store, ALICE, working, status_event(working.task, S.COMPLETED))
            assert await store.purge(T0 + timedelta(days=5)) == 0
            assert await store.get(ALICE, "late") is not None
            assert await store.purge(T0 + timedelta(days=11)) == 1

    run(main())


def test_purge_deletes_old_terminal_tasks_with_their_rows(store_url: str) -> None:
    async def main() -> None:
        clock = Clock()
        async with opened(store_url, clock) as (store, push):
            old = await store.create(ALICE, make_task("old"))
            await apply(
                store,
                ALICE,
                old,
                artifact_event(old.task, "a", "x"),
                status_event(old.task, S.COMPLETED, note="bye"),
            )
            await push.put(
                ALICE, TaskPushNotificationConfig(url="https://h", task_id="old", id="p")
            )
            await store.create(ALICE, make_task("old-failed", state=S.FAILED))
            await store.create(ALICE, make_task("old-working"))
            await store.create(ALICE, make_task("old-waiting", state=S.INPUT_REQUIRED))
            clock.advance(timedelta(days=10))
            await store.create(ALICE, make_task("recent", state=S.CANCELED))
            await push.put(ALICE, TaskPushNotificationConfig(url="https://h", task_id="recent"))
            assert await store.purge(T0 + timedelta(days=5)) == 2
            assert await store.purge(T0 + timedelta(days=5)) == 0
            assert await store.get(ALICE, "old") is None
            assert await store.get(ALICE, "old-failed") is None
            assert await push.list(ALICE, "old") == ()
            remaining = await store.list(ALICE, ListTasksRequest(), 10)
            assert sorted(t.id for t in remaining.tasks) == ["old-waiting", "old-working", "recent"]
            assert len(await push.list(ALICE, "recent")) == 1
            # a purged id may be used again, from scratch
            again = await store.create(ALICE, make_task("old"))
            assert await store.get(ALICE, "old") == again
            assert await store.purge(T0 + timedelta(days=11)) == 1

    run(main())


def test_two_stores_on_one_database_take_turns(durable_url: str) -> None:
    """Two store instances on one database (two replicas): each sees what the other
    saved and saves after it; a save based on a version the other has moved past is
    stale, whatever the saving instance last wrote itself."""

    async def main() -> None:
        async with opened(durable_url) as (first, _), opened(durable_url) as (second, _):
            stored = await first.create(ALICE, make_task("t1"))
            stored = await apply(first, ALICE, stored, artifact_event(stored.task, "a", "1"))
            theirs = await second.get(ALICE, "t1")
            assert theirs == stored
            theirs = await apply(
                second, ALICE, theirs, artifact_event(stored.task, "a", "2", append=True)
            )
            with pytest.raises(StaleWriteError):  # first last wrote version 2; it is 3 now
                await apply(first, ALICE, stored, artifact_event(stored.task, "a", "x"))
            reloaded = await first.get(ALICE, "t1")
            assert reloaded == theirs
            final = await apply(
                first, ALICE, reloaded, artifact_event(stored.task, "a", "3", append=True)
            )
            assert texts(final.task.artifacts[0]) == ["1", "2", "3"]
            assert await second.get(ALICE, "t1") == final

    run(main())
