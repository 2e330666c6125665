"""The 0.3 REST tables that map each `Operation` 0.3 has to its request and response
payloads' encoders and decoders (`protojson.operations`, `protojson.push`,
`protojson.content`); a request payload is the body with path and query merged in.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from parley import model as m
from parley.protocol.operations import Operation
from parley.wire.protojson import push
from parley.wire.protojson.content import V0_3
from parley.wire.protojson.operations import (
    decode_cancel_v0_3,
    decode_card_request_v0_3,
    decode_empty,
    decode_get_task_v0_3,
    decode_send_v0_3,
    decode_subscribe_v0_3,
    encode_card_request,
    encode_empty,
    encode_get_task,
    encode_send_v0_3,
    encode_task_ref,
)
from parley.wire.v0_3.card import decode_card, encode_card

Encoder = Callable[[Any], Any]
Decoder = Callable[[Any], Any]
Op = Operation

_CONFIG_REF = partial(push.encode_config_ref, tenant=False)
_CONFIGS = (push.encode_list_named_configs, push.decode_list_named_configs)

REQUESTS: dict[Operation, tuple[type[m.Model], Encoder, Decoder]] = {
    Op.SEND_MESSAGE: (m.SendMessageRequest, encode_send_v0_3, decode_send_v0_3),
    Op.SEND_STREAMING_MESSAGE: (m.SendMessageRequest, encode_send_v0_3, decode_send_v0_3),
    Op.GET_TASK: (m.GetTaskRequest, partial(encode_get_task, tenant=False), decode_get_task_v0_3),
    Op.CANCEL_TASK: (m.CancelTaskRequest, encode_task_ref, decode_cancel_v0_3),
    Op.SUBSCRIBE_TO_TASK: (m.SubscribeToTaskRequest, encode_task_ref, decode_subscribe_v0_3),
    Op.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
        m.TaskPushNotificationConfig,
        push.encode_create_v0_3,
        push.decode_named_config,
    ),
    Op.GET_TASK_PUSH_NOTIFICATION_CONFIG: (
        m.GetTaskPushNotificationConfigRequest,
        _CONFIG_REF,
        push.decode_get_config_v0_3,
    ),
    Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
        m.ListTaskPushNotificationConfigsRequest,
        partial(push.encode_list_configs, tenant=False),
        push.decode_list_configs_v0_3,
    ),
    Op.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: (
        m.DeleteTaskPushNotificationConfigRequest,
        _CONFIG_REF,
        push.decode_delete_config_v0_3,
    ),
    Op.GET_EXTENDED_AGENT_CARD: (
        m.GetExtendedAgentCardRequest,
        partial(encode_card_request, tenant=False),
        decode_card_request_v0_3,
    ),
}
"""Per operation 0.3 has: the request model type, its encoder and its decoder."""

RESPONSES: dict[Operation, tuple[tuple[type[Any], ...], Encoder, Decoder]] = {
    Op.SEND_MESSAGE: ((m.Task, m.Message), V0_3.encode_send_result, V0_3.decode_send_result),
    Op.GET_TASK: ((m.Task,), V0_3.encode_task, V0_3.decode_task),
    Op.CANCEL_TASK: ((m.Task,), V0_3.encode_task, V0_3.decode_task),
    Op.CREATE_TASK_PUSH_NOTIFICATION_CONFIG: (
        (m.TaskPushNotificationConfig,),
        push.encode_named_config,
        push.decode_named_config,
    ),
    Op.GET_TASK_PUSH_NOTIFICATION_CONFIG: (
        (m.TaskPushNotificationConfig,),
        push.encode_named_config,
        push.decode_named_config,
    ),
    Op.LIST_TASK_PUSH_NOTIFICATION_CONFIGS: (
        (m.ListTaskPushNotificationConfigsResponse,),
        *_CONFIGS,
    ),
    Op.DELETE_TASK_PUSH_NOTIFICATION_CONFIG: ((type(None),), encode_empty, decode_empty),
    Op.GET_EXTENDED_AGENT_CARD: ((m.AgentCard,), encode_card, decode_card),
}
"""Per unary operation: the result types, the response encoder and decoder (streaming
operations answer with events: see `Content.encode_event`)."""
