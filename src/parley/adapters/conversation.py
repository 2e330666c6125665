"""What the framework adapters (LangGraph, pydantic-ai) share: the key under which a
conversation's state is kept (the A2A context, scoped by caller), and text streamed as
artifact chunks. Imports no framework.
"""

from __future__ import annotations

from urllib.parse import quote

from parley.server.context import ANONYMOUS
from parley.server.task_context import TaskContext

_NO_KEY = object()


def conversation_key(task: TaskContext) -> str:
    """The A2A context id for an anonymous caller; `<caller id, percent-encoded>/<context
    id>` for an authenticated one, so that one caller naming another's context id does not
    reach the other's conversation (DESIGN 8: scope before lookup). The caller id is
    encoded so that no two (caller, context) pairs make the same key; an anonymous
    caller's context id holding a `/` (`alice/c1`, which would be Alice's key for `c1`) is
    prefixed with `:`, which no encoded caller id holds."""
    caller = task.caller.id
    if caller == ANONYMOUS:
        context = task.context_id
        return f":{context}" if "/" in context else context
    return f"{quote(caller, safe='')}/{task.context_id}"


class TextArtifacts:
    """Text pieces streamed as artifacts, one artifact per key (a model message, a text
    part): each piece is sent when the next one arrives, so that the last piece of an
    artifact carries `lastChunk` (as Parley's own generator skills stream)."""

    def __init__(self, task: TaskContext, name: str) -> None:
        self._task = task
        self._name = name
        self._key: object = _NO_KEY
        self._held = ""
        self._artifact_id = ""
        self._sent = 0
        self.keys: set[object] = set()
        """The keys streamed so far (a whole message whose key is here was streamed)."""

    async def add(self, key: object, text: str) -> None:
        """The next piece of the artifact `key` (a new key closes the previous one)."""
        if key != self._key:
            await self.close()
            self._key = key
            self.keys.add(key)
        if not text:
            return
        await self._send(last=False)
        self._held = text

    async def close(self) -> None:
        """Send the held piece as the artifact's last chunk; the next piece starts a new
        artifact."""
        await self._send(last=True)
        self._key, self._artifact_id, self._sent = _NO_KEY, "", 0

    async def _send(self, last: bool) -> None:
        if not self._held:
            return
        self._artifact_id = await self._task.artifact(
            self._held,
            artifact_id=self._artifact_id,
            name=self._name,
            append=self._sent > 0,
            last_chunk=last,
        )
        self._held = ""
        self._sent += 1


__all__ = ["TextArtifacts", "conversation_key"]
