"""The JSON-RPC 2.0 envelope (R-JSONRPC-1)."""

from __future__ import annotations

from typing import Any

import pytest

from parley.protocol import errors as e
from parley.protocol.negotiation import Version
from parley.wire import jsonrpc


@pytest.mark.parametrize("request_id", ["abc", 7, 0, -3, 1.5, None])
def test_every_legal_id_is_echoed(request_id: object) -> None:
    value = {"jsonrpc": "2.0", "id": request_id, "method": "GetTask", "params": {"id": "t"}}
    parsed = jsonrpc.parse_request(value)
    assert parsed.id == request_id
    assert not parsed.is_notification
    assert jsonrpc.success(parsed.id, {})["id"] == request_id
    assert jsonrpc.request_id_of(value) == request_id


@pytest.mark.parametrize("params", [{"id": "t"}, [1], None])
def test_params_may_be_an_object_an_array_or_absent(params: Any) -> None:
    value = {"jsonrpc": "2.0", "id": "r", "method": "GetTask", "params": params}
    parsed = jsonrpc.parse_request(value)
    assert (parsed.method, parsed.params, parsed.id) == ("GetTask", params, "r")


def test_notification_has_no_id() -> None:
    parsed = jsonrpc.parse_request({"jsonrpc": "2.0", "method": "message/send", "params": {}})
    assert parsed.is_notification
    assert parsed.id is None


@pytest.mark.parametrize(
    "value",
    [
        [],
        [{"jsonrpc": "2.0", "id": 1, "method": "x"}],
        "text",
        {"id": 1, "method": "x"},
        {"jsonrpc": "1.0", "id": 1, "method": "x"},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": 1, "method": 5},
        {"jsonrpc": "2.0", "id": True, "method": "x"},
        {"jsonrpc": "2.0", "id": {"a": 1}, "method": "x"},
        {"jsonrpc": "2.0", "id": 1, "method": "x", "params": "p"},
        {"jsonrpc": "2.1", "id": 1, "method": "x", "params": {}},
        {"jsonrpc": "2.0", "id": True, "method": "x", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "", "params": {}},
    ],
)
def test_invalid_envelopes(value: object) -> None:
    with pytest.raises(e.InvalidRequestError):
        jsonrpc.parse_request(value)


def test_unreadable_id_is_null() -> None:
    assert jsonrpc.request_id_of({"id": [1]}) is None
    assert jsonrpc.request_id_of("x") is None


def test_failure_and_client_reading() -> None:
    body = jsonrpc.failure(4, e.TaskNotFoundError("no such task"), Version.V1_0)
    assert body["error"]["code"] == -32001
    with pytest.raises(e.TaskNotFoundError, match="no such task"):
        jsonrpc.read_response(body, 4)
    result: dict[str, Any] = {"task": {}}
    assert jsonrpc.read_response(jsonrpc.success(4, result), 4) == result
    with pytest.raises(e.InvalidRequestError):
        jsonrpc.read_response(jsonrpc.success(5, result), 4)
    with pytest.raises(e.InvalidRequestError):
        jsonrpc.read_response({"jsonrpc": "2.0", "id": 4})
    assert jsonrpc.request("GetTask", None, 1) == {"jsonrpc": "2.0", "id": 1, "method": "GetTask"}
