"""Which codec each (binding, version) uses: the only place a binding learns it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from parley.protocol.negotiation import Version
from parley.wire.codec_seam import Codec
from parley.wire.v0_3.jsonrpc_codec import CODEC as JSONRPC_V0_3
from parley.wire.v0_3.rest import CODEC as REST_V0_3
from parley.wire.v1_0.protojson_codec import CODEC as JSON_V1_0
from parley.wire.v1_1.protojson_codec import CODEC as JSON_V1_1

if TYPE_CHECKING:
    from parley.wire.protobuf_codec import ProtobufCodec

JSONRPC: Mapping[Version, Codec[Any]] = {
    Version.V1_1: JSON_V1_1,
    Version.V1_0: JSON_V1_0,
    Version.V0_3: JSONRPC_V0_3,
}
"""JSON-RPC `params`/`result` and SSE `result`s."""

REST: Mapping[Version, Codec[Any]] = {
    Version.V1_1: JSON_V1_1,
    Version.V1_0: JSON_V1_0,
    Version.V0_3: REST_V0_3,
}
"""HTTP+JSON bodies. 1.0 REST is the same ProtoJSON as 1.0 JSON-RPC; 0.3 REST is ProtoJSON
of the 0.3 proto (`a2a.v1`), with path and query parameters merged into the payload.
The 1.1 draft's is 1.0's plus the generation fields (`?currentGeneration=` is a query
parameter like `historyLength`)."""

JSONRPC_ERRORS_IN_STREAM: Mapping[Version, bool] = {
    Version.V1_1: False,
    Version.V1_0: False,
    Version.V0_3: True,
}
"""Whether a JSON-RPC streaming call answers an error found before its first event inside
the stream (an SSE event holding the error response) rather than as a plain JSON-RPC error.
0.3's answer type is SendStreamingMessageResponse (success | error), and the official 0.3
SDK sends and expects such errors in the stream; 1.0 answers them plainly (REFERENCE §7.1)."""


class _ProtobufCodecs(Mapping[Version, "ProtobufCodec"]):
    """The protobuf codecs, imported on first use: they need the grpc extra, which the
    other bindings do not."""

    def __getitem__(self, version: Version) -> ProtobufCodec:
        if version is Version.V1_1:  # the draft's own pool, loaded only when served
            from parley.wire.v1_1.protobuf_codec import CODEC as GRPC_V1_1  # noqa: PLC0415 - grpc extra

            return GRPC_V1_1
        from parley.wire.v0_3.protobuf_codec import CODEC as GRPC_V0_3  # noqa: PLC0415 - grpc extra
        from parley.wire.v1_0.protobuf_codec import CODEC as GRPC_V1_0  # noqa: PLC0415 - grpc extra

        return {Version.V1_0: GRPC_V1_0, Version.V0_3: GRPC_V0_3}[version]

    def __iter__(self) -> Iterator[Version]:
        return iter((Version.V1_0, Version.V1_1, Version.V0_3))

    def __len__(self) -> int:
        return len(Version)


GRPC: Mapping[Version, ProtobufCodec] = _ProtobufCodecs()
"""Protobuf messages of each version's proto (`lf.a2a.v1`, `a2a.v1`; the 1.1 draft's
`lf.a2a.v1` in a pool of its own): the gRPC binding."""
