"""Where the 1.0 and 0.3 protos write content differently, as tables: enum spellings, the
part forms, member names and order, and what only one of them has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from parley.model import Part, TaskState
from parley.wire.protojson.fields import STATE_NAMES, STATE_NAMES_V0_3, STATES, STATES_V0_3
from parley.wire.protojson.parts import (
    decode_part,
    decode_part_v0_3,
    encode_parts,
    encode_parts_v0_3,
)
from parley.wire.reader import Obj


@dataclass(frozen=True, slots=True)
class Spelling:
    """What one proto version writes its own way in content and events."""

    state_names: Mapping[TaskState, str]
    states: Mapping[str | int, TaskState]
    encode_parts: Callable[[tuple[Part, ...]], list[Obj]]
    decode_part: Callable[[Any], Part]
    message_parts: str = "parts"
    """A message's parts member: `parts` (1.0), `content` (0.3)."""
    ids_first: bool = False
    """A message's `contextId` and `taskId` come before its `role` (0.3's field order)."""
    reference_task_ids: bool = True
    """A message has `referenceTaskIds` (1.0; the 0.3 proto has no place for them)."""
    final: bool = False
    """A status update writes the derived `final` (0.3)."""
    status_message: str | None = None
    """The proto name of `TaskStatus.message`, where it is not `message` (0.3: `update`)."""
    message_member: str | None = None
    """The proto name of the `message` member of a `StreamResponse` (0.3: `msg`)."""
    null_is_required: bool = False
    """A null object is refused as `is required` (0.3), not `expected a JSON object`."""
    metadata_first: bool = True
    """Of a payload with several faults, the one named: metadata (and an artifact's name
    and description) are checked before parts, status and lists (1.0), or after (0.3)."""


SPELLING_V1_0 = Spelling(STATE_NAMES, STATES, encode_parts, decode_part)
"""The 1.0 proto's spelling (the defaults are 1.0's)."""

SPELLING_V0_3 = Spelling(
    STATE_NAMES_V0_3,
    STATES_V0_3,
    encode_parts_v0_3,
    decode_part_v0_3,
    message_parts="content",
    ids_first=True,
    reference_task_ids=False,
    final=True,
    status_message="update",
    message_member="msg",
    null_is_required=True,
    metadata_first=False,
)
"""The 0.3 proto's spelling: a message's parts under `content`, `TaskStatus.message` also
read as `update`, the derived `final`, `TASK_STATE_CANCELLED`, no `referenceTaskIds`."""
