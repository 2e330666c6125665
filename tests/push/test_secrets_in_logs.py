"""DESIGN 11, R-PUSH-21/22: a push config's credentials and token reach the webhook and
nothing else: not the logs (at any level, httpx's included, through failures, retries and
a 410), not Get or List."""

from __future__ import annotations

import asyncio
import logging

import pytest

from parley.model import (
    AuthenticationInfo,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
    TextPart,
)
from parley.server.agent import Agent
from parley.server.context import CallContext
from parley.server.push.delivery import PushSettings, RetrySchedule
from parley.server.push.ssrf import Allow
from parley.server.service import AgentService
from parley.server.task_context import TaskContext
from tests.contracts.support import run

CREDENTIALS = "credential-4f1c9a"
TOKEN = "token-9b7e22"


def test_credentials_and_tokens_never_reach_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    agent = Agent("logged", push_notifications=True)

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    answers = [503, 400, 200, 410]
    seen: list[bytes] = []

    async def receive(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        )
        await reader.readexactly(length)
        seen.append(head)
        status = answers.pop(0) if answers else 410
        writer.write(f"HTTP/1.1 {status} X\r\ncontent-length: 0\r\n\r\n".encode())
        await writer.drain()
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(receive, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        settings = PushSettings(
            allow=Allow(["127.0.0.1"]), schedule=RetrySchedule(base=0.01, cap=0.02), poll=0.05
        )
        service = AgentService(agent.executor(), agent.card("http://agent"), push=settings)
        await service.startup()
        try:
            hook = TaskPushNotificationConfig(
                url=f"http://127.0.0.1:{port}/hook",
                token=TOKEN,
                authentication=AuthenticationInfo(scheme="Bearer", credentials=CREDENTIALS),
            )
            message = Message(message_id="m", role=Role.USER, parts=(TextPart(text="hi"),))
            configuration = SendMessageConfiguration(push_notification_config=hook)
            request = SendMessageRequest(message=message, configuration=configuration)
            task = await service.send_message(CallContext(), request)
            assert isinstance(task, Task)
            got = await service.get_task_push_notification_config(
                CallContext(), GetTaskPushNotificationConfigRequest(task_id=task.id, id=task.id)
            )
            listed = await service.list_task_push_notification_configs(
                CallContext(), ListTaskPushNotificationConfigsRequest(task_id=task.id)
            )
            for shown in (got, *listed.configs):
                assert shown.token == ""
                assert shown.authentication == AuthenticationInfo(scheme="Bearer")
            for _ in range(200):  # 503, 400, 200 for the task, 410 for the artifact
                if len(seen) >= 4:
                    break
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.1)  # the 410 is settled
        finally:
            await service.shutdown()
            server.close()
            await server.wait_closed()
        assert len(seen) == 4
        assert all(f"Bearer {CREDENTIALS}".encode() in head for head in seen)

    with caplog.at_level(logging.DEBUG):
        run(main())
    logged = "\n".join(
        f"{record.getMessage()} {record.exc_text or ''}" for record in caplog.records
    )
    assert "HTTP 503" in logged
    assert "disabled" in logged  # the 410
    assert CREDENTIALS not in logged
    assert TOKEN not in logged
