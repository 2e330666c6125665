"""A2A 0.3 over JSON-RPC: the JSON codec of the 0.3 JSON schema."""

from parley.wire.v0_3.jsonrpc_codec import CODEC, FORMS

__all__ = ["CODEC", "FORMS"]
