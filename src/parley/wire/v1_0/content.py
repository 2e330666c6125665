"""The 1.0 proto's content: parts, messages, artifacts, task status, tasks and stream
events, by name (`protojson.content.V1_0`'s readers and writers).
"""

from __future__ import annotations

from parley.wire.protojson.content import V1_0 as CONTENT
from parley.wire.protojson.parts import decode_part, encode_part

__all__ = ["CONTENT", "decode_part", "encode_part"]  # and the bound readers and writers below

encode_message = CONTENT.encode_message
decode_message = CONTENT.decode_message
encode_artifact = CONTENT.encode_artifact
decode_artifact = CONTENT.decode_artifact
encode_status = CONTENT.encode_status
decode_status = CONTENT.decode_status
encode_task = CONTENT.encode_task
decode_task = CONTENT.decode_task
encode_status_event = CONTENT.encode_status_event
decode_status_event = CONTENT.decode_status_event
encode_artifact_event = CONTENT.encode_artifact_event
decode_artifact_event = CONTENT.decode_artifact_event
encode_event = CONTENT.encode_event
decode_event = CONTENT.decode_event
