"""Authentication on the wire: blocking JSON-RPC sends to a real server (uvicorn, uvloop +
httptools, one worker pinned to core 0, the memory store) from the asyncio load client of
`benchmarks.server_load` (pinned to core 1), with authentication off, with an API key and
with a JWT (RS256, keys from a file, tokens reused as clients reuse them), and off on
another checkout (`--before OTHER/src`: the code before a change). Every mode runs in each
round, in turn, on a fresh server; the figure per mode is the median of the rounds.

    python -m benchmarks.auth_http                          # 5 rounds of 20,000 sends
    python -m benchmarks.auth_http --before ../old/src      # with the previous code, off
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
SERVER_CORE, LOAD_CORE = "0", "1"
ISSUER, AUDIENCE = "https://issuer.example", "urn:bench"


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _jwt(folder: Path) -> tuple[Path, str]:
    """A JWKS file with one RSA key, and a token it signed (valid for an hour)."""
    from joserfc import jwt  # noqa: PLC0415 - the auth extra
    from joserfc.jwk import RSAKey  # noqa: PLC0415

    key = RSAKey.generate_key(2048, parameters={"kid": "k1", "alg": "RS256"})
    jwks = folder / "jwks.json"
    jwks.write_text(json.dumps({"keys": [key.as_dict(private=False)]}))
    now = int(time.time())
    claims = {"sub": "bench", "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 3600}
    return jwks, jwt.encode({"alg": "RS256", "kid": "k1"}, claims, key)


def _serve(src: str, mode: str, jwks: Path, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": f"{src}{os.pathsep}{ROOT}",
        "BENCH_AUTH": mode,
        "BENCH_JWKS": str(jwks),
        "BENCH_ISSUER": ISSUER,
        "BENCH_AUDIENCE": AUDIENCE,
    }
    command = [
        "taskset", "-c", SERVER_CORE, sys.executable, "-m", "uvicorn",
        "benchmarks.servers.parley_auth:app", "--loop", "uvloop", "--http", "httptools",
        "--port", str(port), "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    process = subprocess.Popen(command, env=env, cwd=ROOT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"the {mode} server did not start")


def _load(port: int, count: int, headers: list[str]) -> float:
    command = [
        "taskset", "-c", LOAD_CORE, sys.executable, "-m", "benchmarks.server_load", "send",
        "--port", str(port), "--count", str(count), "--concurrency", "16",
    ]  # fmt: skip
    for header in headers:
        command += ["--header", header]
    out = subprocess.run(command, check=True, capture_output=True, cwd=ROOT, text=True).stdout
    result = json.loads(out)
    if result["failures"]:
        raise RuntimeError(f"{result['failures']} sends failed")
    rps: float = result["rps"]
    return rps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="another checkout's src folder, served with auth off")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sends", type=int, default=20000)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp())
    jwks, token = _jwt(folder)
    modes: list[tuple[str, str, str, list[str]]] = []
    if args.before:
        modes.append(("before (off)", args.before, "off", []))
    src = str(ROOT / "src")
    modes += [
        ("off", src, "off", []),
        ("api-key", src, "api-key", ["X-API-Key: bench-key"]),
        ("jwt", src, "jwt", [f"Authorization: Bearer {token}"]),
    ]
    results: dict[str, list[float]] = {label: [] for label, *_ in modes}
    for number in range(args.rounds):
        for label, where, mode, headers in modes:
            port = _port()
            server = _serve(where, mode, jwks, port)
            try:
                _load(port, 2000, headers)  # warm-up
                results[label].append(_load(port, args.sends, headers))
            finally:
                server.terminate()
                server.wait(20)
            print(f"  round {number + 1} {label:<13} {results[label][-1]:8,.0f} req/s", flush=True)
    base = statistics.median(results["off"])
    print("\n| mode | blocking send req/s (median) | vs off |\n|---|---|---|")
    for label, values in results.items():
        median = statistics.median(values)
        print(f"| {label} | {median:,.0f} | {median / base:.3f} |")


if __name__ == "__main__":
    main()
