"""The server benchmark: the same echo agent on Parley, on the official a2a-sdk server and on
a raw ASGI app (the ceiling), side by side in one run — all on uvicorn with uvloop +
httptools, one worker, the server pinned to core 0 and the load generator (wrk, or the
asyncio client of `benchmarks.server_load`) pinned to core 1.

    python -m benchmarks.server            # 10 s per wrk run, 20,000 stored tasks
    python -m benchmarks.server --quick    # 3 s per wrk run, 5,000 stored tasks
    python -m benchmarks.server --only parley raw --no-profile

Figures per server: blocking-send throughput and p50/p99 at 1/16/64 connections; streaming
of 100 chunks (events/s under wrk at 16 connections; time to first event, one stream at a
time); memory per open stream (1,000 open, VmRSS delta); memory per stored task (VmRSS
delta over N blocking sends); cold start (spawn → first 200 on the agent card, median of the
six spawns). Then a py-spy profile of Parley's blocking send under wrk load.
Raw numbers go to benchmarks/results/ (git-ignored) as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.client
import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
WRK_SCRIPTS = ROOT / "benchmarks" / "wrk"
SERVER_CORE, LOAD_CORE = "0", "1"
CARD_PATH = "/.well-known/agent-card.json"
GC_STATS_PATH = "/_bench/gc"  # benchmarks.servers.GC_STATS_PATH (not imported: no a2a here)


@dataclass(frozen=True)
class ServerSpec:
    key: str
    module: str
    label: str
    env: tuple[tuple[str, str], ...] = ()


SERVERS = (
    ServerSpec("parley", "parley_echo", "Parley"),
    ServerSpec("sdk", "sdk_echo", "a2a-sdk"),
    # The SDK traces every handler call whenever opentelemetry-api is importable (it comes
    # with google-api-core, an SDK dependency): a no-op tracer, but not free. The targets
    # are judged against the SDK as installed; this column shows it with tracing off.
    ServerSpec(
        "sdk-untraced",
        "sdk_echo",
        "a2a-sdk untraced",
        (("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false"),),
    ),
    ServerSpec("raw", "raw_asgi", "raw ASGI"),
)
RATIOS = (("sdk", "Parley/SDK"), ("sdk-untraced", "Parley/untraced"), ("raw", "Parley/ceiling"))


@dataclass(frozen=True)
class Config:
    duration: int = 10
    warmup: int = 2
    connections: tuple[int, ...] = (1, 16, 64)
    stream_connections: int = 16
    ttfe_count: int = 200
    open_streams: int = 1000
    stored_tasks: int = 20_000
    profile_seconds: int = 15

    @classmethod
    def quick(cls) -> Config:
        return cls(duration=3, warmup=1, ttfe_count=50, stored_tasks=5_000, profile_seconds=5)


# ------------------------------------------------------------------------ processes


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _status(port: int, path: str) -> int | None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    except OSError:
        return None
    finally:
        connection.close()


class Server:
    """One uvicorn process serving `spec`, pinned to the server core."""

    def __init__(self, spec: ServerSpec, log: Path, *, gc_stats: bool = False) -> None:
        self.spec = spec
        self.port = _free_port()
        command = [
            "taskset", "-c", SERVER_CORE,
            sys.executable, "-m", "uvicorn", f"benchmarks.servers.{spec.module}:app",
            "--host", "127.0.0.1", "--port", str(self.port),
            "--loop", "uvloop", "--http", "httptools", "--workers", "1",
            "--log-level", "warning", "--no-access-log",
        ]  # fmt: skip
        self._log = log.open("ab")
        started = time.perf_counter()
        env = {**os.environ, **dict(spec.env)}
        if gc_stats:
            env["BENCH_GC_STATS"] = "1"
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=self._log,
            stdin=subprocess.DEVNULL,
        )
        self.cold_start_ms = self._wait_ready(started)

    def _wait_ready(self, started: float, timeout: float = 60) -> float:
        while time.perf_counter() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.spec.label} exited: see {self._log.name}")
            if _status(self.port, CARD_PATH) == 200:
                return (time.perf_counter() - started) * 1000
            time.sleep(0.002)
        raise RuntimeError(f"{self.spec.label} not ready after {timeout} s")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
        assert match is not None
        return int(match.group(1))

    def gc_stats(self) -> dict[str, Any]:
        """The collector's figures (a server started with `gc_stats=True`)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request("GET", GC_STATS_PATH)
            figures: dict[str, Any] = json.loads(connection.getresponse().read())
            return figures
        finally:
            connection.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


@contextlib.contextmanager
def serving(spec: ServerSpec, log: Path, *, gc_stats: bool = False) -> Iterator[Server]:
    server = Server(spec, log, gc_stats=gc_stats)
    try:
        yield server
    finally:
        server.stop()


def _load(*command: str) -> list[str]:
    return ["taskset", "-c", LOAD_CORE, *command]


def client(port: int, command: str, count: int, *extra: str) -> dict[str, Any]:
    """Run a `benchmarks.server_load` command on the load core; its JSON result."""
    args = [sys.executable, "-m", "benchmarks.server_load", command]
    args += ["--port", str(port), "--count", str(count), *extra]
    done = subprocess.run(
        _load(*args), cwd=ROOT, capture_output=True, text=True, check=False, timeout=900
    )
    if done.returncode:
        raise RuntimeError(f"{' '.join(args[1:4])} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# ------------------------------------------------------------------------------ wrk

_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    assert match is not None, text
    return float(match.group(1)) * _UNITS[match.group(2)]


def parse_wrk(output: str) -> dict[str, Any]:
    rps = re.search(r"Requests/sec:\s+([\d.]+)", output)
    total = re.search(r"(\d+) requests in ([\d.]+\w+)", output)
    assert rps is not None, output
    assert total is not None, output
    result: dict[str, Any] = {"rps": float(rps.group(1)), "requests": int(total.group(1))}
    for percent in ("50", "99"):
        found = re.search(rf"^\s+{percent}%\s+(\S+)", output, re.MULTILINE)
        if found:
            result[f"p{percent}_ms"] = _ms(found.group(1))
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    result["non_2xx"] = int(non_2xx.group(1)) if non_2xx else 0
    errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    result["socket_errors"] = sum(map(int, errors.groups())) if errors else 0
    return result


def wrk_command(url: str, script: str, connections: int, seconds: int) -> list[str]:
    return _load(
        "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "--latency",
        "-s", str(WRK_SCRIPTS / script), url,
    )  # fmt: skip


def wrk(url: str, script: str, connections: int, seconds: int) -> dict[str, Any]:
    command = wrk_command(url, script, connections, seconds)
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return parse_wrk(done.stdout)


# -------------------------------------------------------------------- interference

QUIET_CORES = 0.15
"""Foreign CPU (other processes on this machine, in cores) tolerated during a timed run."""
ATTEMPTS = 5
_TICK = os.sysconf("SC_CLK_TCK")


def _busy_seconds() -> float:
    """CPU time all cores have spent busy since boot (/proc/stat)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / _TICK


def _process_seconds(pid: int) -> float:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


COMPANIONS: tuple[str, ...] = ()
"""Names of processes that are part of the system under test (the database server of the
store benchmark): their CPU is reported as `companion_cores`, not as interference."""


def _companion_seconds() -> float:
    total = 0.0
    if not COMPANIONS:
        return total
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() in COMPANIONS:
                total += _process_seconds(int(entry.name))
        except (OSError, ValueError):
            continue  # the process ended meanwhile
    return total


def _our_seconds() -> float:
    """CPU time of this process and of its finished children (wrk, the load client)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class Monitor:
    """Around a timed run: the server's CPU share, and the CPU other processes on the
    machine took meanwhile (`foreign_cores`) — a run that shared the cores is not clean."""

    def __init__(self, pid: int | None = None) -> None:
        self.pid = pid
        self.figures: dict[str, float] = {}

    def _sample(self) -> tuple[float, float, float, float, float]:
        server = _process_seconds(self.pid) if self.pid is not None else 0.0
        return time.perf_counter(), _busy_seconds(), server, _our_seconds(), _companion_seconds()

    def __enter__(self) -> Monitor:
        self._start = self._sample()
        return self

    def __exit__(self, *_: object) -> None:
        wall, busy, server, ours, companions = (
            b - a for a, b in zip(self._start, self._sample(), strict=True)
        )
        foreign = max(0.0, busy - server - ours - companions)
        self.figures = {
            "server_cpu_share": server / wall,
            "foreign_cores": foreign / wall,
            "companion_cores": companions / wall,
        }


QUIET_WAIT = 180.0
"""How long `wait_quiet` waits at most (a composing benchmark with a time box lowers it)."""


def wait_quiet(max_wait: float | None = None, quiet_seconds: int = 3) -> float:
    """Wait (up to `max_wait` s, QUIET_WAIT by default) for `quiet_seconds` seconds in a row
    in which other processes use < QUIET_CORES (this machine is shared: tests run beside
    the benchmark)."""
    max_wait = QUIET_WAIT if max_wait is None else max_wait
    started = time.perf_counter()
    told = False
    quiet = 0
    while quiet < quiet_seconds and time.perf_counter() - started < max_wait:
        with Monitor() as monitor:
            time.sleep(1.0)
        if monitor.figures["foreign_cores"] < QUIET_CORES:
            quiet += 1
            continue
        quiet = 0
        if not told:
            print("  (waiting for other processes to leave the cores…)", flush=True)
            told = True
    return time.perf_counter() - started


def quietly(label: str, once: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run `once` (which reports `foreign_cores`) until a run was quiet, at most ATTEMPTS
    times; keep the quietest."""
    best: dict[str, Any] | None = None
    for attempt in range(1, ATTEMPTS + 1):
        wait_quiet()
        figures = once()
        figures["attempt"] = attempt
        if best is None or figures["foreign_cores"] < best["foreign_cores"]:
            best = figures
        if figures["foreign_cores"] <= QUIET_CORES:
            break
        print(f"  {label}: other processes took {figures['foreign_cores']:.2f} cores: again")
    assert best is not None
    return best


# ------------------------------------------------------------------------- figures


def _send_once(spec: ServerSpec, config: Config, log: Path, connections: int) -> dict[str, Any]:
    with serving(spec, log) as server:
        wrk(server.url, "send.lua", connections, config.warmup)
        with Monitor(server.process.pid) as monitor:
            figures = wrk(server.url, "send.lua", connections, config.duration)
    return {**figures, **monitor.figures, "cold_start_ms": server.cold_start_ms}


def _stream_once(spec: ServerSpec, config: Config, log: Path) -> dict[str, Any]:
    with serving(spec, log) as server:
        wrk(server.url, "stream.lua", config.stream_connections, config.warmup)
        with Monitor(server.process.pid) as monitor:
            streams = wrk(server.url, "stream.lua", config.stream_connections, config.duration)
        with Monitor(server.process.pid) as ttfe_monitor:
            ttfe = client(server.port, "ttfe", config.ttfe_count)
    return {
        **streams,
        "events_per_s": streams["rps"] * 100,
        **ttfe,
        "connections": config.stream_connections,
        **monitor.figures,
        "foreign_cores": max(
            monitor.figures["foreign_cores"], ttfe_monitor.figures["foreign_cores"]
        ),
        "cold_start_ms": server.cold_start_ms,
    }


def measure_speed(spec: ServerSpec, config: Config, log: Path) -> dict[str, Any]:
    """Blocking send at each connection count, then streaming under wrk and the time to
    first event — each on a fresh server (so no run inherits the tasks another stored),
    each repeated (up to ATTEMPTS) until no other process shared the cores."""
    result: dict[str, Any] = {"cold_start_ms": [], "send": {}}
    for connections in config.connections:
        once = functools.partial(_send_once, spec, config, log, connections)
        figures = quietly(f"send c={connections}", once)
        result["cold_start_ms"].append(figures.pop("cold_start_ms"))
        result["send"][str(connections)] = figures
        print(
            f"  send   c={connections:<3} {figures['rps']:>9.0f} req/s"
            f"  p50 {figures['p50_ms']:.2f} ms  p99 {figures['p99_ms']:.2f} ms"
            f"  (server CPU {figures['server_cpu_share']:.0%},"
            f" others {figures['foreign_cores']:.2f} cores)",
            flush=True,
        )
    streams = quietly("stream", functools.partial(_stream_once, spec, config, log))
    result["cold_start_ms"].append(streams.pop("cold_start_ms"))
    result["stream"] = streams
    print(
        f"  stream c={config.stream_connections:<3} {streams['events_per_s']:>9.0f} events/s"
        f"  first event {streams['ttfe_ms_p50']:.2f} ms"
        f"  (server CPU {streams['server_cpu_share']:.0%},"
        f" others {streams['foreign_cores']:.2f} cores)",
        flush=True,
    )
    return result


def _settled_rss(server: Server, pause: float = 1.0) -> int:
    time.sleep(pause)
    return server.rss_kib()


def measure_open_streams(spec: ServerSpec, config: Config, log: Path) -> dict[str, Any]:
    """VmRSS before and with `open_streams` streams open on the never-ending skill."""
    wait_quiet()
    with serving(spec, log) as server:
        client(server.port, "send", 500)
        client(server.port, "ttfe", 10)
        before = _settled_rss(server)
        args = [sys.executable, "-m", "benchmarks.server_load", "hold"]
        args += ["--port", str(server.port), "--count", str(config.open_streams)]
        holder = subprocess.Popen(
            _load(*args), cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert holder.stdin is not None
        assert holder.stdout is not None
        opened = json.loads(holder.stdout.readline() or "{}")
        after = _settled_rss(server)
        holder.stdin.close()
        holder.wait(timeout=60)
        if opened.get("open") != config.open_streams:
            raise RuntimeError(f"{spec.label}: could not hold the streams open: {opened}")
        per_stream = (after - before) / config.open_streams
        print(f"  open streams: {per_stream:.1f} KiB each", flush=True)
        return {
            "cold_start_ms": server.cold_start_ms,
            "open_streams": config.open_streams,
            "open_seconds": opened["seconds"],
            "rss_before_kib": before,
            "rss_after_kib": after,
            "kib_per_stream": per_stream,
        }


def measure_stored_tasks(spec: ServerSpec, config: Config, log: Path) -> dict[str, Any]:
    """VmRSS before and after `stored_tasks` blocking sends (each stores a completed task)."""
    wait_quiet()
    with serving(spec, log, gc_stats=True) as server:
        client(server.port, "send", 1000)
        before = _settled_rss(server)
        objects_before = server.gc_stats()["tracked_objects"]
        sent = client(server.port, "send", config.stored_tasks, "--concurrency", "16")
        after = _settled_rss(server)
        objects_after = server.gc_stats()["tracked_objects"]
        if sent["failures"]:
            raise RuntimeError(f"{spec.label}: {sent['failures']} sends failed")
        per_task = (after - before) * 1024 / config.stored_tasks
        tracked = max(0, objects_after - objects_before) / config.stored_tasks
        print(f"  stored tasks: {per_task:.0f} bytes, {tracked:.1f} GC-tracked objects each")
        return {
            "cold_start_ms": server.cold_start_ms,
            "tasks": config.stored_tasks,
            "rss_before_kib": before,
            "rss_after_kib": after,
            "bytes_per_task": per_task,
            "gc_objects_per_task": max(0, objects_after - objects_before) / config.stored_tasks,
        }


def measure(spec: ServerSpec, config: Config, log: Path) -> dict[str, Any]:
    print(f"{spec.label}:", flush=True)
    result = measure_speed(spec, config, log)
    streams = measure_open_streams(spec, config, log)
    tasks = measure_stored_tasks(spec, config, log)
    result["cold_start_ms"] += [streams.pop("cold_start_ms"), tasks.pop("cold_start_ms")]
    result["cold_start_ms_median"] = statistics.median(result["cold_start_ms"])
    result["open_streams"] = streams
    result["stored_tasks"] = tasks
    print(f"  cold start: {result['cold_start_ms_median']:.0f} ms", flush=True)
    return result


# ------------------------------------------------------------------------- profile


@dataclass
class Profile:
    samples: int = 0
    self_time: Counter[str] = field(default_factory=Counter)
    self_lines: Counter[str] = field(default_factory=Counter)
    inclusive: Counter[str] = field(default_factory=Counter)
    areas: Counter[str] = field(default_factory=Counter)


_LOOP = "event loop internals (uvloop, C)"
_AREAS = (
    ("parley/", "Parley"),
    ("uvicorn/", "uvicorn + httptools"),
    ("asyncio/runners.py", _LOOP),
    ("uvloop/", _LOOP),
    ("asyncio/", "asyncio (Python parts)"),
    ("msgspec/", "msgspec"),
)
_LINE = re.compile(r":\d+\)$")


def _area(frame: str) -> str:
    location = frame[frame.rfind("(") + 1 :]
    for prefix, area in _AREAS:
        if location.startswith(prefix):
            return area
    return "stdlib / other"


def parse_profile(text: str) -> Profile:
    """py-spy `raw` output (collapsed stacks `name (file:line);…  count`). Self = samples
    with the function innermost (the C it calls included: a sample innermost in
    asyncio/runners.py is uvloop's own C code); inclusive = samples with the function
    anywhere on the stack."""
    profile = Profile()
    for line in text.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [frame for frame in stack.split(";") if "(" in frame]
        if not frames:
            continue
        functions = [_LINE.sub(")", frame) for frame in frames]
        profile.samples += count
        profile.self_time[functions[-1]] += count
        profile.self_lines[frames[-1]] += count
        profile.areas[_area(frames[-1])] += count
        for function in set(functions):
            profile.inclusive[function] += count
    return profile


def profile_parley(
    config: Config, log: Path, output: Path, script: str = "send.lua"
) -> dict[str, Any] | None:
    """py-spy (on the load core) sampling Parley's server under wrk load (`script`), and
    the garbage collector's share of the time (from `gc.callbacks` in the server).

    Not `--native`: that needs py-spy to stop the server for every sample, and on this VM
    the stops land mostly on system calls, which then look several times dearer than they
    are. Without it, time in C (and in the collector) counts for the Python function that
    called it — the collector for whichever allocation happened to trigger it."""
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(py_spy).exists():
        print("py-spy not found (pip install py-spy): no profile", flush=True)
        return None
    print(f"Profiling Parley under {script} (py-spy)", flush=True)
    wait_quiet()
    with serving(SERVERS[0], log, gc_stats=True) as server:
        wrk(server.url, script, 16, config.warmup)
        seconds = config.profile_seconds
        load = subprocess.Popen(
            wrk_command(server.url, script, 16, seconds + 2), stdout=subprocess.PIPE, text=True
        )
        time.sleep(1)
        record = [py_spy, "record", "--nonblocking", "-r", "500", "-d", str(seconds)]
        record += ["-f", "raw", "-o", str(output), "-p", str(server.process.pid)]
        collector = server.gc_stats()["generations"]
        with Monitor(server.process.pid) as monitor:
            subprocess.run(_load(*record), check=True, capture_output=True)
        after = server.gc_stats()
        under_profile = parse_wrk(load.communicate()[0])
    spent = sum(after["generations"][g]["seconds"] - collector[g]["seconds"] for g in collector)
    gc_figures = {
        "share_of_wall_time": spent / seconds,
        "collections": {
            g: after["generations"][g]["collections"] - collector[g]["collections"]
            for g in collector
        },
        "max_pause_ms": max(gen["max_pause_ms"] for gen in after["generations"].values()),
        "tracked_objects_at_end": after["tracked_objects"],
    }
    profile = parse_profile(output.read_text())
    total = profile.samples or 1

    def top(counter: Counter[str], only_parley: bool, limit: int) -> list[dict[str, Any]]:
        chosen = [(f, n) for f, n in counter.most_common() if not only_parley or "(parley/" in f]
        return [{"function": f, "percent": 100 * n / total} for f, n in chosen[:limit]]

    return {
        "workload": script.removesuffix(".lua"),
        "file": str(output.relative_to(ROOT)),
        "samples": profile.samples,
        "rps_under_profile": under_profile["rps"],
        "server_cpu_share": monitor.figures["server_cpu_share"],
        "areas": {area: 100 * n / total for area, n in profile.areas.most_common()},
        "gc": gc_figures,
        "top_self": top(profile.self_time, False, 25),
        "top_parley_self": top(profile.self_time, True, 25),
        "top_parley_self_lines": top(profile.self_lines, True, 40),
        "top_parley_inclusive": top(profile.inclusive, True, 40),
    }


# --------------------------------------------------------------------------- report


def _machine() -> dict[str, Any]:
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    versions = {}
    for package in ("parley-a2a", "a2a-sdk", "uvicorn", "uvloop", "httptools", "starlette"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions[package] = metadata.version(package)
    wrk_version = subprocess.run(["wrk", "-v"], capture_output=True, text=True, check=False)
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "src"], capture_output=True, text=True, check=False
    )
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "wrk": (wrk_version.stdout or wrk_version.stderr).split("[")[0].strip(),
        "packages": versions,
        "commit": commit.stdout.strip(),
        "uncommitted_src_changes": len(dirty.stdout.splitlines()),
        "server_core": SERVER_CORE,
        "load_core": LOAD_CORE,
    }


def rows(results: dict[str, dict[str, Any]], config: Config) -> list[tuple[str, list[float]]]:
    """(label, value per server) in SERVERS order: the table's figures."""
    keys = [spec.key for spec in SERVERS if spec.key in results]
    table: list[tuple[str, list[float]]] = []
    for connections in config.connections:
        c = str(connections)
        table.append((f"send c={c} req/s", [results[k]["send"][c]["rps"] for k in keys]))
        table.append((f"send c={c} p50 ms", [results[k]["send"][c]["p50_ms"] for k in keys]))
        table.append((f"send c={c} p99 ms", [results[k]["send"][c]["p99_ms"] for k in keys]))
    table += [
        ("stream events/s", [results[k]["stream"]["events_per_s"] for k in keys]),
        ("stream 1st event ms", [results[k]["stream"]["ttfe_ms_p50"] for k in keys]),
        ("KiB / open stream", [results[k]["open_streams"]["kib_per_stream"] for k in keys]),
        ("bytes / stored task", [results[k]["stored_tasks"]["bytes_per_task"] for k in keys]),
        (
            "GC objects / stored task",
            [results[k]["stored_tasks"]["gc_objects_per_task"] for k in keys],
        ),
        ("cold start ms", [results[k]["cold_start_ms_median"] for k in keys]),
    ]
    return table


def _fmt(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def _throughput(label: str) -> bool:
    return label.endswith(("req/s", "events/s"))


def render_table(results: dict[str, dict[str, Any]], config: Config) -> str:
    specs = [spec for spec in SERVERS if spec.key in results]
    header = ["", *(spec.label for spec in specs)]
    ratios = [(key, title) for key, title in RATIOS if "parley" in results and key in results]
    header += [title for _, title in ratios]
    lines = [header]
    for label, values in rows(results, config):
        cells = [label, *map(_fmt, values)]
        by_key = dict(zip((s.key for s in specs), values, strict=True))
        for other, _ in ratios:
            if by_key[other] < (1 if label.startswith("GC") else 1e-9):  # ~0: no ratio
                cells.append("-")
                continue
            share = by_key["parley"] / by_key[other]
            percent = other == "raw" and _throughput(label)
            cells.append(f"{100 * share:.0f}%" if percent else f"{share:.2f}x")
        lines.append(cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for index, line in enumerate(lines):
        cells = [
            line[0].ljust(widths[0]),
            *(c.rjust(w) for c, w in zip(line[1:], widths[1:], strict=True)),
        ]
        out.append("| " + " | ".join(cells) + " |")
        if index == 0:
            out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


def verdicts(results: dict[str, dict[str, Any]], config: Config) -> list[dict[str, Any]]:
    """The targets: Parley ≥ 10x the SDK and ≥ 35 % of the ceiling on blocking send (peak
    over the connection counts) and on streaming events/s; ≤ 30 KiB per open stream."""
    if not {"parley", "sdk", "raw"} <= results.keys():
        return []
    untraced = "sdk-untraced" in results

    def peak(key: str) -> float:
        return max(float(results[key]["send"][str(c)]["rps"]) for c in config.connections)

    def events(key: str) -> float:
        value: float = results[key]["stream"]["events_per_s"]
        return value

    stream_kib = results["parley"]["open_streams"]["kib_per_stream"]
    checks = [
        ("blocking send, Parley/SDK", peak("parley") / peak("sdk"), ">=", 10.0, "x"),
        ("blocking send, Parley/ceiling", 100 * peak("parley") / peak("raw"), ">=", 35.0, "%"),
        ("streaming events/s, Parley/SDK", events("parley") / events("sdk"), ">=", 10.0, "x"),
        (
            "streaming events/s, Parley/ceiling",
            100 * events("parley") / events("raw"),
            ">=",
            35.0,
            "%",
        ),
        ("KiB per open stream", stream_kib, "<=", 30.0, " KiB"),
    ]
    if untraced:  # for information: the same ratios against the untraced SDK
        checks += [
            (
                "blocking send, Parley/untraced SDK",
                peak("parley") / peak("sdk-untraced"),
                ">=",
                10.0,
                "x",
            ),
            (
                "streaming events/s, Parley/untraced SDK",
                events("parley") / events("sdk-untraced"),
                ">=",
                10.0,
                "x",
            ),
        ]
    return [
        {
            "figure": name,
            "value": value,
            "target": f"{op} {target:g}{unit}",
            "met": value >= target if op == ">=" else value <= target,
            "unit": unit,
        }
        for name, value, op, target, unit in checks
    ]


def render_profile(profile: dict[str, Any]) -> str:
    lines = [
        f"Parley, {profile['workload']} under py-spy: {profile['samples']} samples,"
        f" {profile['rps_under_profile']:.0f} req/s while sampled ({profile['file']})",
        "Time by area: "
        + ", ".join(f"{area} {share:.1f}%" for area, share in profile["areas"].items()),
        f"Garbage collector: {100 * profile['gc']['share_of_wall_time']:.1f}% of the time"
        f" (spread over the functions above), longest pause"
        f" {profile['gc']['max_pause_ms']:.0f} ms",
        "Top Parley functions by self time (% of all busy samples):",
    ]
    lines += [f"  {r['percent']:5.1f}%  {r['function']}" for r in profile["top_parley_self"][:10]]
    lines.append("Top functions overall by self time:")
    lines += [f"  {r['percent']:5.1f}%  {r['function']}" for r in profile["top_self"][:10]]
    return "\n".join(lines)


def run_profiles(config: Config, log: Path) -> list[dict[str, Any]]:
    stamp = log.stem.removeprefix("server-")
    profiles = []
    for script in ("send.lua", "stream.lua"):
        output = RESULTS / f"server-{stamp}-parley-{script.removesuffix('.lua')}.pyspy.txt"
        profile = profile_parley(config, log, output, script)
        if profile is not None:
            profiles.append(profile)
    return profiles


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 s wrk runs, 5,000 stored tasks")
    parser.add_argument("--only", nargs="+", choices=[s.key for s in SERVERS], default=None)
    parser.add_argument("--no-profile", action="store_true", help="skip the py-spy profiles")
    parser.add_argument(
        "--profile-only", action="store_true", help="only the py-spy profiles of Parley"
    )
    args = parser.parse_args(argv)
    config = Config.quick() if args.quick else Config()
    for tool in ("wrk", "taskset"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is required")
    if (os.cpu_count() or 1) < 2:
        raise SystemExit("two cores are needed: one for the server, one for the load")
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    log = RESULTS / f"server-{stamp}.log"
    wanted = [spec for spec in SERVERS if args.only is None or spec.key in args.only]
    results: dict[str, dict[str, Any]] = {}
    if not args.profile_only:
        results = {spec.key: measure(spec, config, log) for spec in wanted}
    profiles = [] if args.no_profile or SERVERS[0] not in wanted else run_profiles(config, log)
    checks = verdicts(results, config)
    if results:
        print()
        print(render_table(results, config))
    for check in checks:
        mark = "met" if check["met"] else "MISSED"
        value = check["value"]
        print(f"  {check['figure']}: {value:.2f}{check['unit']} (target {check['target']}) {mark}")
    for profile in profiles:
        print()
        print(render_profile(profile))
    document = {
        "when": stamp,
        "quick": args.quick,
        "config": config.__dict__,
        "machine": _machine(),
        "results": results,
        "targets": checks,
        "profiles": profiles,
    }
    path = RESULTS / f"server-{stamp}.json"
    path.write_text(json.dumps(document, indent=2))
    print(f"\nRaw numbers: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
