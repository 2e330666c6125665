"""Wire helpers for the binding tests: request bodies built with the codecs themselves, so
the tests check the binding, not a hand-copied JSON shape."""

from __future__ import annotations

from typing import Any

from parley.model import Model, SendMessageRequest
from parley.protocol.negotiation import Version
from parley.protocol.operations import Operation
from parley.wire.codec_table import JSONRPC, REST
from tests.asgi.fakes import user_message

V1 = {"A2A-Version": "1.0"}
"""The header a 1.0 client sends on every request (R-VER-3)."""


def rpc(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    return body


def send_params(version: Version, text: str = "hello", **fields: Any) -> Any:
    """JSON-RPC `params` of SendMessage with one text part."""
    request = SendMessageRequest(message=user_message(text), **fields)
    return JSONRPC[version].encode_request(Operation.SEND_MESSAGE, request)


def send_body(version: Version, text: str = "hello") -> Any:
    """The REST body of SendMessage with one text part."""
    request = SendMessageRequest(message=user_message(text))
    return REST[version].encode_request(Operation.SEND_MESSAGE, request)


def params(version: Version, operation: Operation, request: Model) -> Any:
    return JSONRPC[version].encode_request(operation, request)


def error_reason(error: dict[str, Any]) -> str:
    """The ErrorInfo reason of a 1.0 error (`data` of JSON-RPC, `details` of REST)."""
    items = error.get("data", error.get("details", []))
    return str(next(d["reason"] for d in items if d["@type"].endswith("ErrorInfo")))
