"""The helpers of `parley serve` and `-o DIR`, in process: the pre-flight checks
(`parley.cli.preflight`), the graceful stop (`parley.cli.graceful`), `--exec`
(`parley.cli.exec_option`), `--reload` (`parley.cli.reload`), `--log-format json`
(`parley.cli.log_format`) and saving files (`parley.cli.files`)."""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import logging
import os
import socket
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

from parley.cli import reload
from parley.cli.errors import UsageError
from parley.cli.exec_option import EXEC_TARGET, add_exec_options, check_exec, exec_or_load
from parley.cli.files import Saver, directory, parts_of, safe_name
from parley.cli.graceful import STOPPING, GracefulStop, add_graceful_option
from parley.cli.log_format import JsonFormatter
from parley.cli.preflight import (
    check_port,
    check_store,
    problem_line,
    store_problem,
    where_stored,
)
from parley.model import (
    Artifact,
    Message,
    RawPart,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TextPart,
)
from parley.server.log_context import TASK_IDS
from tests.ports import free_port

# --- preflight ---------------------------------------------------------------------------


def test_a_port_in_use_is_one_line_with_a_hint() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit, match=f"port {port} is in use on 127.0.0.1"):
            check_port("127.0.0.1", port)


def test_a_free_port_passes() -> None:
    port = free_port()
    check_port("127.0.0.1", port)  # no SystemExit


def test_an_unknown_host_suggests_loopback() -> None:
    with pytest.raises(SystemExit, match=r"--host no-such-host\.invalid: .*try 127\.0\.0\.1"):
        check_port("no-such-host.invalid", 0)


def test_an_address_not_here_cannot_be_listened_on() -> None:
    # 192.0.2.1 (TEST-NET-1) is no interface of this machine: EADDRNOTAVAIL
    with pytest.raises(SystemExit, match=r"cannot listen on 192\.0\.2\.1:0"):
        check_port("192.0.2.1", 0)


class _RefusingSocket:
    """A socket whose bind fails with `errno`."""

    def __init__(self, error: int) -> None:
        self.error = error

    def __call__(self, *args: Any) -> _RefusingSocket:
        return self

    def __enter__(self) -> _RefusingSocket:
        return self

    def __exit__(self, *args: Any) -> None:
        return None

    def setsockopt(self, *args: Any) -> None:
        return None

    def bind(self, address: Any) -> None:
        raise OSError(self.error, "Permission denied")


def test_a_privileged_port_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "socket", _RefusingSocket(errno.EACCES))
    with pytest.raises(SystemExit, match=r"port 80: permission denied .*above 1023"):
        check_port("127.0.0.1", 80)


def test_a_memory_store_needs_nothing() -> None:
    check_store("memory")


def test_an_unknown_store_scheme_is_a_usage_line() -> None:
    with pytest.raises(SystemExit, match="parley serve: --store: "):
        check_store("mongodb://localhost/x")


def test_a_sqlite_store_is_created_with_its_folders(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "tasks.db"
    check_store(f"sqlite:///{path}")
    assert path.parent.is_dir()


def test_a_sqlite_store_under_a_file_is_worded(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SystemExit, match=r"--store: cannot open sqlite:///.*file is a file"):
        check_store(f"sqlite:///{blocker}/tasks.db")
    with pytest.raises(SystemExit, match=r"--store: .*: Not a directory: .*file/sub$"):
        check_store(f"sqlite:///{blocker}/sub/tasks.db")


def test_an_unreachable_postgres_is_worded() -> None:
    pytest.importorskip("asyncpg")
    port = free_port()  # nothing listens there
    with pytest.raises(SystemExit, match=r"cannot connect to postgresql://.*connection refused"):
        check_store(f"postgresql://nobody@127.0.0.1:{port}/none")


def test_a_reachable_postgres_passes() -> None:
    from tests.contracts.conftest import require_postgres  # noqa: PLC0415
    from tests.contracts.support import POSTGRES_URL  # noqa: PLC0415

    require_postgres()
    check_store(POSTGRES_URL)  # connects, migrates nothing


def test_a_bug_opening_sqlite_is_not_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("a bug")

    monkeypatch.setattr(sqlite3, "connect", broken)
    with pytest.raises(KeyError, match="a bug"):
        check_store(f"sqlite:///{tmp_path / 'tasks.db'}")


def test_where_a_sqlite_store_is_shows_its_absolute_path() -> None:
    shown = where_stored("sqlite:///rel/tasks.db?mode=rwc")
    assert shown.startswith("sqlite:///rel/tasks.db")
    assert str(Path("rel/tasks.db").resolve()) in shown
    assert where_stored("memory") == "memory"


def test_a_problem_line_connects_to_postgres_and_opens_the_rest() -> None:
    assert problem_line("postgresql://u@h/db", "x").startswith("cannot connect to ")
    assert problem_line("sqlite:///x.db", "y") == "cannot open sqlite:///x.db: y"


class _AsyncpgError(Exception):
    pass


_AsyncpgError.__module__ = "asyncpg.exceptions"


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (ConnectionRefusedError(), "connection refused"),
        (socket.gaierror(-2, "Name or service not known"), "unknown host (Name or service"),
        (TimeoutError(), "no answer in time"),
        (sqlite3.OperationalError("unable to open database file"), "does its folder exist"),
        (sqlite3.OperationalError("disk I/O error"), "disk I/O error"),
        (FileExistsError(17, "File exists", "/x/y"), "/x/y is a file"),
        (PermissionError(13, "Permission denied", "/root/x"), "Permission denied: /root/x"),
        (OSError(5, "Input/output error"), "Input/output error"),
        (OSError("bare"), "bare"),
        (_AsyncpgError("password authentication failed "), "password authentication failed"),
        (_AsyncpgError(""), "_AsyncpgError"),
    ],
)
def test_store_problems_are_worded(error: BaseException, words: str) -> None:
    problem = store_problem(error)
    assert problem is not None
    assert words in problem
    assert not problem.endswith(" ")


def test_a_bug_is_no_store_problem() -> None:
    assert store_problem(KeyError("x")) is None


# --- graceful ----------------------------------------------------------------------------


class _Sent:
    def __init__(self, fail_on: str = "") -> None:
        self.messages: list[dict[str, Any]] = []
        self.fail_on = fail_on

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == self.fail_on or self.fail_on == "all":
            raise RuntimeError("the connection is gone")
        self.messages.append(message)


async def _receive() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _cut(scope: Any, receive: Any, send: Any) -> None:
    raise asyncio.CancelledError


def test_a_request_cut_before_its_answer_gets_a_503() -> None:
    sent = _Sent()
    asyncio.run(GracefulStop(_cut)({"type": "http"}, _receive, sent))
    start, body = sent.messages
    assert start["status"] == 503
    assert (b"retry-after", b"1") in start["headers"]
    assert body == {"type": "http.response.body", "body": STOPPING, "more_body": False}
    assert "stopping" in json.loads(STOPPING)["error"]


def test_a_stream_cut_midway_ends_its_body() -> None:
    # a second start is refused (as a server does once the answer has begun): the body
    # ends, empty
    sent = _Sent(fail_on="http.response.start")
    asyncio.run(GracefulStop(_cut)({"type": "http"}, _receive, sent))
    assert sent.messages == [{"type": "http.response.body", "body": b"", "more_body": False}]


def test_a_connection_gone_swallows_the_last_words() -> None:
    sent = _Sent(fail_on="all")
    asyncio.run(GracefulStop(_cut)({"type": "http"}, _receive, sent))
    assert sent.messages == []


def test_a_cut_that_is_not_http_is_reraised() -> None:
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(GracefulStop(_cut)({"type": "lifespan"}, _receive, _Sent()))


def test_an_uncut_request_passes_through() -> None:
    async def answer(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})

    sent = _Sent()
    asyncio.run(GracefulStop(answer)({"type": "http"}, _receive, sent))
    assert [message["status"] for message in sent.messages] == [204]


def test_the_graceful_timeout_option() -> None:
    parser = argparse.ArgumentParser()
    add_graceful_option(parser)
    assert parser.parse_args([]).graceful_timeout == 20.0
    assert parser.parse_args(["--graceful-timeout", "2.5"]).graceful_timeout == 2.5


# --- exec --------------------------------------------------------------------------------


def _exec_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument("target", nargs="*")
    parser.add_argument("--host", default="127.0.0.1")
    add_exec_options(parser)
    return parser


def test_exec_options_parse_and_validate() -> None:
    parser = _exec_parser()
    arguments = parser.parse_args(["--exec", "cat", "--exec-timeout", "0"])
    assert arguments.exec_timeout is None
    assert arguments.exec_concurrency == 4
    assert parser.parse_args(["--exec-timeout", "1.5"]).exec_timeout == 1.5
    assert parser.parse_args(["--exec-concurrency", "2"]).exec_concurrency == 2
    with pytest.raises(argparse.ArgumentError):
        parser.parse_args(["--exec-timeout", "-1"])
    with pytest.raises(argparse.ArgumentError):
        parser.parse_args(["--exec-concurrency", "0"])


def test_without_exec_the_target_is_kept() -> None:
    arguments = _exec_parser().parse_args(["examples.echo:agent"])
    check_exec(arguments)
    assert arguments.target == ["examples.echo:agent"]
    agent = exec_or_load("examples.echo:agent", arguments)
    assert agent is not None


def test_exec_stands_for_the_target() -> None:
    arguments = _exec_parser().parse_args(["--exec", "cat"])
    check_exec(arguments)
    assert arguments.target == [EXEC_TARGET]
    check_exec(arguments)  # again (as --reload parses anew): still fine
    agent = exec_or_load(EXEC_TARGET, arguments)
    assert agent.name == "cat"


def test_exec_with_a_target_too_is_refused() -> None:
    arguments = _exec_parser().parse_args(["examples.echo:agent", "--exec", "cat"])
    with pytest.raises(SystemExit, match="name no target besides"):
        check_exec(arguments)


def test_exec_on_a_remote_host_needs_allowing() -> None:
    arguments = _exec_parser().parse_args(["--exec", "cat", "--host", "0.0.0.0"])
    with pytest.raises(SystemExit, match=r"loopback only, not '0\.0\.0\.0'"):
        check_exec(arguments)
    arguments.exec_allow_remote = True
    check_exec(arguments)
    assert arguments.target == [EXEC_TARGET]


def test_an_empty_exec_command_is_a_usage_line() -> None:
    arguments = _exec_parser().parse_args(["--exec", "   "])
    with pytest.raises(SystemExit, match="parley serve: --exec: "):
        exec_or_load(EXEC_TARGET, arguments)


# --- reload ------------------------------------------------------------------------------


def _serve_arguments(*argv: str) -> argparse.Namespace:
    from parley.cli.main import build_parser  # noqa: PLC0415

    arguments = build_parser().parse_args(list(argv))
    arguments.argv = list(argv)
    return arguments


def test_reload_hands_the_command_line_to_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn  # noqa: PLC0415

    monkeypatch.delenv(reload.ARGV_ENV, raising=False)

    calls: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: calls.append((app, options)))
    arguments = _serve_arguments("serve", "examples.echo:agent", "--reload", "--store", "memory")
    assert reload.run_reloading(arguments, {"port": 1, "http": object()}) == 0
    ((app, options),) = calls
    assert app == "parley.cli.reload:app"
    assert options["factory"] is True
    assert options["reload"] is True
    assert options["port"] == 1
    assert "http" not in options
    argv = json.loads(os.environ[reload.ARGV_ENV])
    assert argv == ["serve", "examples.echo:agent", "--store", "memory"]


def test_reload_without_argv_serves_the_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn  # noqa: PLC0415

    monkeypatch.delenv(reload.ARGV_ENV, raising=False)

    monkeypatch.setattr(uvicorn, "run", lambda app, **options: None)
    arguments = _serve_arguments("serve", "examples.echo:agent", "--reload")
    del arguments.argv
    reload.run_reloading(arguments, {})
    assert json.loads(os.environ[reload.ARGV_ENV]) == ["serve", "examples.echo:agent"]


def test_reload_is_refused_with_a_grpc_port() -> None:
    arguments = _serve_arguments("serve", "examples.echo:agent", "--reload", "--grpc-port", "1")
    with pytest.raises(SystemExit, match="--reload runs one process"):
        reload.run_reloading(arguments, {})


def test_the_reloaded_child_builds_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    from parley.cli import serve  # noqa: PLC0415
    from parley.cli.main import build_parser  # noqa: PLC0415

    build_parser()  # registers the serve parser the child applies its config with
    assert serve._PARSERS
    argv = ["serve", "examples.echo:agent", "--store", "memory"]
    monkeypatch.setenv(reload.ARGV_ENV, json.dumps(argv))
    app = reload.app()
    assert callable(app)
    assert isinstance(app, GracefulStop)


# --- log format --------------------------------------------------------------------------


def _record(name: str = "parley.x", **fields: Any) -> logging.LogRecord:
    record = logging.LogRecord(name, logging.INFO, __file__, 1, "hello %s", ("you",), None)
    record.__dict__.update(fields)
    return record


def test_a_plain_line_has_time_level_logger_and_message() -> None:
    line = json.loads(JsonFormatter("ignored", use_colors=True).format(_record()))
    assert line["level"] == "INFO"
    assert line["logger"] == "parley.x"
    assert line["message"] == "hello you"
    assert line["time"].endswith("Z")
    assert "T" in line["time"]
    assert not {"task_id", "context_id", "trace_id", "exception", "stack"} & set(line)


def test_a_line_carries_the_task_in_progress() -> None:
    async def logged() -> dict[str, Any]:
        TASK_IDS.set(("task-1", "ctx-1"))
        return dict(json.loads(JsonFormatter().format(_record())))

    line = asyncio.run(logged())
    assert (line["task_id"], line["context_id"]) == ("task-1", "ctx-1")
    named = json.loads(JsonFormatter().format(_record(task_id="t2", context_id="c2")))
    assert (named["task_id"], named["context_id"]) == ("t2", "c2")


def test_an_access_line_names_its_request() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5", "POST", "/", "1.1", 200),
        None,
    )
    line = json.loads(JsonFormatter().format(record))
    assert line["client"] == "127.0.0.1:5"
    assert line["method"] == "POST"
    assert line["path"] == "/"
    assert line["status"] == 200
    odd = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, "%s", ("x",), None)
    assert "method" not in json.loads(JsonFormatter().format(odd))


def test_a_traceback_and_a_stack_are_kept() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        exc_info = sys.exc_info()
    record = _record(exc_info=exc_info, stack_info="Stack (most recent call last): ...")
    line = json.loads(JsonFormatter().format(record))
    assert "ValueError: boom" in line["exception"]
    assert line["stack"].startswith("Stack")


def test_a_recording_span_gives_its_ids() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415

    tracer = TracerProvider().get_tracer("test")
    formatter = JsonFormatter()
    with tracer.start_as_current_span("work") as span:
        line = json.loads(formatter.format(_record()))
        context = span.get_span_context()
    assert line["trace_id"] == format(context.trace_id, "032x")
    assert line["span_id"] == format(context.span_id, "016x")


def test_without_opentelemetry_no_trace_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    formatter = JsonFormatter()
    assert formatter._trace_ids is None
    assert "trace_id" not in json.loads(formatter.format(_record()))


# --- files -------------------------------------------------------------------------------


def _message(*parts: Any) -> Message:
    return Message(message_id="m", role=Role.AGENT, parts=tuple(parts))


def test_output_folder_is_made_or_refused(tmp_path: Path) -> None:
    assert directory(str(tmp_path / "a" / "b")).is_dir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(argparse.ArgumentTypeError, match="cannot use"):
        directory(str(tmp_path / "file" / "sub"))


def test_the_parts_of_each_kind_of_result() -> None:
    raw = RawPart(raw=b"1", filename="a.txt")
    artifact = Artifact(artifact_id="a", parts=(raw,))
    task = Task(
        id="t",
        context_id="c",
        status=TaskStatus(state=TaskState.COMPLETED),
        artifacts=(artifact, artifact),
    )
    assert list(parts_of(task)) == [raw, raw]
    assert list(parts_of(_message(raw))) == [raw]
    update = TaskArtifactUpdateEvent(task_id="t", context_id="c", artifact=artifact)
    assert list(parts_of(update)) == [raw]
    assert list(parts_of(TaskStatus(state=TaskState.WORKING))) == []  # type: ignore[arg-type]


def test_files_are_saved_without_overwriting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saver = Saver(tmp_path)
    message = _message(
        RawPart(raw=b"one", filename="../../etc/notes.txt"),
        RawPart(raw=b"two", filename="notes.txt"),
        TextPart(text="not a file"),
        RawPart(raw=b"{}", media_type="application/json; charset=utf-8"),
        RawPart(raw=b"?", filename=".hidden"),
        RawPart(raw=b"??", media_type=""),
    )
    saved = saver.save(message)
    assert [path.name for path in saved] == [
        "notes.txt",
        "notes-1.txt",
        "file-3.json",
        "file-4",
        "file-5",
    ]
    assert (tmp_path / "notes.txt").read_bytes() == b"one"
    assert (tmp_path / "notes-1.txt").read_bytes() == b"two"
    assert f"saved {tmp_path / 'notes.txt'} (3 bytes)" in capsys.readouterr().err


def test_too_many_files_of_one_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def always_exists(self: Path, mode: str) -> Any:
        raise FileExistsError(17, "File exists", str(self))

    monkeypatch.setattr(Path, "open", always_exists)
    with pytest.raises(UsageError, match=r"too many files named x\.bin"):
        Saver(tmp_path).save(_message(RawPart(raw=b"", filename="x.bin")))


def test_unusable_names() -> None:
    assert safe_name("C:\\Users\\me\\report.pdf") == "report.pdf"
    assert safe_name("a/b/..") == ""
    assert safe_name("bad\x00name") == ""
    assert safe_name("   ") == ""
