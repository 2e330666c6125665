"""Push-notification delivery: how fast the worker delivers, and what delivery costs a
blocking send, with each store (memory, SQLite, PostgreSQL), in one run.

    python -m benchmarks.push --before /tmp/parley-before/src      # both parts, 5 rounds
    python -m benchmarks.push --only deliver                        # deliveries per second
    python -m benchmarks.push --only send --concurrency 1           # one send at a time
    python -m benchmarks.push --callgrind --before /tmp/parley-before/src  # instructions
    python -m benchmarks.push --only send --stores postgres --generic-plans  # see below

`--before` names the src folder of another checkout, e.g. the code before push delivery:
`mkdir /tmp/parley-before && git archive 172994c | tar -x -C /tmp/parley-before`.
`--src` names the src folder the other variants run (this checkout's by default): two
checkouts measured side by side.
`--stores` and `--variants` choose what runs; `--scale` multiplies the sends.

- `deliver`: N blocking sends, each with a push config to the receiver, recorded with the
  worker stopped; then the worker starts, and the figure is notifications delivered per
  second until the outbox is empty (or `--deliver-seconds` pass). Three ways: every
  webhook on one host with the default settings (`parley serve`: 64 attempts in flight,
  4 per webhook host); on one host with 64 per host; on 64 hosts (names resolved to the
  receiver by the worker's resolver), the default settings.
- `send`: blocking `AgentService.send_message` in process (the echo agent, 16 concurrent
  senders by default), per store: `before` (another checkout, `--before`: the code before
  push delivery existed), `off` (`push=False`, `parley serve --no-push`), `on` (delivery
  on, no push config in the request), `on+config` (delivery on, an inline config per send,
  to one of 64 webhook hosts: one host would cap the deliveries, see `deliver`),
  `recorded` (the same with the worker stopped: what the send itself pays), `stopped`
  (`on` with the worker stopped: what `recorded` compares with, without the idle worker's
  poll, which valgrind's slow run counts many times over). µs per
  send for the sends alone and until the outbox is empty again (the deliveries share the
  process). Every variant runs in each round, in turn, in a fresh process on a fresh
  database; the figures are the medians of the rounds.
- `--callgrind`: the same sends one at a time, counted in instructions under valgrind's
  callgrind (this process only: not PostgreSQL's; the difference of n and 2n sends leaves
  start-up out; for `on+config` until every notification is delivered, the worker's work
  included).

`--generic-plans` sets PostgreSQL's `plan_cache_mode = force_generic_plan` in the run's
database: its prepared statements are then planned once, not at each execution.

The measuring process runs on core 0, the receiver (a bare asyncio HTTP server answering
204, keeping connections open unless `--receiver-closes`) on core 1; PostgreSQL is the
machine's server on 127.0.0.1 (a database created for the run and dropped after it, a
schema per process), SQLite files are temporary.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
POSTGRES = "postgresql://postgres@127.0.0.1:5432"
MEASURE_CORE, RECEIVER_CORE = "0", "1"
STORES = ("memory", "sqlite", "postgres")
VARIANTS = ("before", "off", "on", "stopped", "recorded", "on+config")
SENDS = {"memory": 2000, "sqlite": 1000, "postgres": 600}
"""Timed sends per process (`--scale` multiplies them)."""
DELIVER_TASKS = {"memory": 1000, "sqlite": 500, "postgres": 500}
DELIVER_MODES = ("one host", "64 per host", "hosts")
"""One webhook host with the default settings (4 attempts per host), with 64 per host,
and `HOSTS` webhook hosts (one name each, all resolved to the receiver)."""
HOSTS = 64
WARM_UP = 50


# ----------------------------------------------------------------------------- the receiver


class _Hook(asyncio.Protocol):
    """One connection: read requests (head and Content-Length body), answer each 204; keep
    the connection open for the next (HTTP/1.1's default), or close it with `CLOSE`."""

    close = False

    def __init__(self) -> None:
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            length = 0
            for line in self.buffer[:end].split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length :]
            assert self.transport is not None
            if _Hook.close:
                self.transport.write(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
                self.transport.close()
                return
            self.transport.write(b"HTTP/1.1 204 No Content\r\n\r\n")


async def _receive(close: bool) -> None:
    _Hook.close = close
    server = await asyncio.get_running_loop().create_server(_Hook, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until EOF


def _pinned(core: str) -> list[str]:
    return ["taskset", "-c", core] if shutil.which("taskset") else []


class Receiver:
    """The receiver as a process on its own core, until `close`."""

    def __init__(self, *, close: bool = False) -> None:
        command = [*_pinned(RECEIVER_CORE), sys.executable, "-m", "benchmarks.push"]
        command += ["--receiver", *(["--receiver-closes"] if close else [])]
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert self.process.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.process.stdout.readline())}/hook"

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(10)


# ----------------------------------------------------------------------------- in process


def _service(store: str, push: str, per_host: int = 4) -> Any:
    """An AgentService of the echo agent over `store`: `push` is "before" (the other
    checkout's defaults), "off" or "on" (delivery to 127.0.0.1 allowed)."""
    from parley.server.agent import Agent  # noqa: PLC0415 - from whichever checkout runs
    from parley.server.service import AgentService  # noqa: PLC0415
    from parley.server.stores.urls import open_store  # noqa: PLC0415
    from parley.server.task_context import TaskContext  # noqa: PLC0415

    agent = Agent("Bench")

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    tasks, push_configs = open_store(store)
    extra: dict[str, Any] = {}
    if push == "off":
        extra["push"] = False
    elif push == "on":
        from parley.server.push.delivery import PushSettings  # noqa: PLC0415
        from parley.server.push.ssrf import Allow  # noqa: PLC0415

        extra["push"] = PushSettings(allow=Allow(["127.0.0.1"]), per_host=per_host)
    card = agent.card("http://bench")
    return AgentService(agent.executor(), card, store=tasks, push_store=push_configs, **extra)


def _request(number: int, hook: str | None) -> Any:
    from parley.model import (  # noqa: PLC0415
        Message,
        Role,
        SendMessageConfiguration,
        SendMessageRequest,
        TaskPushNotificationConfig,
        TextPart,
    )

    message = Message(message_id=f"m{number}", role=Role.USER, parts=(TextPart(text="hi"),))
    if hook is None:
        return SendMessageRequest(message=message)
    config = TaskPushNotificationConfig(url=hook, token="bench-token")
    configuration = SendMessageConfiguration(push_notification_config=config)
    return SendMessageRequest(message=message, configuration=configuration)


class _Counted:
    """Counts the notifications the worker delivered, and wakes who waits for a number
    of them (no polling: under callgrind, a poll loop's instructions would count)."""

    def __init__(self, worker: Any) -> None:
        self.count = 0
        self.target = -1
        self.reached = asyncio.Event()
        delivered = worker.outbox.delivered

        async def counted(delivery: Any) -> None:
            await delivered(delivery)
            self.count += 1
            if self.count == self.target:
                self.reached.set()

        setattr(worker.outbox, "delivered", counted)  # noqa: B010 - a method, wrapped

    async def until(self, target: int) -> None:
        self.target = target
        self.reached.clear()
        if self.count < target:
            await self.reached.wait()


async def _pending(service: Any) -> int:
    from parley.server.push.outbox import PENDING  # noqa: PLC0415

    outbox = service.push_worker.outbox
    return len(await outbox.inspect(state=PENDING, limit=10**9))


async def _sends(
    service: Any, numbers: range, concurrency: int, hook: Callable[[int], str | None]
) -> None:
    """Blocking sends of `numbers`, `concurrency` at a time; `hook(number)`: the webhook
    of an inline push config, or None for none."""
    from parley.server.context import CallContext  # noqa: PLC0415

    ctx = CallContext()
    todo = iter(numbers)

    async def sender() -> None:
        for number in todo:
            await service.send_message(ctx, _request(number, hook(number)))

    await asyncio.gather(*(sender() for _ in range(concurrency)))


async def _send_run(
    store: str, variant: str, sends: int, concurrency: int, hook: str
) -> dict[str, float]:
    """µs per send (alone, and until delivered) and notifications per send."""
    push = {"before": "before", "off": "off"}.get(variant, "on")
    config = variant in ("recorded", "on+config")
    service = _service(store, push)
    await service.startup()
    counted = None
    if variant in ("recorded", "stopped"):  # the send's own part: nothing is sent
        await service.push_worker.stop()
    elif config:  # each send's webhook on one of HOSTS hosts (one would cap deliveries)
        _resolve_to_receiver(service.push_worker, hook)
        counted = _Counted(service.push_worker)

    named = [_named(hook, number) for number in range(HOSTS)]  # made once, not per send

    def target(number: int) -> str | None:
        return named[number % HOSTS] if config else None

    per_send = 0
    await _sends(service, range(WARM_UP), concurrency, target)
    server = await _Server.of(store)
    if counted is not None:  # every warm-up notification delivered: how many a send makes
        while await _pending(service):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)  # deleted from the outbox, the count follows
        per_send, odd = divmod(counted.count, WARM_UP)
        if odd:
            raise RuntimeError(f"{counted.count} notifications for {WARM_UP} sends")
    warm = counted.count if counted is not None else 0
    started = time.perf_counter()
    await _sends(service, range(WARM_UP, WARM_UP + sends), concurrency, target)
    sent = time.perf_counter()
    server_ns = await server.cpu_ns()
    if counted is not None:
        try:
            await asyncio.wait_for(counted.until(warm + per_send * sends), 600)
        except TimeoutError:
            left = await _pending(service)
            raise RuntimeError(
                f"{counted.count - warm} of {per_send * sends} delivered, {left} pending"
            ) from None
    done = time.perf_counter()
    await service.shutdown()
    return {
        "server_cpu_us": server_ns / sends / 1e3,
        "send_us": (sent - started) / sends * 1e6,
        "until_delivered_us": (done - started) / sends * 1e6,
        "notifications_per_send": per_send,
    }


async def _deliver_run(
    store: str, tasks: int, mode: str, hook: str, seconds: float
) -> dict[str, float]:
    """Notifications delivered per second from a full outbox (in `seconds` at most)."""
    hosts = HOSTS if mode == "hosts" else 1
    service = _service(store, "on", 64 if mode == "64 per host" else 4)
    await service.startup()
    worker = service.push_worker
    await worker.stop()  # record everything first
    if hosts > 1:
        _resolve_to_receiver(worker, hook)
    await _sends(
        service, range(tasks), 16, lambda n: _named(hook, n % hosts) if hosts > 1 else hook
    )
    pending = await _pending(service)
    counted = _Counted(worker)
    started = time.perf_counter()
    await worker.start()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(counted.until(pending), seconds)
    elapsed = time.perf_counter() - started
    delivered = counted.count
    await service.shutdown()
    return {"per_second": delivered / elapsed, "notifications": delivered, "seconds": elapsed}


class _Server:
    """The CPU time PostgreSQL's backends serving this process spend (on Linux, from
    /proc/PID/schedstat, in ns): the database server's side of the sends, which neither
    callgrind nor a loaded machine's wall clock shows."""

    def __init__(self, url: str, start: dict[int, int]) -> None:
        self.url = url
        self.start = start

    @classmethod
    async def of(cls, store: str) -> _Server:
        server = cls(store, {})
        server.start = await server._times() if store.startswith("postgresql") else {}
        return server

    async def _times(self) -> dict[int, int]:
        import asyncpg  # noqa: PLC0415 - the postgres extra

        connection = await asyncpg.connect(self.url.partition("?")[0])
        try:
            found = await connection.fetch(
                "SELECT pid FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        finally:
            await connection.close()
        times: dict[int, int] = {}
        for (pid,) in found:
            with contextlib.suppress(OSError):
                times[pid] = int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
        return times

    async def cpu_ns(self) -> int:
        """ns on CPU since `of` (a backend started since: all of its time)."""
        if not self.url.startswith("postgresql"):
            return 0
        now = await self._times()
        return sum(ns - self.start.get(pid, 0) for pid, ns in now.items())


def _resolve_to_receiver(worker: Any, hook: str) -> None:
    """Every webhook host name resolves to the receiver (hosts of their own names)."""
    address, port = _address(hook)

    async def resolver(host: str, _: int) -> list[tuple[str, int]]:
        return [(address, port)]

    worker.resolver = resolver


def _address(url: str) -> tuple[str, int]:
    """The receiver's (address, port)."""
    rest = url.split("//", 1)[1].split("/", 1)[0]
    host, _, port = rest.rpartition(":")
    return host, int(port)


def _named(hook: str, number: int) -> str:
    """The receiver's URL under the host name hook-NUMBER.bench.example."""
    _, port = _address(hook)
    return f"http://hook-{number}.bench.example:{port}/hook"


def _run_in_process(spec: dict[str, Any]) -> dict[str, float]:
    if spec["part"] == "send":
        work = _send_run(
            spec["store"], spec["variant"], spec["sends"], spec["concurrency"], spec["hook"]
        )
        return asyncio.run(work)
    work = _deliver_run(spec["store"], spec["tasks"], spec["mode"], spec["hook"], spec["seconds"])
    return asyncio.run(work)


# ----------------------------------------------------------------------------- the runs


class Places:
    """Fresh stores for each process: SQLite files in a scratch folder, schemas in a
    PostgreSQL database made for the run (dropped by `close`)."""

    def __init__(self, *, generic_plans: bool = False) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="parley-push-bench-"))
        self.database = f"parley_push_bench_{uuid.uuid4().hex[:10]}"
        self._admin(f'CREATE DATABASE "{self.database}"')
        if generic_plans:  # prepared statements are planned once, not at each execution
            setting = "SET plan_cache_mode = force_generic_plan"
            self._admin(f'ALTER DATABASE "{self.database}" {setting}')

    def _admin(self, statement: str, database: str = "postgres") -> None:
        async def run() -> None:
            import asyncpg  # noqa: PLC0415 - the postgres extra

            connection = await asyncpg.connect(f"{POSTGRES}/{database}")
            try:
                await connection.execute(statement)
            finally:
                await connection.close()

        asyncio.run(run())

    def fresh(self, store: str) -> str:
        name = uuid.uuid4().hex[:10]
        if store == "sqlite":
            return f"sqlite:///{self.folder / name}.db"
        if store == "postgres":
            self._admin(f'CREATE SCHEMA "s_{name}"', self.database)
            return f"{POSTGRES}/{self.database}?schema=s_{name}"
        return "memory"

    def close(self) -> None:
        self._admin(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
        shutil.rmtree(self.folder, ignore_errors=True)


def _environment(src: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}", "PYTHONHASHSEED": "0"}


def _measure(spec: dict[str, Any], src: str, wrap: list[str] | None = None) -> dict[str, float]:
    """One measuring process (pinned, or under `wrap`); its JSON result."""
    command = [sys.executable, "-m", "benchmarks.push", "--run", json.dumps(spec)]
    command = [*(wrap if wrap is not None else _pinned(MEASURE_CORE)), *command]
    done = subprocess.run(
        command, check=False, capture_output=True, text=True, env=_environment(src), cwd=ROOT
    )
    if done.returncode:
        raise RuntimeError(f"{spec}: {done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


@dataclass(frozen=True)
class Plan:
    """What one run measures, and where (the command line's options)."""

    places: Places
    hook: str
    stores: list[str]
    variants: list[str]
    """Those of `VARIANTS` asked for (`before` only with `before`)."""
    before: str | None
    rounds: int
    scale: float
    concurrency: int
    deliver_seconds: float
    count: int

    src_folder: str = str(ROOT / "src")

    def src(self, variant: str) -> str:
        return self.before if variant == "before" and self.before else self.src_folder


def _deliver(plan: Plan) -> None:
    results: dict[tuple[str, str], list[float]] = {}
    for number in range(plan.rounds):
        for store in plan.stores:
            for mode in DELIVER_MODES:
                tasks = max(1, round(DELIVER_TASKS[store] * plan.scale))
                spec: dict[str, Any] = {"part": "deliver", "tasks": tasks, "mode": mode}
                spec |= {"store": plan.places.fresh(store), "hook": plan.hook}
                spec["seconds"] = plan.deliver_seconds
                result = _measure(spec, plan.src_folder)
                results.setdefault((store, mode), []).append(result["per_second"])
                print(
                    f"  round {number + 1} {store:<8} {mode:<11}"
                    f" {result['per_second']:8,.0f} notifications/s"
                    f" ({result['notifications']:.0f} in {result['seconds']:.2f} s)",
                    flush=True,
                )
    print(
        f"\nnotifications delivered per second, medians of {plan.rounds} rounds\n\n"
        f"| store | one host (default: 4 per host) | one host, 64 per host | {HOSTS} hosts |\n"
        "|---|---|---|---|"
    )
    for store in plan.stores:
        row = [f"{statistics.median(results[(store, mode)]):,.0f}" for mode in DELIVER_MODES]
        print(f"| {store} | {' | '.join(row)} |")


def _send(plan: Plan) -> None:
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    for number in range(plan.rounds):
        for store in plan.stores:
            for variant in plan.variants:
                sends = max(1, round(SENDS[store] * plan.scale))
                spec: dict[str, Any] = {"part": "send", "variant": variant}
                spec |= {"store": plan.places.fresh(store), "sends": sends, "hook": plan.hook}
                spec["concurrency"] = plan.concurrency
                result = _measure(spec, plan.src(variant))
                results.setdefault((store, variant), []).append(result)
                print(
                    f"  round {number + 1} {store:<8} {variant:<9}"
                    f" {result['send_us']:8.1f} µs per send,"
                    f" {result['until_delivered_us']:8.1f} until delivered,"
                    f" {result['server_cpu_us']:8.1f} PostgreSQL CPU",
                    flush=True,
                )
    print(
        f"\n{plan.concurrency} concurrent senders; µs per send, medians of {plan.rounds} rounds"
        " (until delivered: the sends and their deliveries)\n"
    )
    print(
        "| store | variant | µs per send | until delivered | notifications per send"
        " | PostgreSQL CPU µs per send |"
    )
    print("|---|---|---|---|---|---|")
    medians: dict[tuple[str, str], tuple[float, float, float]] = {}
    for (store, variant), found in results.items():
        send = statistics.median(each["send_us"] for each in found)
        until = statistics.median(each["until_delivered_us"] for each in found)
        server = statistics.median(each["server_cpu_us"] for each in found)
        medians[(store, variant)] = (send, until, server)
        notes = found[0]["notifications_per_send"]
        print(f"| {store} | {variant} | {send:,.1f} | {until:,.1f} | {notes:g} | {server:,.1f} |")
    print(
        "\n| store | variant | vs before | vs stopped or on (sends) | (until delivered)"
        " | (PostgreSQL CPU) |"
    )
    print("|---|---|---|---|---|---|")
    for (store, variant), (send, until, server) in medians.items():
        before = medians.get((store, "before"))
        on = medians.get((store, "stopped"), medians.get((store, "on")))
        versus = "" if before is None else f"{send / before[0]:.3f}"
        alone = "" if on is None else f"{send / on[0]:.3f}"
        delivered = "" if on is None else f"{until / on[0]:.3f}"
        cpu = "" if on is None or not on[2] else f"{server / on[2]:.3f}"
        print(f"| {store} | {variant} | {versus} | {alone} | {delivered} | {cpu} |")


def _instructions(places: Places, spec: dict[str, Any], src: str) -> int:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "callgrind.out"
        wrap = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        _measure({**spec, "store": places.fresh(spec["store"])}, src, wrap)
        for line in out.read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError("no totals in callgrind's output")


def _callgrind(plan: Plan) -> None:
    """Instructions per send; against `before`, and against `stopped` (or else `on`)."""
    print("| store | variant | instructions per send | vs before | vs stopped or on |")
    print("|---|---|---|---|---|")
    for store in plan.stores:
        per: dict[str, float] = {}
        for variant in plan.variants:
            spec: dict[str, Any] = {"part": "send", "store": store, "variant": variant}
            spec |= {"concurrency": 1, "hook": plan.hook}
            once = _instructions(plan.places, {**spec, "sends": plan.count}, plan.src(variant))
            twice = _instructions(plan.places, {**spec, "sends": 2 * plan.count}, plan.src(variant))
            per[variant] = (twice - once) / plan.count
            base = per.get("before")
            versus = "" if base is None else f"{per[variant] / base:.3f}"
            without = per.get("stopped", per.get("on"))
            on = "" if without is None else f"{per[variant] / without:.3f}"
            print(f"| {store} | {variant} | {per[variant]:,.0f} | {versus} | {on} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--before", help="the src folder of the code before push delivery")
    parser.add_argument("--src", default=str(ROOT / "src"), help="the src folder measured")
    parser.add_argument("--only", choices=("deliver", "send"), help="one part only")
    parser.add_argument("--stores", nargs="+", choices=STORES, default=list(STORES))
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.0, help="more or fewer sends")
    parser.add_argument("--concurrency", type=int, default=16, help="concurrent senders")
    parser.add_argument(
        "--deliver-seconds", type=float, default=10.0, help="deliveries timed this long at most"
    )
    parser.add_argument(
        "--generic-plans",
        action="store_true",
        help="PostgreSQL: plan_cache_mode = force_generic_plan in the run's database",
    )
    parser.add_argument("--callgrind", action="store_true", help="count instructions")
    parser.add_argument("--count", type=int, default=200, help="sends per callgrind run")
    parser.add_argument(
        "--receiver-closes",
        action="store_true",
        help="the receiver closes each connection after its answer (default: kept open)",
    )
    parser.add_argument("--receiver", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--run", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.receiver:
        asyncio.run(_receive(args.receiver_closes))
        return
    if args.run:
        print(json.dumps(_run_in_process(json.loads(args.run))))
        return
    receiver = Receiver(close=args.receiver_closes)
    places = Places(generic_plans=args.generic_plans)
    plan = Plan(
        places=places,
        hook=receiver.url,
        stores=args.stores,
        variants=[each for each in args.variants if args.before or each != "before"],
        before=args.before,
        rounds=args.rounds,
        scale=args.scale,
        concurrency=args.concurrency,
        deliver_seconds=args.deliver_seconds,
        count=args.count,
        src_folder=args.src,
    )
    try:
        if args.callgrind:
            _callgrind(plan)
            return
        for name, part in (("deliver", _deliver), ("send", _send)):
            if args.only in (None, name):
                print(f"{name}:", flush=True)
                part(plan)
    finally:
        places.close()
        receiver.close()


if __name__ == "__main__":
    main()
