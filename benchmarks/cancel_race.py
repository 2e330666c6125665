"""Send non-blocking, cancel at once, many chains side by side: the race between a cancel
and the agent's first writes. Serves `examples.tck_agent:agent_v1` (whose
`test-resubscribe-message-id-*` messages work for a few seconds) with each store, runs the
chains over JSON-RPC and HTTP+JSON, and reports throughput, the answers by kind (internal
errors must be 0) and how many tasks are not terminal a few seconds later (must be 0).

    python -m benchmarks.cancel_race                      # every store, 400 chains, 10 at a time
    python -m benchmarks.cancel_race --store sqlite --chains 100 --concurrency 10
    python -m benchmarks.cancel_race --src OTHER_CHECKOUT/src   # another version's server

Exits 1 if any chain met an internal error or left its task non-terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
TERMINAL = {f"TASK_STATE_{name}" for name in ("COMPLETED", "FAILED", "CANCELED", "REJECTED")}
SETTLE_S = 3.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serving(store: str, src: str | None = None) -> Iterator[str]:
    """`parley serve` of the TCK agent with `store` (Parley from `src`, a checkout's src
    folder, if given), until the block ends."""
    port = _free_port()
    command = [
        sys.executable, "-m", "parley.cli", "serve", "examples.tck_agent:agent_v1", "--card", "v1",
        "--port", str(port), "--store", store, "--log-level", "warning",
    ]  # fmt: skip
    log = tempfile.NamedTemporaryFile(prefix="cancel-race-", suffix=".log", delete=False)  # noqa: SIM115
    env = {**os.environ, "PYTHONPATH": src} if src else None
    process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/.well-known/agent-card.json").status_code == 200:
                    break
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()
        text = Path(log.name).read_text()
        tracebacks = text.count("Traceback")
        if tracebacks:
            print(f"    server log {log.name}: {tracebacks} tracebacks")
        else:
            os.unlink(log.name)


def _message(binding: str) -> dict[str, Any]:
    message = {
        "messageId": f"test-resubscribe-message-id-{uuid.uuid4()}",
        "role": "ROLE_USER",
        "parts": [{"text": "work, then be canceled"}],
    }
    return {"message": message, "configuration": {"returnImmediately": True}}


async def _jsonrpc(client: httpx.AsyncClient, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    answer = (await client.post("/", json=body)).json()
    if "error" in answer:
        return answer["error"]["code"]
    return answer["result"]


async def chain(client: httpx.AsyncClient, binding: str, tally: Counter[str]) -> str | None:
    """One send (non-blocking) then an immediate cancel; the task id, if there was a task."""
    if binding == "jsonrpc":
        sent = await _jsonrpc(client, "SendMessage", _message(binding))
        if not isinstance(sent, dict):
            tally[f"send error {sent}"] += 1
            return None
        task_id = sent["task"]["id"]
        canceled = await _jsonrpc(client, "CancelTask", {"id": task_id})
        if isinstance(canceled, dict):
            tally[f"cancel -> {canceled['status']['state']}"] += 1
        else:
            tally[f"cancel error {canceled}"] += 1
        return str(task_id)
    response = await client.post("/message:send", json=_message(binding))
    if response.status_code != 200:
        tally[f"send HTTP {response.status_code}"] += 1
        return None
    task_id = response.json()["task"]["id"]
    response = await client.post(f"/tasks/{task_id}:cancel")
    if response.status_code == 200:
        tally[f"cancel -> {response.json()['status']['state']}"] += 1
    else:
        tally[f"cancel HTTP {response.status_code}"] += 1
    return str(task_id)


async def run_chains(base: str, binding: str, chains: int, concurrency: int) -> dict[str, Any]:
    tally: Counter[str] = Counter()
    task_ids: list[str] = []
    queue = iter(range(chains))
    headers = {"A2A-Version": "1.0"}
    limits = httpx.Limits(max_connections=concurrency)
    client = httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=30)
    async with client:

        async def worker() -> None:
            for _ in queue:
                task_id = await chain(client, binding, tally)
                if task_id:
                    task_ids.append(task_id)

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
        await asyncio.sleep(SETTLE_S)
        states: Counter[str] = Counter()
        for task_id in task_ids:
            got = await _jsonrpc(client, "GetTask", {"id": task_id})
            states[got["status"]["state"] if isinstance(got, dict) else f"error {got}"] += 1
    internal = sum(n for kind, n in tally.items() if "-32603" in kind or "HTTP 500" in kind)
    stranded = sum(n for state, n in states.items() if state not in TERMINAL)
    return {
        "chains_per_s": chains / elapsed,
        "answers": dict(tally),
        "final_states": dict(states),
        "internal_errors": internal,
        "non_terminal": stranded,
    }


def _stores(names: list[str], folder: str) -> Iterator[tuple[str, str]]:
    for name in names:
        if name == "memory":
            yield name, "memory"
        elif name == "sqlite":
            yield name, f"sqlite:///{folder}/cancel-race.db"
        else:
            schema = f"cancel_race_{uuid.uuid4().hex[:8]}"
            _postgres(f'CREATE SCHEMA "{schema}"')
            try:
                yield name, f"{POSTGRES}?schema={schema}"
            finally:
                _postgres(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _postgres(statement: str) -> None:
    import asyncpg  # noqa: PLC0415 - the postgres extra

    async def execute() -> None:
        connection = await asyncpg.connect(POSTGRES)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    asyncio.run(execute())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", action="append", choices=["memory", "sqlite", "postgres"])
    parser.add_argument("--binding", action="append", choices=["jsonrpc", "rest"])
    parser.add_argument("--chains", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--src", help="serve Parley from this checkout's src folder")
    args = parser.parse_args(argv)
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        for name, url in _stores(args.store or ["memory", "sqlite", "postgres"], folder):
            with serving(url, args.src) as base:
                for binding in args.binding or ["jsonrpc", "rest"]:
                    result = asyncio.run(run_chains(base, binding, args.chains, args.concurrency))
                    failed |= bool(result["internal_errors"] or result["non_terminal"])
                    print(
                        f"  {name:<8} {binding:<7} {result['chains_per_s']:7.1f} chains/s"
                        f"  internal errors {result['internal_errors']:>3}"
                        f"  non-terminal after {SETTLE_S:.0f} s {result['non_terminal']:>3}"
                        f"  answers {result['answers']}  final {result['final_states']}",
                        flush=True,
                    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
