"""The JSON-RPC 2.0 envelope: request parsing, success and error responses, and the
client-side reading of responses. Method names and params belong to the codecs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from parley.protocol.errors import A2AError, InvalidRequestError
from parley.protocol.negotiation import Version
from parley.wire.errors import from_jsonrpc_error, jsonrpc_error

RequestId = str | int | float | None


@dataclass(frozen=True, slots=True)
class JsonRpcRequest:
    """One parsed request. A notification has no `id` member and gets no response."""

    method: str
    params: Any
    id: RequestId = None
    is_notification: bool = False


def _legal_id(value: object) -> bool:
    return value is None or (type(value) in (str, int, float))


def request_id_of(value: object) -> RequestId:
    """The request's id if it can be read (for error responses); else None (null)."""
    if isinstance(value, dict):
        candidate = value.get("id")
        if candidate is None or type(candidate) in (str, int, float):  # (`_legal_id`)
            return candidate
    return None


def parse_request(value: object) -> JsonRpcRequest:
    """Validate the envelope of one request; InvalidRequestError if it is not one.

    Batches (arrays) are refused: A2A defines none, and no A2A SDK sends them.
    """
    if type(value) is dict:  # the usual request, checked at once (the others below)
        method, params, request_id = value.get("method"), value.get("params"), value.get("id")
        if (
            type(params) is dict
            and type(method) is str
            and method
            and (type(request_id) is str or type(request_id) is int)
            and value.get("jsonrpc") == "2.0"
        ):
            return JsonRpcRequest(method, params, request_id, False)
    if isinstance(value, list):
        raise InvalidRequestError("Batch requests are not supported")
    if not isinstance(value, dict):
        raise InvalidRequestError("A JSON-RPC request must be a JSON object")
    if value.get("jsonrpc") != "2.0":
        raise InvalidRequestError('The "jsonrpc" member must be exactly "2.0"')
    method = value.get("method")
    if type(method) is not str or not method:
        raise InvalidRequestError('The "method" member must be a non-empty string')
    if "id" in value and not _legal_id(value["id"]):
        raise InvalidRequestError('The "id" member must be a string, a number or null')
    params = value.get("params")
    if params is not None and not isinstance(params, dict | list):
        raise InvalidRequestError('The "params" member must be an object or an array')
    return JsonRpcRequest(
        method=method,
        params=params,
        id=value.get("id"),
        is_notification="id" not in value,
    )


def success(request_id: RequestId, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def failure(request_id: RequestId, error: A2AError, version: Version) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": jsonrpc_error(error, version)}


def request(method: str, params: Any, request_id: RequestId) -> dict[str, Any]:
    """A request envelope (client side); `params` None is left out."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    return body


def read_response(value: object, expected_id: RequestId = None) -> Any:
    """The `result` of a response, or raise the error it carries (client side)."""
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        raise InvalidRequestError("Not a JSON-RPC 2.0 response")
    if "error" in value:
        raise from_jsonrpc_error(value["error"])
    if "result" not in value:
        raise InvalidRequestError("A JSON-RPC response needs a result or an error")
    if expected_id is not None and value.get("id") != expected_id:
        raise InvalidRequestError("The response id does not match the request id")
    return value["result"]
