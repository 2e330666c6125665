"""The PushConfigStore contract, against every backend: put replaces by id and keeps the
order configs were first put in, delete is idempotent, everything is scoped by (tenant,
caller) and a stored config carries its scope's tenant (R-SCOPE-7, R-PUSH-3..7)."""

from __future__ import annotations

import time

import pytest
from msgspec.structs import replace

from parley.model import AuthenticationInfo, TaskPushNotificationConfig
from parley.server.stores.base import StaleWriteError
from tests.contracts.support import ALICE, ALICE_ELSEWHERE, BOB, opened, run


def config(
    config_id: str, task_id: str = "t1", url: str = "https://h/1"
) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(url=url, task_id=task_id, id=config_id)


def test_put_get_list_delete(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as (_, store):
            await store.put(ALICE, config("a"))
            await store.put(ALICE, config("b"))
            await store.put(ALICE, config("a", url="https://h/2"))
            await store.put(ALICE, config("other-task", task_id="t2"))
            got = await store.get(ALICE, "t1", "a")
            assert got == config("a", url="https://h/2")
            assert [c.id for c in await store.list(ALICE, "t1")] == ["a", "b"]
            await store.delete(ALICE, "t1", "a")
            await store.delete(ALICE, "t1", "a")
            await store.delete(ALICE, "t1", "never")
            await store.delete(ALICE, "t9", "never")
            assert await store.get(ALICE, "t1", "a") is None
            assert [c.id for c in await store.list(ALICE, "t1")] == ["b"]
            await store.put(ALICE, config("a"))
            assert [c.id for c in await store.list(ALICE, "t1")] == ["b", "a"]
            await store.delete(ALICE, "t1", "b")
            await store.delete(ALICE, "t1", "a")
            assert await store.list(ALICE, "t1") == ()
            assert [c.id for c in await store.list(ALICE, "t2")] == ["other-task"]

    run(main())


def test_every_field_round_trips(store_url: str) -> None:
    full = TaskPushNotificationConfig(
        url="https://hooks.example.com/a2a?x=1",
        task_id="t1",
        id="cfg",
        token="secret-token",
        authentication=AuthenticationInfo(scheme="Bearer", credentials="c"),
    )

    async def main() -> None:
        async with opened(store_url) as (_, store):
            await store.put(ALICE, full)
            assert await store.get(ALICE, "t1", "cfg") == full
            assert await store.list(ALICE, "t1") == (full,)

    run(main())


@pytest.mark.parametrize("other", [BOB, ALICE_ELSEWHERE], ids=["other-caller", "other-tenant"])
def test_configs_are_scoped(store_url: str, other: tuple[str, str]) -> None:
    """R-SCOPE-7, R-PUSH-4: invisible and untouchable from another scope."""

    async def main() -> None:
        async with opened(store_url) as (_, store):
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
            await store.delete(other, "t1", "a")
            assert await store.get(ALICE, "t1", "a") == mine

    run(main())


def test_a_stored_config_carries_the_scopes_tenant(store_url: str) -> None:
    async def main() -> None:
        async with opened(store_url) as (_, store):
            await store.put(ALICE_ELSEWHERE, replace(config("a"), tenant="spoofed"))
            stored = await store.get(ALICE_ELSEWHERE, "t1", "a")
            assert stored is not None
            assert stored.tenant == "tenant-2"
            assert await store.list(ALICE_ELSEWHERE, "t1") == (stored,)

    run(main())


def test_configs_survive_a_reopen(durable_url: str) -> None:
    async def main() -> None:
        async with opened(durable_url) as (_, store):
            await store.put(ALICE, config("a"))
            await store.put(ALICE, config("b"))
        async with opened(durable_url) as (_, store):
            assert [c.id for c in await store.list(ALICE, "t1")] == ["a", "b"]

    run(main())


def test_configs_set_with_a_task_are_in_its_creation(store_url: str) -> None:
    """`TaskStore.create(..., configs=...)` (an inline config of a SendMessage) sets the
    configs in the creation's transaction: they are stored, with their protocol, and the
    creation is queued for them; a creation refused (the task exists) sets none."""
    from parley.protocol.negotiation import Version  # noqa: PLC0415
    from tests.contracts.support import make_task  # noqa: PLC0415

    async def main() -> None:
        async with opened(store_url) as (tasks, store):
            assert tasks.shares_configs(store)  # type: ignore[attr-defined]
            assert not tasks.shares_configs(object())  # type: ignore[attr-defined]
            task = make_task("t1")
            inline = ((config("a"), Version.V0_3),)
            await tasks.create(ALICE, task, configs=inline)
            assert [c.id for c in await store.list(ALICE, "t1")] == ["a"]
            outbox = store.outbox  # type: ignore[attr-defined]
            now = time.time_ns() // 1000 + 10**9  # due by then, whatever the clock said
            claimed = await outbox.claim(now, now + 10**6, 10)
            assert [(d.task_id, d.config_id, d.protocol) for d in claimed] == [
                ("t1", "a", Version.V0_3)
            ]
            with pytest.raises(StaleWriteError):
                await tasks.create(ALICE, task, configs=((config("b"), Version.V1_0),))
            assert [c.id for c in await store.list(ALICE, "t1")] == ["a"]

    run(main())
