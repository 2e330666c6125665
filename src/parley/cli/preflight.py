"""What `parley serve` checks before it opens its store and starts serving, so that a
mistake is one line with a hint rather than a traceback after start-up: the port is free,
the store can be reached and written. `store_problem` words a store's failure the same
way for `parley db`."""

from __future__ import annotations

import asyncio
import errno
import socket
import sys
from pathlib import Path
from typing import Any

from parley.server.stores import describe, open_store

CONNECT_TIMEOUT = 10.0
"""Seconds to wait for the database to answer the check."""


def check_port(host: str, port: int) -> None:
    """SystemExit unless `host:port` can be bound (bound and let go at once, as uvicorn
    binds it: with SO_REUSEADDR)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host.strip("[]"), port))
    except socket.gaierror as exc:
        raise SystemExit(f"parley serve: --host {host}: {exc.strerror} (try 127.0.0.1)") from None
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            hint = "try another --port, or stop what serves it"
            raise SystemExit(f"parley serve: port {port} is in use on {host} ({hint})") from None
        if exc.errno == errno.EACCES:
            hint = "ports below 1024 need privileges: try a port above 1023"
            raise SystemExit(f"parley serve: port {port}: permission denied ({hint})") from None
        raise SystemExit(f"parley serve: cannot listen on {host}:{port}: {exc.strerror}") from None


def check_store(url: str) -> None:
    """SystemExit unless the store `url` names can be reached and written: the SQLite file
    opened for writing (created, its folders too, as the store would), or a connection to
    PostgreSQL made. Nothing is migrated; a memory store needs nothing."""
    try:
        stores = open_store(url)
    except (ValueError, ImportError) as exc:
        raise SystemExit(f"parley serve: --store: {exc}") from None
    database = getattr(stores.tasks, "database", None)
    try:
        if isinstance(getattr(database, "path", None), Path):
            _write_sqlite(database.path)  # type: ignore[union-attr]
        elif isinstance(getattr(database, "dsn", None), str):
            asyncio.run(_connect_postgres(database.dsn))  # type: ignore[union-attr]
    except Exception as exc:  # worded by store_problem, else re-raised
        problem = store_problem(exc)
        if problem is None:
            raise
        raise SystemExit(f"parley serve: --store: {problem_line(url, problem)}") from None


def where_stored(store: str) -> str:
    """The store URL without its password; a SQLite file's absolute path beside it."""
    shown = describe(store)
    if shown.lower().startswith("sqlite:///"):
        path = Path(shown[len("sqlite:///") :].partition("?")[0]).resolve()
        return f"{shown} ({path})"
    return shown


def problem_line(url: str, problem: str) -> str:
    verb = "connect to" if url.strip().lower().startswith("postgres") else "open"
    return f"cannot {verb} {describe(url)}: {problem}"


def store_problem(error: BaseException) -> str | None:
    """A store's failure to open in a few words with a hint, or None for a bug."""
    sqlite3 = sys.modules.get("sqlite3")  # loaded by whatever raised one of its errors
    if sqlite3 is not None and isinstance(error, sqlite3.Error):
        text = str(error)
        if "unable to open" in text:
            text += " (does its folder exist, and can it be written?)"
        return text
    match error:
        case ConnectionRefusedError():
            return "connection refused (is the database running there, on that port?)"
        case socket.gaierror():
            return f"unknown host ({error.strerror})"
        case TimeoutError():
            return "no answer in time (is the host right, and reachable?)"
        case FileExistsError():
            return f"{error.filename} is a file, where a folder is needed"
        case OSError():
            where = f": {error.filename}" if error.filename else ""
            return f"{error.strerror}{where}" if error.strerror else str(error)
    if type(error).__module__.startswith("asyncpg"):  # the server's answer (auth, no db)
        return str(error).strip() or type(error).__name__
    return None


def _write_sqlite(path: Path) -> None:
    import sqlite3  # noqa: PLC0415 - a SQLite store only (a memory store does not load it)

    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=CONNECT_TIMEOUT, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")  # a write lock: the file can be written
        connection.execute("ROLLBACK")
    finally:
        connection.close()


async def _connect_postgres(dsn: str) -> None:
    import asyncpg  # noqa: PLC0415 - the postgres extra, there since open_store took the URL

    connection: Any = await asyncpg.connect(dsn, timeout=CONNECT_TIMEOUT)
    await connection.close()
