"""End-to-end blocking sends with each store: Parley (memory, SQLite, PostgreSQL) and the
official a2a-sdk server (its in-memory store, its SQL store on SQLite and PostgreSQL),
through `benchmarks.server`'s harness (uvicorn, server on core 0, wrk on core 1)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks import server
from benchmarks.server import RESULTS, Config, ServerSpec, _send_once, quietly

if TYPE_CHECKING:
    from benchmarks.stores import Databases

CONNECTIONS = 16


def servers(where: Databases, schema: str) -> list[ServerSpec]:
    return [
        ServerSpec("parley-memory", "parley_echo", "Parley memory", (("BENCH_STORE", "memory"),)),
        ServerSpec(
            "parley-sqlite", "parley_echo", "Parley SQLite",
            (("BENCH_STORE", where.sqlite("send-parley")),),
        ),
        ServerSpec(
            "parley-postgres", "parley_echo", "Parley PostgreSQL",
            (("BENCH_STORE", where.parley_postgres(schema)),),
        ),
        ServerSpec("sdk-memory", "sdk_echo", "a2a-sdk memory"),
        ServerSpec(
            "sdk-sqlite", "sdk_echo", "a2a-sdk SQLite",
            (("BENCH_SDK_DB", where.sdk_sqlite("send-sdk")),),
        ),
        ServerSpec(
            "sdk-postgres", "sdk_echo", "a2a-sdk PostgreSQL",
            (("BENCH_SDK_DB", where.sdk_postgres()),),
        ),
    ]  # fmt: skip


RATIOS = (
    ("parley-memory", "sdk-memory"),
    ("parley-sqlite", "sdk-sqlite"),
    ("parley-postgres", "sdk-postgres"),
)


def measure(
    where: Databases, seconds: int, new_schema: Callable[[str], Coroutine[Any, Any, str]]
) -> dict[str, Any]:
    """Requests per second (and latency) of each server; Parley/SDK ratio per store."""
    server.COMPANIONS = ("postgres",)  # the database works for the server under test
    schema = asyncio.run(new_schema(where.postgres))
    config = Config(duration=seconds, warmup=2)
    RESULTS.mkdir(parents=True, exist_ok=True)
    log = RESULTS / "stores-servers.log"
    figures: dict[str, Any] = {}
    for spec in servers(where, schema):
        once = functools.partial(_send_once, spec, config, Path(log), CONNECTIONS)
        result = quietly(spec.label, once)
        figures[spec.key] = result
        print(
            f"  {spec.label:<20} {result['rps']:>8.0f} req/s  p50 {result['p50_ms']:6.2f} ms"
            f"  p99 {result['p99_ms']:6.2f} ms  (PostgreSQL {result['companion_cores']:.2f},"
            f" others {result['foreign_cores']:.2f} cores)",
            flush=True,
        )
    ratios = {
        f"{ours}/{theirs}": figures[ours]["rps"] / figures[theirs]["rps"] for ours, theirs in RATIOS
    }
    for label, ratio in ratios.items():
        print(f"  {label}: {ratio:.1f}x")
    return {"servers": figures, "ratios": ratios}
