"""The talking commands' failures in-process, through `parley.cli.main.main` (docs/cli.md,
"Errors and exit status"): what is refused before any connection (nothing to send, a push
token without its URL, options that exclude one another, an unreadable file, a bad count)
exits 2 with one line on stderr; an unreachable agent exits 3; with `--json` the a2a-cli
error object is on stdout too. Failures an agent answers are in test_client_commands.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from parley.cli.errors import ExitCode
from parley.cli.main import main
from parley.cli.options import API_KEY_ENV, TOKEN_ENV
from tests.ports import free_port


@pytest.fixture(autouse=True)
def _no_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    monkeypatch.delenv(TOKEN_ENV, raising=False)


@pytest.fixture
def closed_url() -> str:
    """A local URL nothing listens on (a port bound, then released)."""
    port = free_port()
    return f"http://127.0.0.1:{port}"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exited:
        code = int(exited.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "parley: usage: nothing to send: give TEXT, --file or --data\n"),
        (["hi", "--push-token", "t"], "parley: usage: --push-token goes with --push-url\n"),
    ],
)
def test_a_send_that_cannot_be_made_is_refused_before_connecting(
    extra: list[str], message: str, closed_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["send", closed_url, *extra], capsys)
    assert (code, out, err) == (ExitCode.USAGE, "", message)


def test_with_json_the_usage_error_is_also_the_a2a_cli_object(
    closed_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["send", closed_url, "--json"], capsys)
    assert code == ExitCode.USAGE
    assert err.startswith("parley: usage: nothing to send")
    assert json.loads(out) == {
        "error": {
            "code": "A2ACLI_ERR_USAGE",
            "message": "nothing to send: give TEXT, --file or --data",
            "hint": None,
            "a2aCode": None,
        }
    }


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["send", "{url}", "hi", "--stream", "--no-wait"], "not allowed with argument"),
        (["send", "{url}", "hi", "--file", "{missing}"], "cannot read"),
        (["get", "{url}", "t-1", "--history", "-2"], "expected a whole number"),
        (["list", "{url}", "--page-size", "0"], "expected a number above 0"),
        (["list", "{url}", "--state", "sleeping"], "invalid choice"),
        (["get", "{url}"], "the following arguments are required: TASK_ID"),
        (["card", "{url}", "--timeout", "never"], "expected seconds above 0"),
    ],
)
def test_bad_options_are_one_usage_line(
    argv: list[str],
    fragment: str,
    closed_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    words = [w.format(url=closed_url, missing=tmp_path / "missing.bin") for w in argv]
    code, out, err = run(words, capsys)
    assert code == ExitCode.USAGE
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("parley: usage: ")
    assert fragment in err


@pytest.mark.parametrize(
    "argv",
    [["card"], ["get", "t-1"], ["list"], ["cancel", "t-1"], ["subscribe", "t-1"]],
    ids=lambda argv: argv[0],
)
def test_an_unreachable_agent_exits_3_with_one_line(
    argv: list[str], closed_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([argv[0], closed_url, *argv[1:]], capsys)
    assert code == ExitCode.CONNECTION
    assert out == ""
    assert err.startswith(f"parley: connection: GET {closed_url}/.well-known/agent-card.json")
    assert err.count("\n") == 1


def test_with_json_an_unreachable_agent_is_also_the_a2a_cli_object(
    closed_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["get", closed_url, "t-1", "--json"], capsys)
    assert code == ExitCode.CONNECTION
    error = json.loads(out)["error"]
    assert (error["code"], error["a2aCode"], error["hint"]) == (
        "A2ACLI_ERR_UNREACHABLE",
        None,
        None,
    )
    assert closed_url in error["message"]


def test_an_output_folder_that_cannot_be_made_is_one_usage_line(
    closed_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way", "utf-8")
    code, out, err = run(["get", closed_url, "t-1", "-o", str(blocker / "sub")], capsys)
    assert code == ExitCode.USAGE
    assert out == ""
    assert err.startswith(
        f"parley: usage: argument -o/--output: cannot use {blocker / 'sub'}: Not a directory"
    )
    assert err.count("\n") == 1
