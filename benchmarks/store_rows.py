"""What the durable stores' row encoding costs, counted in instructions under valgrind's
callgrind (in process, no server; PostgreSQL's own work not counted), for two source
trees side by side, and the bytes each row holds:

    python -m benchmarks.store_rows --before OTHER_CHECKOUT/src [--count 100]

- **write**: a send as the runner stores it: create the task (one user message), then
  save WORKING, an artifact and COMPLETED with a message (three saves).
- **write+config**: the same with an inline push config (the writes record notifications).
- **read**: `get` of a written task and a ListTasks page of 10 with artifacts.

Instructions per operation are the difference of runs of n and 2n operations (start-up,
imports and migrations cancel out). Bytes per row: the mean length of each column holding
model objects, after the write workload.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
POSTGRES = os.environ.get("PARLEY_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
WORKLOADS = ("write", "write+config", "read")
STORES = ("sqlite", "postgres")
COLUMNS = (
    ("tasks", "status"),
    ("task_messages", "body"),
    ("artifacts", "header"),
    ("artifact_chunks", "parts"),
    ("push_configs", "body"),
)


# ----------------------------------------------------------------------------- the child


async def _send(stores: Any, scope: tuple[str, str], task_id: str, config: bool) -> None:
    from parley.model import (  # noqa: PLC0415 - from the tree measured
        Artifact,
        Message,
        Role,
        Task,
        TaskArtifactUpdateEvent,
        TaskPushNotificationConfig,
        TaskState,
        TaskStatus,
        TaskStatusUpdateEvent,
        TextPart,
    )
    from parley.protocol import folding  # noqa: PLC0415
    from parley.protocol.negotiation import Version  # noqa: PLC0415

    user = Message(
        message_id=f"m-{task_id}",
        role=Role.USER,
        parts=(TextPart(text="Summarise this document, please."),),
        context_id="ctx",
        task_id=task_id,
    )
    task = Task(
        id=task_id, context_id="ctx", status=TaskStatus(state=TaskState.SUBMITTED), history=(user,)
    )
    hook = TaskPushNotificationConfig(url="https://hook.example/a2a", task_id=task_id, id="h")
    configs = ((hook, Version.V1_0),) if config else ()
    stored = await stores.tasks.create(scope, task, configs=configs)
    reply = Message(
        message_id=f"r-{task_id}", role=Role.AGENT, parts=(TextPart(text="Done."),),
        context_id="ctx", task_id=task_id,
    )  # fmt: skip
    events = (
        TaskStatusUpdateEvent(
            task_id=task_id, context_id="ctx", status=TaskStatus(state=TaskState.WORKING)
        ),
        TaskArtifactUpdateEvent(
            task_id=task_id,
            context_id="ctx",
            artifact=Artifact(artifact_id="a1", parts=(TextPart(text="A short summary."),)),
        ),
        TaskStatusUpdateEvent(
            task_id=task_id,
            context_id="ctx",
            status=TaskStatus(state=TaskState.COMPLETED, message=reply),
        ),
    )
    for event in events:
        task = folding.apply_event(stored.task, event)
        stored = await stores.tasks.save(scope, task, (event,), stored.version)


async def _child(spec: dict[str, Any]) -> None:
    from parley.model import ListTasksRequest  # noqa: PLC0415
    from parley.server.stores import open_store  # noqa: PLC0415

    stores = open_store(spec["url"])
    await stores.tasks.open()
    await stores.push_configs.open()
    scope = ("", "bench")
    try:
        workload, count = spec["workload"], spec["count"]
        if workload == "read":
            for i in range(20):
                await _send(stores, scope, f"t{i}", config=False)
            request = ListTasksRequest(include_artifacts=True)
            for i in range(count):
                await stores.tasks.get(scope, f"t{i % 20}")
                await stores.tasks.list(scope, request, 10)
        else:
            for i in range(count):
                await _send(stores, scope, f"t{i}", config=workload == "write+config")
    finally:
        await stores.push_configs.close()
        await stores.tasks.close()


# ----------------------------------------------------------------------------- the parent


def _url(store: str, folder: str) -> tuple[str, str]:
    """A fresh database: its store URL and (PostgreSQL) its schema."""
    if store == "sqlite":
        return f"sqlite:///{folder}/{uuid.uuid4().hex}.db", ""
    schema = f"bench_rows_{uuid.uuid4().hex[:10]}"
    return f"{POSTGRES}?schema={schema}", schema


def _drop(schema: str) -> None:
    if not schema:
        return
    import asyncpg  # noqa: PLC0415 - the postgres extra

    async def drop() -> None:
        connection = await asyncpg.connect(POSTGRES)
        try:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await connection.close()

    asyncio.run(drop())


def _run(spec: dict[str, Any], src: str, wrap: list[str]) -> None:
    environment = {**os.environ, "PYTHONPATH": src}
    command = [*wrap, sys.executable, "-m", "benchmarks.store_rows", "--run", json.dumps(spec)]
    subprocess.run(command, check=True, cwd=ROOT, env=environment, capture_output=True)


def _instructions(spec: dict[str, Any], src: str) -> int:
    with tempfile.TemporaryDirectory() as folder:
        url, schema = _url(spec["store"], folder)
        out = Path(folder) / "callgrind.out"
        try:
            wrap = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
            _run({**spec, "url": url}, src, wrap)
        finally:
            _drop(schema)
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError("no totals in callgrind's output")


def _bytes(src: str, count: int) -> dict[str, float]:
    """Mean bytes per row of each model column (SQLite), after `count` sends."""
    import sqlite3  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as folder:
        url, _ = _url("sqlite", folder)
        _run({"store": "sqlite", "workload": "write+config", "count": count, "url": url}, src, [])
        connection = sqlite3.connect(url[len("sqlite:///") :])
        try:
            return {
                f"{table}.{column}": connection.execute(
                    f"SELECT avg(length(CAST({column} AS BLOB))) FROM {table}"
                ).fetchone()[0]
                for table, column in COLUMNS
            }
        finally:
            connection.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--before", required=False, help="the src folder compared against")
    parser.add_argument("--src", default=str(ROOT / "src"), help="the src folder measured")
    parser.add_argument("--count", type=int, default=100, help="operations per run")
    parser.add_argument("--stores", nargs="+", choices=STORES, default=list(STORES))
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    parser.add_argument("--run", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run:
        asyncio.run(_child(json.loads(args.run)))
        return
    trees = {"before": args.before, "after": args.src} if args.before else {"after": args.src}
    sizes = {name: _bytes(src, 20) for name, src in trees.items()}
    print("| column | " + " | ".join(f"bytes per row, {name}" for name in trees) + " |")
    print("|---|" + "---|" * len(trees))
    for key in sizes["after"]:
        print(f"| {key} | " + " | ".join(f"{sizes[name][key]:.1f}" for name in trees) + " |")
    print("\n| store | workload | " + " | ".join(trees) + " | after / before |")
    print("|---|---|" + "---|" * (len(trees) + 1))
    for store in args.stores:
        for workload in args.workloads:
            per = {}
            for name, src in trees.items():
                spec = {"store": store, "workload": workload}
                once = _instructions({**spec, "count": args.count}, src)
                twice = _instructions({**spec, "count": 2 * args.count}, src)
                per[name] = (twice - once) / args.count
            ratio = f"{per['after'] / per['before']:.3f}" if "before" in per else ""
            counts = " | ".join(f"{per[name]:,.0f}" for name in trees)
            print(f"| {store} | {workload} | {counts} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
