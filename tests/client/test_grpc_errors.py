"""The gRPC client's translation of a failed call (`parley.client.grpc_errors`), in-process on
real `grpc.aio.AioRpcError`s: every A2A error the gRPC binding sends (its status and
`grpc-status-details-bin` trailer, built by `parley.grpc.errors.status_of`) comes back as
the same class with its message, metadata and field violations (R-ERR-23: the ErrorInfo in
the status details); the `Name: message` form of details-less 0.3 servers is read too; a
status that names no A2A error is the client's own error, by status code."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from hypothesis import given
from hypothesis import strategies as st

from parley.client import ClientConnectionError, ClientProtocolError, ClientTimeoutError
from parley.client.grpc_errors import DETAILS_KEY, details_of, error_of
from parley.grpc.errors import status_of
from parley.protocol import errors as e
from parley.protocol.errors import A2AError, FieldViolation
from parley.protocol.negotiation import Version
from parley.wire.errors import ERROR_TABLE

CLASSES = sorted(ERROR_TABLE, key=lambda cls: cls.__name__)


def failed(
    code: grpc.StatusCode, details: str = "", trailers: tuple[tuple[str, Any], ...] = ()
) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailers), details=details
    )


def sent(error: A2AError, version: Version) -> grpc.aio.AioRpcError:
    """The call failure a client sees when the server's binding answers `error`."""
    status = status_of(error, version)
    return failed(status.code, status.details, tuple(status.trailing_metadata))


def packed_status(*details: Any, code: int = 5, message: str = "") -> bytes:
    status = status_pb2.Status(code=code, message=message)
    for detail in details:
        item = any_pb2.Any()
        item.Pack(detail)
        status.details.append(item)
    serialized: bytes = status.SerializeToString()
    return serialized


@pytest.mark.parametrize("version", [Version.V1_0, Version.V0_3], ids=lambda v: v.value)
@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_a2a_error_comes_back_as_the_server_raised_it(
    cls: type[A2AError], version: Version
) -> None:
    error = cls(f"{cls.__name__} happened", metadata={"taskId": "t-1"})
    back = error_of(sent(error, version), "GetTask", 5.0)
    assert type(back) is cls
    assert back.message == error.message
    assert dict(back.metadata) == {"taskId": "t-1"}


@pytest.mark.parametrize("version", [Version.V1_0, Version.V0_3], ids=lambda v: v.value)
def test_field_violations_come_back(version: Version) -> None:
    violations = (
        FieldViolation(field="message.parts", description="must not be empty"),
        FieldViolation(field="historyLength", description="must be at least 0"),
    )
    error = e.InvalidParamsError("bad request", field_violations=violations)
    back = error_of(sent(error, version), "SendMessage", None)
    assert isinstance(back, e.InvalidParamsError)
    assert back.field_violations == violations


metadata = st.dictionaries(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1),
    st.text(),
    max_size=3,
)
messages = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30
)


@given(st.sampled_from(CLASSES), messages, metadata)
def test_any_message_and_metadata_survive_the_trailer(
    cls: type[A2AError], message: str, meta: dict[str, str]
) -> None:
    error = cls(message, metadata=meta)
    back = error_of(sent(error, Version.V1_0), "GetTask", None)
    assert type(back) is cls
    assert back.message == error.message
    assert dict(back.metadata) == meta


@pytest.mark.parametrize(
    ("details", "cls", "message"),
    [
        ("TaskNotFoundError: no task t-1", e.TaskNotFoundError, "no task t-1"),
        ("TaskNotCancelableError: done\nalready", e.TaskNotCancelableError, "done\nalready"),
        (
            "AuthenticatedExtendedCardNotConfiguredError: none",
            e.ExtendedAgentCardNotConfiguredError,
            "none",
        ),
        ("UnsupportedOperationError: no", e.UnsupportedOperationError, "no"),
    ],
)
def test_a_details_less_0_3_status_is_read_by_its_error_name(
    details: str, cls: type[A2AError], message: str
) -> None:
    back = error_of(failed(grpc.StatusCode.NOT_FOUND, details), "GetTask", None)
    assert type(back) is cls
    assert back.message == message


def test_an_unknown_error_name_is_not_an_a2a_error() -> None:
    back = error_of(failed(grpc.StatusCode.INTERNAL, "KeyError: 'x'"), "GetTask", None)
    assert isinstance(back, ClientProtocolError)
    assert str(back) == "GetTask: gRPC INTERNAL: KeyError: 'x'"


def test_the_error_info_reason_wins_over_the_status_code() -> None:
    info = error_details_pb2.ErrorInfo(reason="TASK_NOT_FOUND", metadata={"taskId": "t"})
    trailer = ((DETAILS_KEY, packed_status(info, code=13)),)
    back = error_of(failed(grpc.StatusCode.INTERNAL, "gone", trailer), "GetTask", None)
    assert isinstance(back, e.TaskNotFoundError)
    assert (back.message, dict(back.metadata)) == ("gone", {"taskId": "t"})


def test_an_unknown_reason_is_left_to_the_status_code() -> None:
    info = error_details_pb2.ErrorInfo(reason="SOMETHING_ELSE")
    trailer = ((DETAILS_KEY, packed_status(info)),)
    back = error_of(failed(grpc.StatusCode.UNAVAILABLE, "down", trailer), "GetTask", None)
    assert isinstance(back, ClientConnectionError)


@pytest.mark.parametrize(
    ("code", "cls", "text"),
    [
        (grpc.StatusCode.UNAVAILABLE, ClientConnectionError, "GetTask: gRPC UNAVAILABLE: down"),
        (grpc.StatusCode.CANCELLED, ClientConnectionError, "GetTask: gRPC CANCELLED: down"),
        (grpc.StatusCode.DEADLINE_EXCEEDED, ClientTimeoutError, "GetTask: no answer within 2.5 s"),
        (grpc.StatusCode.INTERNAL, ClientProtocolError, "GetTask: gRPC INTERNAL: down"),
        (grpc.StatusCode.UNAUTHENTICATED, ClientProtocolError, "GetTask: gRPC UNAUTHENTICATED"),
        (grpc.StatusCode.NOT_FOUND, ClientProtocolError, "GetTask: gRPC NOT_FOUND: down"),
    ],
)
def test_a_status_naming_no_a2a_error_is_the_clients_own(
    code: grpc.StatusCode, cls: type[Exception], text: str
) -> None:
    back = error_of(failed(code, "down"), "GetTask", 2.5)
    assert type(back) is cls
    assert str(back).startswith(text)


def test_a_status_without_details_says_so() -> None:
    back = error_of(failed(grpc.StatusCode.INTERNAL), "ListTasks", None)
    assert str(back) == "ListTasks: gRPC INTERNAL: (no details)"


def test_a_bare_unimplemented_is_a_method_the_server_lacks() -> None:
    back = error_of(failed(grpc.StatusCode.UNIMPLEMENTED, "Method not found!"), "ListTasks", None)
    assert isinstance(back, e.MethodNotFoundError)
    assert back.message == "ListTasks: Method not found!"
    bare = error_of(failed(grpc.StatusCode.UNIMPLEMENTED), "ListTasks", None)
    assert isinstance(bare, e.MethodNotFoundError)
    assert bare.message == e.MethodNotFoundError().message


def test_details_of_reads_error_info_and_bad_request_only() -> None:
    info = error_details_pb2.ErrorInfo(reason="INVALID_PARAMS", metadata={"k": "v"})
    bad = error_details_pb2.BadRequest(
        field_violations=[error_details_pb2.BadRequest.FieldViolation(field="f", description="d")]
    )
    other = error_details_pb2.RetryInfo()
    trailer = (("other-key", "x"), (DETAILS_KEY, packed_status(info, other, bad)))
    assert details_of(failed(grpc.StatusCode.INVALID_ARGUMENT, "", trailer)) == [
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "INVALID_PARAMS",
            "metadata": {"k": "v"},
        },
        {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            "fieldViolations": [{"field": "f", "description": "d"}],
        },
    ]


@pytest.mark.parametrize(
    "trailers",
    [
        (),
        (("other-key", "x"),),
        ((DETAILS_KEY, b"\xff\xff not a status"),),
    ],
    ids=["none", "other", "garbled"],
)
def test_no_details_or_a_garbled_trailer_is_no_details(
    trailers: tuple[tuple[str, Any], ...],
) -> None:
    assert details_of(failed(grpc.StatusCode.INTERNAL, "", trailers)) == []
