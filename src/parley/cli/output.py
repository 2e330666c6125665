"""What the commands that talk to agents print: readable text for people (streamed text as
it arrives, `● state` lines, files by name, data as compact JSON), or with `--json` the
A2A 1.0 wire JSON of each result — one document, or one line per stream event."""

from __future__ import annotations

import json
import os
import sys
from typing import TextIO

from parley.client import Reconnected, StreamItem
from parley.model import (
    AgentCard,
    ListTasksResponse,
    Message,
    Part,
    RawPart,
    Role,
    SendMessageResult,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    UrlPart,
)
from parley.protocol.operations import Operation
from parley.wire.json_bytes import JSON
from parley.wire.v1_0.protojson_codec import CODEC

Result = SendMessageResult | ListTasksResponse


def state_name(state: TaskState) -> str:
    """`input-required`, `completed`, …"""
    return state.name.lower().replace("_", "-")


def compact(value: JSON) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def part_text(part: Part) -> str:
    """One part as text: text as it is, a file by name and media type, data as JSON."""
    if isinstance(part, TextPart):
        return part.text
    if isinstance(part, RawPart):
        return f"[file {_file(part.filename, part.media_type)}, {len(part.raw)} bytes]"
    if isinstance(part, UrlPart):
        return f"[file {_file(part.filename, part.media_type)} at {part.url}]"
    return compact(part.data)


def _file(name: str, media_type: str) -> str:
    return f"{name or '(unnamed)'} ({media_type or 'unknown type'})"


def parts_text(parts: tuple[Part, ...], separator: str = "\n") -> str:
    """Parts as text: consecutive text parts run on (a streamed artifact's chunks), any
    other part is set apart by `separator`."""
    pieces: list[str] = []
    runs_on = False
    for part in parts:
        if runs_on and isinstance(part, TextPart):
            pieces[-1] += part.text
        else:
            pieces.append(part_text(part))
        runs_on = isinstance(part, TextPart)
    return separator.join(pieces)


def status_line(status: TaskStatus) -> str:
    """`● completed`, with the status message if there is one."""
    line = f"● {state_name(status.state)}"
    if status.message is not None and status.message.parts:
        line += f": {parts_text(status.message.parts, ' ')}"
    return line


def task_lines(task: Task, *, history: bool = False) -> list[str]:
    lines = [f"task {task.id}  context {task.context_id}"]
    if history:
        lines += [_history_line(message) for message in task.history]
    lines += [parts_text(artifact.parts) for artifact in task.artifacts]
    lines.append(status_line(task.status))
    return lines


def _history_line(message: Message) -> str:
    who = "user" if message.role is Role.USER else "agent"
    return f"  {who}: {parts_text(message.parts, ' ')}"


def list_lines(page: ListTasksResponse) -> list[str]:
    if not page.tasks:
        return ["no tasks"]
    lines = []
    for task in page.tasks:
        when = task.status.timestamp.isoformat(timespec="seconds") if task.status.timestamp else ""
        lines.append(f"{task.id}  {state_name(task.status.state):<14}  {task.context_id}  {when}")
    lines.append(f"{len(page.tasks)} of {page.total_size} tasks")
    if page.next_page_token:
        lines.append(f"next page: --page-token {page.next_page_token}")
    return lines


def card_lines(card: AgentCard) -> list[str]:
    lines = [f"{card.name} {card.version}", card.description]
    if card.provider is not None:
        lines.append(f"provider: {card.provider.organization} {card.provider.url}")
    if card.documentation_url:
        lines.append(f"documentation: {card.documentation_url}")
    lines.append("interfaces:")
    for interface in card.supported_interfaces:
        tenant = f"  (tenant {interface.tenant})" if interface.tenant else ""
        binding, version = interface.protocol_binding, interface.protocol_version
        lines.append(f"  {binding:<10} {version:<4} {interface.url}{tenant}")
    lines.append(f"capabilities: {_capabilities(card)}")
    for extension in card.capabilities.extensions:
        required = " (required)" if extension.required else ""
        lines.append(f"  extension {extension.uri}{required}")
    if card.security_schemes:
        lines.append(f"security: {', '.join(card.security_schemes)}")
    modes = f"input: {', '.join(card.default_input_modes)}"
    lines.append(f"{modes}   output: {', '.join(card.default_output_modes)}")
    lines.append("skills:" if card.skills else "skills: none")
    for skill in card.skills:
        lines.append(f"  {skill.id}: {skill.description}")
        if skill.name != skill.id:
            lines.append(f"    name: {skill.name}")
        if skill.tags:
            lines.append(f"    tags: {', '.join(skill.tags)}")
        if skill.examples:
            lines.append(f"    examples: {' | '.join(skill.examples)}")
    return lines


def _capabilities(card: AgentCard) -> str:
    flags = card.capabilities
    named = [
        ("streaming", flags.streaming),
        ("push notifications", flags.push_notifications),
        ("extended card", flags.extended_agent_card),
    ]
    return ", ".join(name for name, on in named if on) or "none"


class Output:
    """Prints results and stream events, readable or as 1.0 JSON (`as_json`).

    A stream's text chunks of one artifact are appended on one line; anything else
    (a status, another artifact, a file) starts a new line.
    """

    def __init__(self, *, as_json: bool, history: bool = False, out: TextIO | None = None) -> None:
        self.as_json = as_json
        self.history = history
        self.out = out or sys.stdout
        self._open_artifact: str | None = None
        """The artifact whose text chunks are being appended to the current line."""
        self._dirty = False
        """Whether the current line has text (streamed text not ending in a newline)."""

    def _line(self, text: str) -> None:
        self.end_line()
        self.out.write(text + "\n")
        self.out.flush()

    def abandon(self) -> None:
        """The reader has gone (a closed pipe): send whatever is left to /dev/null, so
        that exiting does not fail flushing it."""
        nowhere = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(nowhere, self.out.fileno())
        finally:
            os.close(nowhere)

    def end_line(self) -> None:
        """Finish a line of streamed text, if one is open."""
        if self._dirty:
            self.out.write("\n")
            self.out.flush()
        self._dirty = False
        self._open_artifact = None

    def card(self, card: AgentCard) -> None:
        if self.as_json:
            self._line(json.dumps(CODEC.encode_card(card), ensure_ascii=False, indent=2))
        else:
            self._line("\n".join(card_lines(card)))

    def result(self, operation: Operation, value: Result) -> None:
        """A unary result, as the 1.0 `result` of `operation` (a task, a message, a page)."""
        if self.as_json:
            document = CODEC.encode_response(operation, value)
            self._line(json.dumps(document, ensure_ascii=False, indent=2))
        elif isinstance(value, Task):
            self._line("\n".join(task_lines(value, history=self.history)))
        elif isinstance(value, Message):
            self._line(parts_text(value.parts))
        else:
            self._line("\n".join(list_lines(value)))

    def event(self, item: StreamItem) -> None:
        """One stream item; with `--json`, the 1.0 StreamResponse of each event (a task
        snapshot after a reconnection is a `task` line)."""
        if self.as_json:
            if isinstance(item, Reconnected):
                if item.task is not None:
                    self._line(compact(CODEC.encode_event(item.task)))
                return
            self._line(compact(CODEC.encode_event(item)))
            return
        match item:
            case Reconnected():
                self._line(f"↻ reconnected: {item.reason}")
                if item.task is not None:
                    self._line(status_line(item.task.status))
            case Task():
                self._line("\n".join(task_lines(item)))
            case Message():
                self._line(parts_text(item.parts))
            case TaskStatusUpdateEvent():
                self._line(status_line(item.status))
            case _:
                self._artifact(item)

    def _artifact(self, event: TaskArtifactUpdateEvent) -> None:
        artifact = event.artifact
        continues = event.append and self._open_artifact == artifact.artifact_id
        for part in artifact.parts:
            if not isinstance(part, TextPart):
                self._line(part_text(part))
                continues = False
                continue
            if not continues:
                self.end_line()
            self.out.write(part.text)
            self.out.flush()
            self._dirty = not part.text.endswith("\n") if part.text else self._dirty
            self._open_artifact = artifact.artifact_id
            continues = True
        if event.last_chunk:
            self.end_line()
