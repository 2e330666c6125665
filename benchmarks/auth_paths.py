"""The cost of authentication and rate limiting on a blocking send: JSON-RPC `SendMessage`
requests straight into the ASGI app (no HTTP server, the memory store), with
authentication off, with an API key, with a static bearer token and with a JWT (keys
cached), and with a rate limit counted in memory or in Redis, timed or counted in
instructions under valgrind's callgrind (which the machine's other work does not move).
Run it on two checkouts to compare a change with the code before it (`off` only there):

    python -m benchmarks.auth_paths                     # µs per send, every mode
    python -m benchmarks.auth_paths --callgrind         # instructions per send
    python -m benchmarks.auth_paths --callgrind --src OTHER_CHECKOUT/src --modes off
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

from benchmarks.timing import callgrind_total

ROOT = Path(__file__).resolve().parent.parent
MODES = ("off", "api-key", "bearer", "jwt", "rate-limit", "rate-limit-redis")
RATES = {"rate-limit": "memory", "rate-limit-redis": "redis://127.0.0.1:6379/15"}
"""Modes without authentication whose every send is counted against a rate limit (one
that is never reached), in memory or in Redis (wall time only: Redis's own work is not
in this process's instructions)."""
ISSUER = "https://issuer.example"
AUDIENCE = "https://agent.example"


def _security(mode: str) -> tuple[Any, list[tuple[bytes, bytes]]]:
    """The agent's Security for `mode` and the header a caller sends with it."""
    if mode == "off" or mode in RATES:
        return None, []
    from parley.server.auth import ApiKeys, BearerTokens, Security  # noqa: PLC0415

    if mode == "api-key":
        return Security(ApiKeys({"bench-key": "bench"})), [(b"x-api-key", b"bench-key")]
    if mode == "bearer":
        return Security(BearerTokens({"bench-token": "bench"})), [
            (b"authorization", b"Bearer bench-token")
        ]
    return _jwt_security()


def _jwt_security() -> tuple[Any, list[tuple[bytes, bytes]]]:
    """A JWT scheme over a JWKS file with one RSA key, and a token it signed."""
    import json  # noqa: PLC0415

    from joserfc import jwt  # noqa: PLC0415 - the auth extra
    from joserfc.jwk import RSAKey  # noqa: PLC0415

    from parley.server.auth import JwtBearer, Security  # noqa: PLC0415

    key = RSAKey.generate_key(2048, parameters={"kid": "k1", "alg": "RS256"})
    jwks = Path(tempfile.mkdtemp()) / "jwks.json"
    jwks.write_text(json.dumps({"keys": [key.as_dict(private=False)]}))
    now = int(time.time())
    claims = {"sub": "bench", "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 3600}
    token = jwt.encode({"alg": "RS256", "kid": "k1"}, claims, key)
    scheme = JwtBearer(issuer=ISSUER, audience=AUDIENCE, jwks_file=jwks)
    return Security(scheme), [(b"authorization", f"Bearer {token}".encode())]


async def _workload(mode: str, sends: int) -> float:
    from parley.asgi import build_app  # noqa: PLC0415 - from whichever checkout --src names
    from parley.server.agent import Agent  # noqa: PLC0415
    from parley.server.service import AgentService  # noqa: PLC0415
    from parley.server.task_context import TaskContext  # noqa: PLC0415

    security, credentials = _security(mode)
    agent = Agent("Bench")

    @agent.skill()
    async def echo(task: TaskContext) -> str:
        return task.text

    extra: dict[str, Any] = {} if security is None else {"security": security}
    if mode in RATES:
        from parley.server.quotas import Quotas  # noqa: PLC0415

        extra["quotas"] = Quotas(rate="1000000/second", storage=RATES[mode])
    service = AgentService(agent.executor(), agent.card("http://bench"), **extra)
    app = build_app(service)
    await service.startup()
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"a2a-version", b"1.0"),
        *credentials,
    ]
    send = _sender(app, headers)
    await send(0)  # warm-up: first-call imports and caches
    started = time.perf_counter()
    for number in range(1, sends + 1):
        await send(number)
    elapsed = time.perf_counter() - started
    await service.shutdown()
    return elapsed / max(sends, 1)


def _sender(app: Any, headers: list[tuple[bytes, bytes]]) -> Callable[[int], Any]:
    async def send(number: int) -> None:
        body = (
            b'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":'
            b'{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"hi"}]}}}' % number
        )
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/",
            "raw_path": b"/",
            "root_path": "",
            "query_string": b"",
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
        }
        sent: list[MutableMapping[str, Any]] = []
        incoming = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive() -> MutableMapping[str, Any]:
            return incoming.pop() if incoming else {"type": "http.disconnect"}

        async def reply(message: MutableMapping[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, reply)
        if sent[0]["status"] != 200 or b'"result"' not in sent[1]["body"]:
            raise RuntimeError(f"send failed: {sent}")

    return send


def _callgrind(src: str, mode: str, count: int) -> int:
    """Instructions of one run doing `count` sends in `mode`."""
    return callgrind_total(
        "benchmarks.auth_paths", src, "--modes", mode, "--sends", str(count), "--quiet"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=str(ROOT / "src"), help="the checkout's src folder")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--sends", type=int, default=3000)
    parser.add_argument("--callgrind", action="store_true", help="count instructions")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    sys.path.insert(0, args.src)
    if not args.callgrind:
        for mode in args.modes:
            seconds = asyncio.run(_workload(mode, args.sends))
            if not args.quiet:
                print(f"  {mode:<8} {seconds * 1e6:8.1f} µs per send", flush=True)
        return
    # Per send: the difference of two runs (n and 2n) leaves start-up out.
    base: float | None = None
    for mode in args.modes:
        once = _callgrind(args.src, mode, 200)
        twice = _callgrind(args.src, mode, 400)
        per = (twice - once) / 200
        base = per if base is None else base
        print(f"  {mode:<8} {per:10,.0f} instructions per send  ({per / base:.3f}x)", flush=True)


if __name__ == "__main__":
    main()
