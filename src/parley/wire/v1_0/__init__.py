"""A2A 1.0 wire forms: the JSON codec (ProtoJSON of `lf.a2a.v1` plus the spec's rules)."""

from parley.wire.v1_0.protojson_codec import CODEC, FORMS

__all__ = ["CODEC", "FORMS"]
