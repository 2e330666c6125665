"""Which JSON and data libraries Parley builds on: parse/serialize of a Task document with
stdlib json, orjson and msgspec, and construction of a small immutable object as a
frozen dataclass, a slotted dataclass, a frozen msgspec.Struct and a frozen
pydantic model (pydantic comes with the test-only official SDK).

Run: `python -m benchmarks.json_libraries`
"""

from __future__ import annotations

import dataclasses
import json
import platform

import msgspec
import orjson
import pydantic

from benchmarks.payloads import task_v10
from benchmarks.timing import per_call_us


@dataclasses.dataclass(frozen=True, slots=True)
class FrozenPart:
    text: str
    media_type: str = ""
    filename: str = ""


@dataclasses.dataclass(slots=True)
class SlottedPart:
    text: str
    media_type: str = ""
    filename: str = ""


class StructPart(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    media_type: str = ""
    filename: str = ""


class PydanticPart(pydantic.BaseModel, frozen=True):
    text: str
    media_type: str = ""
    filename: str = ""


def main() -> None:
    document = task_v10()
    raw = json.dumps(document).encode()
    encoder = msgspec.json.Encoder()
    print(f"Python {platform.python_version()}, Task document of {len(raw)} bytes")
    rows = {
        "json.loads": per_call_us(lambda: json.loads(raw)),
        "orjson.loads": per_call_us(lambda: orjson.loads(raw)),
        "msgspec.json.decode": per_call_us(lambda: msgspec.json.decode(raw)),
        "json.dumps": per_call_us(lambda: json.dumps(document, separators=(",", ":"))),
        "orjson.dumps": per_call_us(lambda: orjson.dumps(document)),
        "msgspec.json.encode": per_call_us(lambda: encoder.encode(document)),
        "frozen dataclass()": per_call_us(lambda: FrozenPart(text="x", media_type="t")),
        "slots dataclass()": per_call_us(lambda: SlottedPart(text="x", media_type="t")),
        "frozen msgspec.Struct()": per_call_us(lambda: StructPart(text="x", media_type="t")),
        "frozen pydantic model()": per_call_us(lambda: PydanticPart(text="x", media_type="t")),
    }
    for name, micros in rows.items():
        print(f"{name:26s} {micros:9.3f} us")


if __name__ == "__main__":
    main()
