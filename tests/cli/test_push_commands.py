"""docs/push.md as a newcomer runs it: `parley webhook listen`, `parley serve --push-allow`,
`parley send --push-url --push-token`, each a real process; and `parley push list|retry`
over a store's outbox."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from parley.cli.main import main
from parley.model import Task, TaskPushNotificationConfig, TaskState, TaskStatus
from parley.server.stores import open_store
from tests.cli.runner import ROOT, parley
from tests.cli.test_serve import _wait_for_card
from tests.cli.test_webhook_listen import SECRET, listening
from tests.contracts.support import ALICE, run
from tests.ports import free_port


def test_the_documented_flow_delivers_signed_notifications(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    store = f"sqlite:///{tmp_path / 'parley.db'}"
    command = [sys.executable, "-m", "parley.cli", "serve", "examples.echo:agent"]
    command += ["--port", str(port), "--store", store, "--push-allow", "127.0.0.1"]
    with listening("--secret", SECRET) as receiver:
        server = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE)
        try:
            card = _wait_for_card(url, server).json()
            assert card["capabilities"]["pushNotifications"] is True
            sent = parley(
                "send", url, "hello", "--push-url", receiver.url + "/hook", "--push-token", SECRET
            )
            assert sent.code == 0, sent.err
            deadline = time.monotonic() + 10
            while "no pending notifications" not in _pending(store):  # all delivered
                assert time.monotonic() < deadline, _pending(store)
                time.sleep(0.1)
        finally:
            server.terminate()
            server.communicate(timeout=15)
        receiver.stop()
    kinds = [block.splitlines()[0].split()[3] for block in receiver.blocks]
    assert kinds == ["task", "artifactUpdate", "statusUpdate"]
    assert all("signature: verified" in block for block in receiver.blocks)
    assert "TASK_STATE_COMPLETED" in receiver.blocks[-1]


def _pending(store: str) -> str:
    return parley("push", "list", "--store", store).out


def test_push_list_and_retry_over_a_stores_outbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = f"sqlite:///{tmp_path / 'parley.db'}"

    async def bury_one() -> None:
        stores = open_store(store)
        await stores.tasks.open()
        try:
            hook = TaskPushNotificationConfig(
                url="https://hooks.example.com/a", task_id="t1", id="c"
            )
            await stores.push_configs.put(ALICE, hook)
            task = Task(id="t1", context_id="c1", status=TaskStatus(state=TaskState.SUBMITTED))
            await stores.tasks.create(ALICE, task)
            outbox = stores.push_configs.outbox  # type: ignore[attr-defined]
            [claimed] = await outbox.claim(2**62, 2**62, 10)
            await outbox.bury(claimed, "HTTP 400: no such hook")
        finally:
            await stores.tasks.close()

    run(bury_one())
    assert main(["push", "list", "--store", store]) == 0
    assert "no pending notifications" in capsys.readouterr().out
    assert main(["push", "list", "--dead", "--store", store]) == 0
    listed = capsys.readouterr().out
    assert "t1.1.0  task t1  config c  attempts 1" in listed
    assert "last error: HTTP 400: no such hook" in listed
    dead_id = listed.split()[0]
    assert main(["push", "retry", dead_id, "--store", store]) == 0
    assert ": 1 dead notifications pending again" in capsys.readouterr().out
    assert main(["push", "list", "--json", "--store", store]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert '"state": "pending"' in line
    assert '"taskId": "t1"' in line


def test_mistakes_are_one_line_errors(tmp_path: Path) -> None:
    token_alone = parley("send", "http://127.0.0.1:9", "hi", "--push-token", "x")
    assert token_alone.code != 0
    assert "--push-token goes with --push-url" in token_alone.err
    neither = parley("push", "retry", "--store", f"sqlite:///{tmp_path / 'p.db'}")
    assert neither.code != 0
    assert "name notification ids, or --all" in neither.err
    memory = parley("push", "list", "--store", "memory")
    assert memory.code != 0
    assert "memory store keeps nothing" in memory.err
    no_push = parley("serve", "examples.echo:agent", "--no-push", "--push-allow", "127.0.0.1")
    assert no_push.code != 0
    assert "--push-allow has no effect with --no-push" in no_push.err
