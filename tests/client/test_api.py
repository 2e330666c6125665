"""The client's public surface: curated exports, building messages, the retry arithmetic
and which operations count as idempotent."""

from __future__ import annotations

import importlib

import pytest

from parley.client import NO_RETRY, RetryPolicy, StreamPolicy, user_message
from parley.client.content import configured
from parley.client.errors import ClientConnectionError, ClientProtocolError, StreamIdleError
from parley.client.retry import retry_after
from parley.model import DataPart, Message, Role, SendMessageConfiguration, TextPart
from parley.protocol.errors import TaskNotFoundError
from parley.protocol.operations import OPERATIONS, Operation


@pytest.mark.parametrize("package", ["parley.client", "parley.testing"])
def test_curated_public_api(package: str) -> None:
    """STYLE 11: a sorted `__all__` of names that exist."""
    module = importlib.import_module(package)
    names = module.__all__
    assert names == sorted(names)
    for name in names:
        assert hasattr(module, name), f"{package}.{name}"


def test_user_messages_from_text_parts_or_messages() -> None:
    text = user_message("hi")
    assert (text.role, text.parts) == (Role.USER, (TextPart(text="hi"),))
    assert text.message_id
    assert user_message("hi").message_id != text.message_id
    data = DataPart(data={"a": 1})
    assert user_message(data).parts == (data,)
    assert user_message([TextPart(text="a"), data]).parts == (TextPart(text="a"), data)
    given = Message(message_id="m", role=Role.USER, parts=(TextPart(text="x"),), task_id="t0")
    assert user_message(given) is given
    moved = user_message(given, task_id="t1", context_id="c1", metadata={"k": "v"})
    assert (moved.message_id, moved.task_id, moved.context_id, moved.metadata) == (
        "m",
        "t1",
        "c1",
        {"k": "v"},
    )


def test_send_options_fill_the_configuration() -> None:
    assert configured(None, False, None, ()) is None
    given = SendMessageConfiguration(history_length=3)
    assert configured(given, False, None, ()) is given
    assert configured(given, True, 1, ["text/plain"]) == SendMessageConfiguration(
        history_length=1, return_immediately=True, accepted_output_modes=("text/plain",)
    )
    assert configured(None, True, None, ()) == SendMessageConfiguration(return_immediately=True)


def test_idempotent_operations_are_the_reads_and_delete() -> None:
    idempotent = {spec.operation for spec in OPERATIONS.values() if spec.idempotent}
    assert idempotent == {
        Operation.GET_TASK,
        Operation.LIST_TASKS,
        Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG,
        Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
        Operation.GET_EXTENDED_AGENT_CARD,
    }
    assert not any(spec.idempotent for spec in OPERATIONS.values() if spec.streaming)


def test_backoff_grows_to_its_ceiling_with_jitter() -> None:
    policy = RetryPolicy(backoff=1.0, multiplier=2.0, max_backoff=3.0)
    for retry, ceiling in ((1, 1.0), (2, 2.0), (3, 3.0), (9, 3.0)):
        for _ in range(20):
            assert ceiling / 2 <= policy.delay(retry) <= ceiling
    assert policy.delay(1, retry_after=7.0) == 7.0
    assert NO_RETRY.attempts == 1


def test_what_is_retryable() -> None:
    assert retry_after(ClientConnectionError("x")) == 0.0
    assert retry_after(StreamIdleError("x")) == 0.0
    assert retry_after(ClientProtocolError("x", status_code=503, retry_after=2)) == 2
    assert retry_after(ClientProtocolError("x", status_code=401)) is None
    assert retry_after(ClientProtocolError("x")) is None
    assert retry_after(TaskNotFoundError()) is None


def test_stream_policy_defaults() -> None:
    """No idle limit by default (a silent agent is not a dead one); resubscription on."""
    policy = StreamPolicy()
    assert (policy.idle_timeout, policy.resubscribe, policy.resubscribe_on_idle) == (
        None,
        True,
        False,
    )
    assert policy.reconnect.attempts == 5
