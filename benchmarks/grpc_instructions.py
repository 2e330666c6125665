"""The gRPC benchmark in instructions: each server (Parley, the official SDK, the bare
grpc.aio ceiling) runs under valgrind's callgrind, which counts the instructions its
process executes (every thread, user space) while h2load makes a fixed number of calls.
Unlike calls/s, the count does not move with what else the machine is doing, so the
ratios are the same from run to run; it leaves out the kernel's share (the socket work,
the same for every server), so it shows what each server's own code costs.

    python -m benchmarks.grpc_instructions               # 64 streams, 1,000 sends each
    python -m benchmarks.grpc_instructions --calls 16    # quicker
    python -m benchmarks.grpc_instructions --only parley raw --src OTHER_CHECKOUT/src
    python -m benchmarks.grpc_instructions --keep DIR    # keep the callgrind files
                                                         # (callgrind_annotate --inclusive=yes)

Needs valgrind and h2load (Debian: valgrind, nghttp2-client). A server starts in a minute
or so under valgrind; counting starts after 32 warm-up calls of each kind.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.grpc import ROOT, SERVERS, _free_port
from benchmarks.grpc_h2load import SERVICE, write_bodies

WARM = 32


def _h2load(port: int, method: str, body: Path, calls: int) -> None:
    command = [
        "h2load", "-t1", f"-c{min(16, calls)}", "-m1", f"-n{calls}",
        "-H", "content-type: application/grpc", "-H", "te: trailers",
        "-H", "a2a-version: 1.0", "-d", str(body), f"http://127.0.0.1:{port}{SERVICE}{method}",
    ]  # fmt: skip
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert f"{calls} succeeded" in output, output


def _wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(1)
    raise TimeoutError("the server did not start")


def count(
    module: str, method: str, body: Path, calls: int, directory: Path, *, src: str | None = None
) -> int:
    """Instructions the server executed for `calls` calls of `method` (after warm-up);
    `src`: the checkout's src folder Parley is imported from (default: this one's)."""
    port = _free_port()
    out = directory / f"{module}-{method}.out"
    command = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
        sys.executable, "-m", f"benchmarks.servers.{module}", str(port),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    if src is not None:
        env["PYTHONPATH"] = f"{src}{os.pathsep}{ROOT}"
    process = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL, env=env)
    try:
        _wait_listening(port, process)
        _h2load(port, method, body, WARM)
        control = ["callgrind_control"]
        subprocess.run([*control, "-i", "on", str(process.pid)], check=True, capture_output=True)
        _h2load(port, method, body, calls)
        subprocess.run([*control, "-i", "off", str(process.pid)], check=True, capture_output=True)
        subprocess.run([*control, "-d", str(process.pid)], check=True, capture_output=True)
    finally:
        process.terminate()
        process.wait(60)
    totals = [
        int(line.split()[1])
        for dump in directory.glob(f"{out.name}*")
        for line in dump.read_text().splitlines()
        if line.startswith("totals:")
    ]
    return sum(totals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=64, help="streams (sends: 16x as many)")
    parser.add_argument("--only", nargs="+", choices=tuple(SERVERS), default=tuple(SERVERS))
    parser.add_argument("--src", help="the checkout's src folder Parley is imported from")
    parser.add_argument("--keep", type=Path, help="a folder to keep the callgrind files in")
    arguments = parser.parse_args()
    for tool in ("valgrind", "callgrind_control", "h2load"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is needed (Debian: valgrind, nghttp2-client)")
    with tempfile.TemporaryDirectory() as name:
        directory = arguments.keep or Path(name)
        directory.mkdir(parents=True, exist_ok=True)
        bodies = write_bodies(directory)
        sends, streams = arguments.calls * 16, arguments.calls
        print(f"instructions per call ({sends} sends, {streams} streams of 103 events)")
        figures = {}
        for key in arguments.only:
            module, label = SERVERS[key]
            src = arguments.src if key == "parley" else None
            echo, streamed = bodies["echo"], bodies["stream"]
            send = count(module, "SendMessage", echo, sends, directory, src=src) / sends
            stream = count(module, "SendStreamingMessage", streamed, streams, directory, src=src)
            figures[key] = (send, stream / streams / 103)
            print(f"  {label:<8} send {send:>12,.0f}   event {figures[key][1]:>10,.0f}", flush=True)
    if len(figures) < len(SERVERS):
        return
    parley, sdk, raw = figures["parley"], figures["sdk"], figures["raw"]
    print(
        f"SDK/Parley: send {sdk[0] / parley[0]:.1f}x, event {sdk[1] / parley[1]:.1f}x;"
        f" Parley beyond the ceiling: send {parley[0] - raw[0]:,.0f},"
        f" event {parley[1] - raw[1]:,.0f}"
    )


if __name__ == "__main__":
    main()
