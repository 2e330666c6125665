"""Codec benchmark: decode + encode of a SendMessage request and of a Task with 10
artifacts and 20 history messages, Parley beside the official `a2a-sdk`, in one run.

Each side does the whole job from bytes to bytes:
- Parley: orjson parse, codec decode to the model; codec encode, orjson dump.
- a2a-sdk 1.0: its server's own path, stdlib json + protobuf `ParseDict`/`MessageToDict`
  (also shown with orjson in place of stdlib json, so the ratio is not just orjson).
- a2a-sdk 0.3: its server's own path, stdlib json + pydantic validation + conversion to
  its core (1.0 protobuf) model and back; also pydantic alone (`model_validate_json` /
  `model_dump_json`, no conversion), the floor of what its 0.3 layer could cost.

Run: `python -m benchmarks.codec` (or `./scripts/bench`).
"""

from __future__ import annotations

import json
import platform
from collections.abc import Callable
from typing import Any

import orjson
from a2a.compat.v0_3 import conversions
from a2a.compat.v0_3 import types as sdk03
from a2a.types import a2a_pb2
from google.protobuf import json_format

from benchmarks.payloads import send_v03, send_v10, task_v03, task_v10
from benchmarks.timing import per_call_us
from parley.model import Task
from parley.protocol.operations import Operation
from parley.wire.v0_3.jsonrpc_codec import CODEC as CODEC03
from parley.wire.v1_0.protojson_codec import CODEC as CODEC10

SEND = Operation.SEND_MESSAGE


def parley_task(codec: Any, raw: bytes) -> Callable[[], bytes]:
    return lambda: orjson.dumps(codec.encode(codec.decode(Task, orjson.loads(raw))))


def parley_send(codec: Any, raw: bytes) -> Callable[[], bytes]:
    return lambda: orjson.dumps(
        codec.encode_request(SEND, codec.decode_request(SEND, orjson.loads(raw)))
    )


def sdk10(message: type[Any], raw: bytes, loads: Any, dumps: Any) -> Callable[[], object]:
    def run() -> object:
        parsed = json_format.ParseDict(loads(raw), message())
        return dumps(json_format.MessageToDict(parsed))

    return run


def sdk03_path(model: type[Any], raw: bytes) -> Callable[[], object]:
    """What the SDK's 0.3 JSON-RPC adapter does with a body and a result: pydantic
    validation, conversion to its core (1.0 protobuf) model, and back."""
    if model is sdk03.Task:
        to_core, to_compat, body = conversions.to_core_task, conversions.to_compat_task, raw
    else:  # the SDK converts the whole JSON-RPC request, so it gets the envelope
        model = sdk03.SendMessageRequest
        to_core = conversions.to_core_send_message_request
        body = orjson.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": orjson.loads(raw)}
        )

        def to_compat(core: Any) -> Any:
            return conversions.to_compat_send_message_request(core, 1)

    def run() -> object:
        core = to_core(model.model_validate(json.loads(body)))
        dumped = to_compat(core).model_dump(by_alias=True, exclude_none=True, mode="json")
        return json.dumps(dumped)

    return run


def sdk03_pydantic(model: type[Any], raw: bytes) -> Callable[[], object]:
    return lambda: model.model_validate_json(raw).model_dump_json(by_alias=True, exclude_none=True)


def main() -> None:
    cases = {
        "SendMessage request": (
            send_v10(),
            send_v03(),
            a2a_pb2.SendMessageRequest,
            sdk03.MessageSendParams,
        ),
        "Task 10 artifacts + 20 history": (task_v10(), task_v03(), a2a_pb2.Task, sdk03.Task),
    }
    print(f"Python {platform.python_version()}; best-of-5 microseconds per decode+encode")
    header = f"{'payload':32s} {'parley':>9s} {'sdk':>9s} {'ratio':>7s}  variant"
    print(header)
    for name, (doc10, doc03, pb_type, pyd_type) in cases.items():
        raw10, raw03 = orjson.dumps(doc10), orjson.dumps(doc03)
        is_task = pb_type is a2a_pb2.Task
        ours10 = per_call_us((parley_task if is_task else parley_send)(CODEC10, raw10))
        ours03 = per_call_us((parley_task if is_task else parley_send)(CODEC03, raw03))
        rows = [
            (
                "1.0 vs SDK (json + protobuf)",
                ours10,
                per_call_us(sdk10(pb_type, raw10, json.loads, json.dumps)),
            ),
            (
                "1.0 vs SDK (orjson + protobuf)",
                ours10,
                per_call_us(sdk10(pb_type, raw10, orjson.loads, orjson.dumps)),
            ),
            (
                "0.3 vs SDK (json + pydantic + core model)",
                ours03,
                per_call_us(sdk03_path(pyd_type, raw03)),
            ),
            (
                "0.3 vs pydantic alone (no core model)",
                ours03,
                per_call_us(sdk03_pydantic(pyd_type, raw03)),
            ),
        ]
        for variant, ours, theirs in rows:
            print(f"{name:32s} {ours:9.1f} {theirs:9.1f} {theirs / ours:6.1f}x  {variant}")


if __name__ == "__main__":
    main()
