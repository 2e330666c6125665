"""`--output DIR` (`-o`): the files an agent sent (file parts carrying their bytes) written
into a folder under their own names. A name comes from the agent, so only its last path
component is used, never `.`/`..` or a hidden name; a part without a usable name gets
`file-N` with an extension from its media type; an existing file is never overwritten
(`name-1.ext`, …). Files given by URL are not fetched: their line shows the URL."""

from __future__ import annotations

import argparse
import mimetypes
import sys
from collections.abc import Iterable
from pathlib import Path, PurePosixPath, PureWindowsPath

from parley.cli.errors import UsageError
from parley.client import StreamItem
from parley.model import Message, Part, RawPart, Task, TaskArtifactUpdateEvent


def directory(value: str) -> Path:
    """The `--output` argument: a folder, made if missing. An argument type, so a folder
    that cannot be made is argparse's one-line usage error (exit status 2)."""
    path = Path(value)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot use {value}: {exc.strerror or exc}") from None
    return path


def parts_of(result: Task | Message | StreamItem) -> Iterable[Part]:
    """The parts a result carries files in: a task's artifacts, a message's parts, an
    artifact update's."""
    if isinstance(result, Task):
        return (part for artifact in result.artifacts for part in artifact.parts)
    if isinstance(result, Message):
        return result.parts
    if isinstance(result, TaskArtifactUpdateEvent):
        return result.artifact.parts
    return ()


class Saver:
    """Writes the file parts of results into `folder`, and says so on stderr."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0

    def save(self, result: Task | Message | StreamItem) -> list[Path]:
        saved = []
        for part in parts_of(result):
            if isinstance(part, RawPart):
                path = self._write(part)
                sys.stderr.write(f"saved {path} ({len(part.raw)} bytes)\n")
                saved.append(path)
        sys.stderr.flush()
        return saved

    def _write(self, part: RawPart) -> Path:
        self.count += 1
        name = safe_name(part.filename) or f"file-{self.count}{_extension(part.media_type)}"
        stem, suffix = Path(name).stem, Path(name).suffix
        for attempt in range(10_000):
            path = self.folder / (name if attempt == 0 else f"{stem}-{attempt}{suffix}")
            try:
                with path.open("xb") as file:  # never overwrite
                    file.write(part.raw)
            except FileExistsError:
                continue
            return path
        raise UsageError(f"--output: too many files named {name} in {self.folder}")


def safe_name(name: str) -> str:
    """The last component of an agent-given file name ("" if none is usable)."""
    base = PureWindowsPath(PurePosixPath(name).name).name.strip()
    if not base or base.startswith(".") or "\x00" in base:
        return ""
    return base


def _extension(media_type: str) -> str:
    if not media_type:
        return ""
    return mimetypes.guess_extension(media_type.split(";", maxsplit=1)[0].strip()) or ""
