"""The store benchmark: Parley's memory, SQLite and PostgreSQL stores, and the official
a2a-sdk SQL store on the same databases, side by side in one run.

    python -m benchmarks.stores                  # everything
    python -m benchmarks.stores --quick          # smaller figures, shorter runs
    python -m benchmarks.stores --only chunks list

- `chunks`: append 1,000 and 3,000 artifact chunks to one task, one committed save per
  chunk (what the task runner does per event; the SDK's task manager saves the whole task
  per event the same way). Linear storage keeps the 3,000/1,000 time ratio near 3.
- `list`: ListTasks' first page (50 tasks) with 100,000 tasks stored, in SQLite and
  PostgreSQL: unfiltered, by context, by state, with artifacts, and the second page.
- `send`: end-to-end blocking sends (wrk, 16 connections) on Parley with each store and on
  the SDK server with its in-memory and SQL stores (`benchmarks.server`'s harness: server
  on core 0, load on core 1).

PostgreSQL runs in a database created for the run and dropped after it. Raw numbers go to
benchmarks/results/ (git-ignored) as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import store_send
from benchmarks.store_fill import fill_postgres, fill_sqlite
from parley.model import (
    Artifact,
    ListTasksRequest,
    Message,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TextPart,
)
from parley.protocol import folding
from parley.server.stores import open_store

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
POSTGRES = "postgresql://postgres@127.0.0.1:5432"
SCOPE = ("", "bench")


@dataclass(frozen=True)
class Config:
    chunk_counts: tuple[int, int] = (1000, 3000)
    list_tasks: int = 100_000
    list_repeats: int = 30
    send_seconds: int = 10


QUICK = Config(chunk_counts=(300, 900), list_tasks=20_000, list_repeats=10, send_seconds=3)


# ----------------------------------------------------------------------------- databases


@dataclass(frozen=True)
class Databases:
    """Where one run keeps its data: a scratch directory and a fresh PostgreSQL database."""

    directory: Path
    postgres: str
    """postgresql://…/<database> (asyncpg form)."""

    def sqlite(self, name: str) -> str:
        return f"sqlite:///{self.directory / name}.db"

    def parley_postgres(self, schema: str) -> str:
        return f"{self.postgres}?schema={schema}"

    def sdk_sqlite(self, name: str) -> str:
        return f"sqlite+aiosqlite:///{self.directory / name}.db"

    def sdk_postgres(self) -> str:
        return self.postgres.replace("postgresql://", "postgresql+asyncpg://", 1)


@asynccontextmanager
async def databases() -> AsyncIterator[Databases]:
    import asyncpg  # noqa: PLC0415 - the postgres extra

    name = f"parley_bench_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(f"{POSTGRES}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        with tempfile.TemporaryDirectory(prefix="parley-bench-") as directory:
            yield Databases(Path(directory), f"{POSTGRES}/{name}")
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def new_schema(url: str) -> str:
    import asyncpg  # noqa: PLC0415

    schema = f"s_{uuid.uuid4().hex[:10]}"
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(f'CREATE SCHEMA "{schema}"')
    finally:
        await connection.close()
    return schema


# ----------------------------------------------------------------------------- chunks


def _chunk(index: int) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id="",
        context_id="",
        artifact=Artifact(artifact_id="out", parts=(TextPart(text=f"chunk {index:05d} "),)),
        append=index > 0,
    )


def _new_task() -> Task:
    now = datetime.now(UTC)
    user = Message(message_id=uuid.uuid4().hex, role=Role.USER, parts=(TextPart(text="go"),))
    return Task(
        id=uuid.uuid4().hex,
        context_id=uuid.uuid4().hex,
        status=TaskStatus(state=TaskState.WORKING, timestamp=now),
        history=(user,),
    )


async def parley_chunks(url: str, count: int) -> float:
    """Seconds to fold and commit `count` chunk events into one task, one save each."""
    stores = open_store(url)
    await stores.tasks.open()
    try:
        stored = await stores.tasks.create(SCOPE, _new_task())
        started = time.perf_counter()
        for index in range(count):
            event = _chunk(index)
            task = folding.apply_event(stored.task, event)
            stored = await stores.tasks.save(SCOPE, task, (event,), stored.version)
        elapsed = time.perf_counter() - started
        assert len(stored.task.artifacts[0].parts) == count
        return elapsed
    finally:
        await stores.tasks.close()


async def sdk_chunks(url: str, count: int) -> float:
    """The same on the SDK's SQL store: the task (a protobuf) grows, and is saved whole."""
    from a2a.server.context import ServerCallContext  # noqa: PLC0415 - test-only peer
    from a2a.server.tasks import DatabaseTaskStore  # noqa: PLC0415
    from a2a.types import a2a_pb2  # noqa: PLC0415
    from sqlalchemy.ext.asyncio import create_async_engine  # noqa: PLC0415

    engine = create_async_engine(url)
    store = DatabaseTaskStore(engine, table_name=f"sdk_{uuid.uuid4().hex[:8]}")
    context = ServerCallContext()
    task = a2a_pb2.Task(id=uuid.uuid4().hex, context_id=uuid.uuid4().hex)
    task.status.state = a2a_pb2.TaskState.TASK_STATE_WORKING
    task.status.timestamp.GetCurrentTime()
    task.history.add(message_id="m", role=a2a_pb2.Role.ROLE_USER).parts.add(text="go")
    artifact = task.artifacts.add(artifact_id="out")
    try:
        await store.save(task, context)
        started = time.perf_counter()
        for index in range(count):
            artifact.parts.add(text=f"chunk {index:05d} ")
            await store.save(task, context)
        elapsed = time.perf_counter() - started
        found = await store.get(task.id, context)
        assert found is not None
        assert len(found.artifacts[0].parts) == count
        return elapsed
    finally:
        await engine.dispose()


async def measure_chunks(config: Config, where: Databases) -> dict[str, Any]:
    small, large = config.chunk_counts
    backends: dict[str, Any] = {
        "Parley memory": lambda n: parley_chunks("memory", n),
        "Parley SQLite": lambda n: parley_chunks(where.sqlite(f"chunks-{n}"), n),
        "Parley PostgreSQL": lambda n: _parley_pg_chunks(where, n),
        "a2a-sdk SQLite": lambda n: sdk_chunks(where.sdk_sqlite(f"sdk-chunks-{n}"), n),
        "a2a-sdk PostgreSQL": lambda n: sdk_chunks(where.sdk_postgres(), n),
    }
    results: dict[str, Any] = {}
    for label, run in backends.items():
        seconds = {str(n): await run(n) for n in (small, large)}
        ratio = seconds[str(large)] / seconds[str(small)]
        results[label] = {"seconds": seconds, "ratio": ratio}
        print(
            f"  {label:<20} {small:>5}: {seconds[str(small)]:8.3f} s"
            f"  {large:>5}: {seconds[str(large)]:8.3f} s  ratio {ratio:5.2f}",
            flush=True,
        )
    return results


async def _parley_pg_chunks(where: Databases, count: int) -> float:
    return await parley_chunks(where.parley_postgres(await new_schema(where.postgres)), count)


# ----------------------------------------------------------------------------- list


LISTINGS: dict[str, ListTasksRequest] = {
    "first page": ListTasksRequest(),
    "by context": ListTasksRequest(context_id="ctx-7"),
    "by state (working)": ListTasksRequest(status=TaskState.WORKING),
    "with artifacts": ListTasksRequest(include_artifacts=True),
    "history 0": ListTasksRequest(history_length=0),
}


async def _timed_listings(url: str, repeats: int) -> dict[str, Any]:
    stores = open_store(url)
    await stores.tasks.open()
    figures: dict[str, Any] = {}
    try:
        requests = dict(LISTINGS)
        first = await stores.tasks.list(SCOPE, ListTasksRequest(), 50)
        requests["second page"] = ListTasksRequest(page_token=first.next_page_token)
        for label, request in requests.items():
            page = await stores.tasks.list(SCOPE, request, 50)  # warm
            assert len(page.tasks) == min(50, page.total_size) > 0, (label, len(page.tasks))
            times = []
            for _ in range(repeats):
                started = time.perf_counter()
                await stores.tasks.list(SCOPE, request, 50)
                times.append((time.perf_counter() - started) * 1000)
            times.sort()
            figures[label] = {
                "p50_ms": statistics.median(times),
                "p95_ms": times[int(len(times) * 0.95) - 1],
                "total_size": page.total_size,
            }
    finally:
        await stores.tasks.close()
    return figures


async def measure_list(config: Config, where: Databases) -> dict[str, Any]:
    results: dict[str, Any] = {}
    sqlite_url = where.sqlite("list")
    postgres_url = where.parley_postgres(await new_schema(where.postgres))
    for label, url, fill in (
        ("SQLite", sqlite_url, fill_sqlite),
        ("PostgreSQL", postgres_url, fill_postgres),
    ):
        started = time.perf_counter()
        await fill(url, SCOPE, config.list_tasks)
        took = time.perf_counter() - started
        print(f"  {label}: {config.list_tasks:,} tasks stored in {took:.1f} s")
        results[label] = figures = await _timed_listings(url, config.list_repeats)
        for name, figure in figures.items():
            print(
                f"  {label:<11} {name:<20} p50 {figure['p50_ms']:7.2f} ms"
                f"  p95 {figure['p95_ms']:7.2f} ms  (of {figure['total_size']:,})",
                flush=True,
            )
    return results


# ----------------------------------------------------------------------------- main


async def _run(config: Config, only: Sequence[str]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    async with databases() as where:
        if "chunks" in only:
            print("Appending artifact chunks to one task (one committed save per chunk)")
            results["chunks"] = await measure_chunks(config, where)
        if "list" in only:
            print(f"ListTasks, first page of 50, {config.list_tasks:,} tasks stored")
            results["list"] = await measure_list(config, where)
        if "send" in only:
            print(f"Blocking send, wrk, 16 connections, {config.send_seconds} s per server")
            results["send"] = await asyncio.to_thread(
                store_send.measure, where, config.send_seconds, new_schema
            )
    return results


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller figures, shorter runs")
    parser.add_argument(
        "--only", nargs="+", choices=("chunks", "list", "send"), default=("chunks", "list", "send")
    )
    args = parser.parse_args(argv)
    config = QUICK if args.quick else Config()
    results = asyncio.run(_run(config, args.only))
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    path = RESULTS / f"stores-{stamp}.json"
    path.write_text(json.dumps({"config": config.__dict__, "results": results}, indent=2))
    print(f"Raw figures: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
