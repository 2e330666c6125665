"""A2A 0.3 over HTTP+JSON: the codec of ProtoJSON of the 0.3 proto (`a2a.v1`)."""

from parley.wire.v0_3.rest.protojson_codec import CODEC, FORMS

__all__ = ["CODEC", "FORMS"]
