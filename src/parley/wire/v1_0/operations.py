"""The 1.0 tables that map each `Operation` to its request and response payloads'
encoders and decoders (`protojson.operations`, `protojson.push`, `protojson.content`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from parley import model as m
from parley.protocol.operations import Operation
from parley.wire.protojson.content import V1_0
from parley.wire.protojson.operations import (
    decode_cancel,
    decode_card_request,
    decode_configuration,
    decode_empty,
    decode_get_task,
    decode_list_tasks,
    decode_list_tasks_result,
    decode_send,
    decode_subscribe,
    encode_cancel,
    encode_card_request,
    encode_configuration,
    encode_empty,
    encode_get_task,
    encode_list_tasks,
    encode_list_tasks_result,
    encode_send,
    encode_subscribe,
)
from parley.wire.protojson.push import (
    decode_delete_config,
    decode_get_config,
    decode_list_configs,
    decode_list_configs_result,
    decode_push_config,
    encode_config_ref,
    encode_list_configs,
    encode_list_configs_result,
    encode_push_config,
)
from parley.wire.reader import Obj
from parley.wire.v1_0.card import decode_card, encode_card

__all__ = [
    "REQUESTS",
    "RESPONSES",
    "decode_configuration",
    "decode_list_tasks_result",
    "encode_configuration",
    "encode_list_tasks_result",
]

# ---------------------------------------------------------------- tables

Encoder = Callable[[Any], Obj]
Decoder = Callable[[Any], Any]

REQUESTS: dict[Operation, tuple[type[m.Model], Encoder, Decoder]] = {
    Operation.SEND_MESSAGE: (m.SendMessageRequest, encode_send, decode_send),
    Operation.SEND_STREAMING_MESSAGE: (m.SendMessageRequest, encode_send, decode_send),
    Operation.GET_TASK: (m.GetTaskRequest, encode_get_task, decode_get_task),
    Operation.LIST_TASKS: (m.ListTasksRequest, encode_list_tasks, decode_list_tasks),
    Operation.CANCEL_TASK: (m.CancelTaskRequest, encode_cancel, decode_cancel),
    Operation.SUBSCRIBE_TO_TASK: (m.SubscribeToTaskRequest, encode_subscribe, decode_subscribe),
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
        m.TaskPushNotificationConfig,
        encode_push_config,
        decode_push_config,
    ),
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: (
        m.GetTaskPushNotificationConfigRequest,
        encode_config_ref,
        decode_get_config,
    ),
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
        m.ListTaskPushNotificationConfigsRequest,
        encode_list_configs,
        decode_list_configs,
    ),
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: (
        m.DeleteTaskPushNotificationConfigRequest,
        encode_config_ref,
        decode_delete_config,
    ),
    Operation.GET_EXTENDED_AGENT_CARD: (
        m.GetExtendedAgentCardRequest,
        encode_card_request,
        decode_card_request,
    ),
}
"""Per operation: the request model type, its encoder and its decoder."""

RESPONSES: dict[Operation, tuple[tuple[type[Any], ...], Encoder, Decoder]] = {
    Operation.SEND_MESSAGE: ((m.Task, m.Message), V1_0.encode_send_result, V1_0.decode_send_result),
    Operation.GET_TASK: ((m.Task,), V1_0.encode_task, V1_0.decode_task),
    Operation.LIST_TASKS: (
        (m.ListTasksResponse,),
        encode_list_tasks_result,
        decode_list_tasks_result,
    ),
    Operation.CANCEL_TASK: ((m.Task,), V1_0.encode_task, V1_0.decode_task),
    Operation.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
        (m.TaskPushNotificationConfig,),
        encode_push_config,
        decode_push_config,
    ),
    Operation.GET_TASK_PUSH_NOTIFICATION_CONFIG: (
        (m.TaskPushNotificationConfig,),
        encode_push_config,
        decode_push_config,
    ),
    Operation.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
        (m.ListTaskPushNotificationConfigsResponse,),
        encode_list_configs_result,
        decode_list_configs_result,
    ),
    Operation.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: ((type(None),), encode_empty, decode_empty),
    Operation.GET_EXTENDED_AGENT_CARD: (
        (m.AgentCard,),
        encode_card,
        decode_card,
    ),
}
"""Per unary operation: the result types, the response encoder and decoder (streaming
operations answer with events: see `content.encode_event`)."""
