"""What a stream's task generations tell its client (A2A 1.1 draft): each status or
artifact update carries the task's generation after it, one more than the last, so a jump
means events were missed (the stream then fetches the task: `ClientStream`), and an
update numbered at or below what the client already holds adds nothing.

A server that does not number its tasks sends 0; one that numbers them wrongly repeats a
number: either way generations are not used for the rest of the stream (the draft's rule).
No I/O.
"""

from __future__ import annotations

import enum

from parley.model import StreamEvent, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent


class Verdict(enum.Enum):
    DELIVER = "deliver"
    SKIP = "skip"
    """Numbered at or below a snapshot already delivered: nothing new."""
    GAP = "gap"
    """Numbered past the next: some events were missed."""


class Generations:
    """One stream's view of its task's generation."""

    __slots__ = ("covered", "last", "used")

    def __init__(self) -> None:
        self.last = 0
        """The generation of the last task event delivered (0: none numbered yet)."""
        self.covered = 0
        """The generation of the last Task snapshot delivered: updates up to it are in it."""
        self.used = True

    def see(self, event: StreamEvent) -> Verdict:
        """What to do with `event` (remembered as delivered unless skipped)."""
        if not self.used:
            return Verdict.DELIVER
        if isinstance(event, Task):
            if event.generation:
                self.last = self.covered = event.generation
            return Verdict.DELIVER
        if not isinstance(event, TaskStatusUpdateEvent | TaskArtifactUpdateEvent):
            return Verdict.DELIVER  # a message: not numbered
        number = event.generation
        if number == 0 or number == self.last > self.covered:
            self.used = False  # not numbered, or the same number twice: not to be relied on
            return Verdict.DELIVER
        if number <= self.covered:
            return Verdict.SKIP
        gap = self.last > 0 and number > self.last + 1
        self.last = max(self.last, number)
        return Verdict.GAP if gap else Verdict.DELIVER

    def reconciled(self, task: Task) -> None:
        """The task fetched after a gap: what it holds is delivered."""
        if task.generation:
            self.last = self.covered = max(self.last, task.generation)
