"""Push credentials encrypted at rest (`PushSettings.credentials`, `--push-credentials-key`):
a stored config's credentials and token are ciphertext in the SQLite and PostgreSQL rows,
the webhook still gets them as given; rows written without a key stay readable; a sealed
value without the right key fails naming the option; a second key rotates."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from parley.model import Task, TaskState, TaskStatus
from parley.server.push.credentials import (
    SEALED,
    CredentialsKeyError,
    CredentialsKeys,
    generate_key,
    unsealed,
)
from parley.server.push.outbox import PENDING, Outbox
from parley.server.stores import open_store
from tests.contracts.conftest import DURABLE, _url
from tests.contracts.support import ALICE, POSTGRES_URL
from tests.push.receiver import Receiver
from tests.push.support import (
    CTX,
    Gated,
    config,
    fast,
    outbox,
    run,
    serving,
    start_task,
    until,
)

CREDENTIALS = "cred-at-rest-5d2a71"
TOKEN = "tok-at-rest-0c9e44"
OTHER_CREDENTIALS = "cred-created-8e13f0"


@pytest.fixture(params=DURABLE)
def durable_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL naming a fresh, empty database of each durable backend."""
    yield from _url(request.param, tmp_path)


def test_keys_seal_and_open_and_the_first_of_several_encrypts() -> None:
    old, new = generate_key(), generate_key()
    hook = config("https://hooks.example.com/h", token=TOKEN, auth=("Bearer", CREDENTIALS))
    sealed = CredentialsKeys([old]).seal(hook)
    assert sealed.token.startswith(SEALED)
    assert sealed.authentication is not None
    assert sealed.authentication.credentials.startswith(SEALED)
    assert TOKEN not in repr(sealed)
    assert CREDENTIALS not in repr(sealed)
    rotated = CredentialsKeys([new, old])
    assert unsealed(sealed, rotated) == hook  # the old key still decrypts
    resealed = rotated.seal(unsealed(sealed, rotated))
    assert unsealed(resealed, CredentialsKeys([new])) == hook  # the new one encrypts
    assert CredentialsKeys([old]).seal(config("https://h.example.com")) == config(
        "https://h.example.com"
    )
    assert unsealed(hook, None) == hook  # written without a key: readable as it is


def test_a_missing_or_wrong_key_fails_naming_the_option() -> None:
    sealed = CredentialsKeys([generate_key()]).seal(config("https://h.example.com", token=TOKEN))
    with pytest.raises(CredentialsKeyError, match="no key was given to --push-credentials-key"):
        unsealed(sealed, None)
    with pytest.raises(CredentialsKeyError, match="key not given to --push-credentials-key"):
        unsealed(sealed, CredentialsKeys([generate_key()]))


def test_a_malformed_key_is_refused_without_echoing_it() -> None:
    with pytest.raises(ValueError, match="URL-safe base64") as refused:
        CredentialsKeys(["not-a-key-3f9a"])
    assert "not-a-key-3f9a" not in str(refused.value)
    assert "not-a-key" not in repr(CredentialsKeys([generate_key()]))


async def _rows(url: str) -> str:
    """Every row of every table of the store at `url`, as text."""
    if url.startswith("sqlite"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
            return "\n".join(connection.iterdump())
    schema = parse_qs(urlsplit(url).query)["schema"][0]
    return await _postgres_rows(schema)


async def _postgres_rows(schema: str) -> str:
    import asyncpg  # noqa: PLC0415 - the postgres extra

    connection = await asyncpg.connect(POSTGRES_URL, timeout=5)
    try:
        tables = await connection.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", schema
        )
        found = []
        for (table,) in tables:
            rows = await connection.fetch(f'SELECT t::text FROM "{schema}"."{table}" t')
            found += [row[0] for row in rows]
        return "\n".join(found)
    finally:
        await connection.close()


def test_stored_rows_hold_ciphertext_and_the_webhook_gets_the_values(durable_url: str) -> None:
    keys = CredentialsKeys([generate_key()])
    gated = Gated()

    async def main() -> None:
        async with (
            Receiver() as receiver,
            serving(durable_url, gated.agent, fast(credentials=keys)) as service,
        ):
            inline = config(receiver.url("/a"), token=TOKEN, auth=("Bearer", CREDENTIALS))
            task = await start_task(service, inline)
            created = config(
                receiver.url("/b"), id="b", task_id=task.id, auth=("Basic", OTHER_CREDENTIALS)
            )
            shown = await service.create_task_push_notification_config(CTX, created)
            assert shown.authentication is not None
            assert shown.authentication.credentials == OTHER_CREDENTIALS  # the caller's input
            stored = await _rows(durable_url)
            assert SEALED in stored
            for secret in (CREDENTIALS, TOKEN, OTHER_CREDENTIALS):
                assert secret not in stored
            gated.go.set()
            await until(service, lambda: len(receiver.requests) >= 7)  # 4 to /a, 3 to /b
        to_a = [r for r in receiver.requests if r.target == "/a"]
        to_b = [r for r in receiver.requests if r.target == "/b"]
        assert {r.headers["authorization"] for r in to_a} == {f"Bearer {CREDENTIALS}"}
        assert {r.headers["x-a2a-notification-token"] for r in to_a} == {TOKEN}
        assert {r.headers["authorization"] for r in to_b} == {f"Basic {OTHER_CREDENTIALS}"}

    run(main())


def test_unencrypted_rows_stay_readable_and_a_wrong_key_waits_for_the_right_one(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path}/parley.db"
    old, new = generate_key(), generate_key()

    async def store_two_configs(receiver: Receiver) -> None:
        stores = open_store(url)
        await stores.tasks.open()
        try:
            plain = config(receiver.url("/plain"), id="p", task_id="t1", token=TOKEN)
            sealed = CredentialsKeys([old]).seal(
                config(receiver.url("/sealed"), id="s", task_id="t2", auth=("Bearer", CREDENTIALS))
            )
            for each in (plain, sealed):
                await stores.push_configs.put(ALICE, each)
                status = TaskStatus(state=TaskState.SUBMITTED)
                await stores.tasks.create(
                    ALICE, Task(id=each.task_id, context_id="c", status=status)
                )
        finally:
            await stores.tasks.close()

    async def main() -> None:
        async with Receiver() as receiver:
            await store_two_configs(receiver)
            wrong = fast(credentials=CredentialsKeys([new]))
            async with serving(url, Gated().agent, wrong) as service:
                await until(service, lambda: len(receiver.requests) >= 1)
                await until(service, lambda: _failed(outbox(service), "s"))
                error = await _last_error(outbox(service), "s")
                assert "--push-credentials-key" in error
                assert CREDENTIALS not in error
            assert [r.target for r in receiver.requests] == ["/plain"]
            assert receiver.requests[0].headers["x-a2a-notification-token"] == TOKEN
            rotated = fast(credentials=CredentialsKeys([new, old]))
            async with serving(url, Gated().agent, rotated) as service:
                await until(service, lambda: len(receiver.requests) >= 2)
            assert receiver.requests[1].target == "/sealed"
            assert receiver.requests[1].headers["authorization"] == f"Bearer {CREDENTIALS}"

    run(main(), timeout=20)


async def _failed(box: Outbox, config_id: str) -> bool:
    return bool(await _last_error(box, config_id))


async def _last_error(box: Outbox, config_id: str) -> str:
    found = await box.inspect(state=PENDING, limit=10)
    errors = [each.last_error for each in found if each.config_id == config_id]
    return str(errors[0]) if errors and errors[0] else ""
