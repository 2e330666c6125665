"""`wire.protobuf`'s own fillers against protobuf's reference ones: Structs filled value by
value as `Struct.update` fills them, timestamps to the exact microsecond at any datetime."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp

from parley.model import JSONObject
from parley.wire.protobuf import fill_struct, fill_timestamp, struct_json

VALUES: list[JSONObject] = [
    {},
    {"a": 1, "b": 1.5, "c": None, "d": True, "e": "s", "f": 2**60},
    {"n": float("nan"), "i": float("inf"), "m": float("-inf")},
    {"l": [1, [2, []], {}, None, "x"], "o": {"p": {"q": [None, {}]}}},
]


@pytest.mark.parametrize("value", VALUES)
def test_a_struct_is_filled_as_struct_update_fills_it(value: JSONObject) -> None:
    reference, ours = Struct(), Struct()
    reference.update(value)
    fill_struct(ours, value)
    assert ours.SerializeToString(deterministic=True) == reference.SerializeToString(
        deterministic=True
    )
    assert repr(struct_json(ours)) == repr(struct_json(reference))


MOMENTS = [
    datetime.min,
    datetime.max,
    datetime.min.replace(tzinfo=UTC),
    datetime.max.replace(tzinfo=UTC),
    datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(1970, 1, 1, tzinfo=UTC),
    datetime(2025, 10, 28, 10, 30, 0, 1, tzinfo=UTC),
    datetime(2025, 10, 28, 10, 30, 59, 999999),
    datetime(9999, 12, 31, 18, 59, 59, 999999, tzinfo=timezone(timedelta(hours=-5))),
]


@pytest.mark.parametrize("moment", MOMENTS, ids=str)
def test_a_timestamp_keeps_the_exact_microsecond(moment: datetime) -> None:
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    delta = aware - datetime(1970, 1, 1, tzinfo=UTC)
    target = Timestamp()
    fill_timestamp(target, moment)
    assert (target.seconds, target.nanos) == (
        delta.days * 86400 + delta.seconds,
        delta.microseconds * 1000,
    )
