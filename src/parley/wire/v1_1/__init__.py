"""A2A 1.1 draft wire forms: 1.0's, plus the task generation fields (opt-in on servers)."""

from parley.wire.v1_1.protojson_codec import CODEC, FORMS

__all__ = ["CODEC", "FORMS"]
