"""`parley.cli.errors`: the exit-code table is the one docs/cli.md documents and `parley
--help` prints; every failure the talking commands report is classified into its code and
kind; a usage error is one line on stderr, with a suggestion for a near-miss command, and
exit status 2 — all in-process, through `parley.cli.main.main`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from parley.cli.errors import (
    EXIT_CODES,
    ExitCode,
    OneLineParser,
    UsageError,
    classify,
    message_of,
    report,
)
from parley.cli.main import main
from parley.client import (
    ClientConnectionError,
    ClientError,
    ClientProtocolError,
    ClientTimeoutError,
    NoCompatibleInterfaceError,
    StreamIdleError,
)
from parley.protocol import errors
from parley.protocol.errors import (
    A2AError,
    ContentTypeNotSupportedError,
    ExtensionSupportRequiredError,
    InvalidParamsError,
    MethodNotFoundError,
    TaskNotCancelableError,
    TaskNotFoundError,
    VersionNotSupportedError,
)

DOCS = Path(__file__).parents[2] / "docs" / "cli.md"


def _documented_statuses() -> dict[int, str]:
    """The status table of docs/cli.md's "Errors and exit status": status → kinds cell."""
    text = DOCS.read_text("utf-8").split("## Errors and exit status", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \|.*\|([^|]*)\|$", text, re.MULTILINE)
    return {int(status): kinds.strip() for status, kinds in rows}


def test_the_codes_are_the_documented_ones() -> None:
    assert set(_documented_statuses()) == {int(code) for code in ExitCode}


@pytest.mark.parametrize("code", list(ExitCode), ids=lambda code: code.name)
def test_the_help_epilog_lists_every_code(code: ExitCode) -> None:
    assert re.search(rf"^  {int(code)} +\S", EXIT_CODES, re.MULTILINE), code


def test_the_help_prints_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    assert "exit status:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("error", "code", "kind"),
    [
        (UsageError("nothing to send"), ExitCode.USAGE, "usage"),
        (ImportError("grpc extra"), ExitCode.USAGE, "usage"),
        (ClientTimeoutError("slow"), ExitCode.CONNECTION, "timeout"),
        (StreamIdleError("silent"), ExitCode.CONNECTION, "timeout"),
        (ClientConnectionError("refused"), ExitCode.CONNECTION, "connection"),
        (NoCompatibleInterfaceError("none"), ExitCode.PROTOCOL, "no compatible interface"),
        (ClientProtocolError("HTTP 502", status_code=502), ExitCode.PROTOCOL, "protocol"),
        (TaskNotFoundError(), ExitCode.AGENT_ERROR, "task not found"),
        (TaskNotCancelableError(), ExitCode.AGENT_ERROR, "task not cancelable"),
        (MethodNotFoundError(), ExitCode.AGENT_ERROR, "method not found"),
        (InvalidParamsError(), ExitCode.AGENT_ERROR, "invalid params"),
        (ContentTypeNotSupportedError(), ExitCode.AGENT_ERROR, "content type not supported"),
        (ExtensionSupportRequiredError(), ExitCode.AGENT_ERROR, "extension support required"),
        (VersionNotSupportedError(), ExitCode.AGENT_ERROR, "version not supported"),
    ],
    ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value),
)
def test_each_failure_has_its_code_and_kind(error: Exception, code: ExitCode, kind: str) -> None:
    """The kinds docs/cli.md names; an A2A error's kind is its reason (R-ERR table)."""
    assert classify(error) == (code, kind)


def test_every_documented_kind_is_one_classify_gives() -> None:
    named = {
        kind.strip("` ")
        for kinds in _documented_statuses().values()
        for kind in kinds.split(",")
        if kind.strip().startswith("`")
    }
    given = {
        classify(error)[1]  # type: ignore[index]
        for error in (
            UsageError(),
            ClientTimeoutError(""),
            ClientConnectionError(""),
            NoCompatibleInterfaceError(""),
            ClientProtocolError(""),
        )
    }
    assert named == given


@pytest.mark.parametrize(
    "error", [ValueError("bug"), KeyError("k"), RuntimeError(), ClientError("base")]
)
def test_anything_else_is_a_bug_not_a_report(error: Exception) -> None:
    assert classify(error) is None


def test_every_a2a_error_class_is_classified_as_the_agents() -> None:
    classes = [
        value
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, A2AError) and not name.startswith("_")
    ]
    assert len(classes) > 10
    for cls in classes:
        classified = classify(cls())
        assert classified is not None, cls
        code, kind = classified
        assert code is ExitCode.AGENT_ERROR
        assert kind == kind.lower().replace("_", " "), (cls, kind)


def test_a_report_is_one_line_whatever_the_message(capsys: pytest.CaptureFixture[str]) -> None:
    report("task not found", "Task 42\nnot   found\r\n\tat all ")
    assert capsys.readouterr().err == "parley: task not found: Task 42 not found at all\n"


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (TaskNotFoundError("Task 42 not found"), "Task 42 not found"),
        (ClientConnectionError("  refused \n"), "refused"),
        (RuntimeError(), "RuntimeError"),
        (ClientTimeoutError("   "), "ClientTimeoutError"),
    ],
)
def test_the_message_is_the_errors_own(error: Exception, message: str) -> None:
    assert message_of(error) == message


@pytest.mark.parametrize(
    ("argv", "suggestion"),
    [
        (["sned", "http://a"], "did you mean 'send'?"),
        (["serv"], "did you mean 'serve'?"),
        (["chek", "http://a"], "did you mean 'check'?"),
        (["completion", "bsh"], "did you mean 'bash'?"),
    ],
)
def test_a_near_miss_is_suggested(
    argv: list[str], suggestion: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("parley: usage: "), err
    assert err.count("\n") == 1, err
    assert suggestion in err


def test_nothing_close_suggests_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["zzzzzz"])
    assert exited.value.code == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "invalid choice" in err
    assert "did you mean" not in err
    assert "(see 'parley --help')" in err


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["send", "ftp://agent.example", "hi"], "is not an http:// or https:// URL"),
        (["send", "http://a", "hi", "--header", "novalue"], "expected NAME=VALUE"),
        (["send", "http://a", "--data", "{nope"], "invalid JSON"),
        (["send", "http://a", "hi", "--timeout", "0"], "expected seconds above 0"),
        (["send", "http://a", "hi", "--version", "9.9"], "invalid choice"),
        (["send", "http://a", "hi", "--binding", "soap"], "invalid choice"),
        (["check", "http://a", "--json", "--junit", "r.xml"], "not allowed with argument"),
    ],
)
def test_bad_arguments_are_one_usage_line_naming_the_subcommand(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("parley: usage: "), err
    assert err.count("\n") == 1, err
    assert fragment in err
    assert f"(see 'parley {argv[0]} --help')" in err


def test_a_one_line_parser_of_its_own() -> None:
    parser = OneLineParser(prog="tool")
    parser.add_argument("--n", type=int)
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["--n", "x"])
    assert exited.value.code == 2
