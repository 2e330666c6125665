"""The gRPC binding's one translation point for failures (`parley.grpc.errors`): every
protocol error, in every version, becomes the status code of the error table with a
`google.rpc.Status` trailer carrying ErrorInfo (and BadRequest when fields are named);
a rate limit's hints travel as trailers; a foreign exception becomes a bare INTERNAL
whose text never reaches the client (R-GRPC-4, R-ERR-16, R-ERR-18, R-BIND-16)."""

from __future__ import annotations

import logging

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from parley.grpc.errors import status_of, to_a2a_error
from parley.protocol import errors as e
from parley.protocol.negotiation import Version
from parley.wire.errors import DOMAIN, ERROR_TABLE

VERSIONS = list(Version)


def decoded(status: grpc.Status) -> status_pb2.Status:
    """The google.rpc.Status of the `grpc-status-details-bin` trailer."""
    raw = dict(status.trailing_metadata)["grpc-status-details-bin"]
    assert isinstance(raw, bytes)
    return status_pb2.Status.FromString(raw)


def error_info(status: status_pb2.Status) -> error_details_pb2.ErrorInfo:
    infos = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
    assert len(infos) == 1
    info = error_details_pb2.ErrorInfo()
    infos[0].Unpack(info)
    return info


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.name)
@pytest.mark.parametrize("cls", e.ALL_ERRORS, ids=lambda c: c.__name__)
def test_every_error_is_its_table_status_with_error_info(
    cls: type[e.A2AError], version: Version
) -> None:
    """R-GRPC-4: every A2A error carries google.rpc.ErrorInfo in its status details."""
    error = cls("it went wrong", metadata={"taskId": "t-1"})
    status = status_of(error, version)
    row = ERROR_TABLE[cls]
    expected = row.grpc_status_v03 if version is Version.V0_3 else row.grpc_status
    assert status.code is grpc.StatusCode[expected]
    rpc = decoded(status)
    assert rpc.code == status.code.value[0]
    assert rpc.message == status.details
    info = error_info(rpc)
    assert (info.reason, info.domain) == (row.reason, DOMAIN)
    assert dict(info.metadata)["taskId"] == "t-1"


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.name)
def test_the_message_is_the_errors_own_and_0_3_names_the_class(version: Version) -> None:
    status = status_of(e.TaskNotFoundError("no task t-9"), version)
    if version is Version.V0_3:
        assert status.details == "TaskNotFoundError: no task t-9"
    else:
        assert status.details == "no task t-9"


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.name)
def test_named_fields_become_a_bad_request_detail(version: Version) -> None:
    """R-ERR-11/R-ERR-18: the invalid field and what a valid one is, as google.rpc.BadRequest."""
    status = status_of(e.invalid_field("message.parts", "must not be empty"), version)
    rpc = decoded(status)
    requests = [d for d in rpc.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)]
    assert len(requests) == 1
    bad = error_details_pb2.BadRequest()
    requests[0].Unpack(bad)
    assert [(v.field, v.description) for v in bad.field_violations] == [
        ("message.parts", "must not be empty")
    ]


def test_an_error_without_fields_has_no_bad_request() -> None:
    rpc = decoded(status_of(e.TaskNotCancelableError(), Version.V1_0))
    assert len(rpc.details) == 1


def test_a_subclass_shares_its_listed_base_row() -> None:
    class StoreGone(e.UnavailableError):
        pass

    status = status_of(StoreGone("store down"), Version.V1_0)
    assert status.code is grpc.StatusCode.UNAVAILABLE
    assert error_info(decoded(status)).reason == ERROR_TABLE[e.UnavailableError].reason


def trailers(status: grpc.Status) -> dict[str, str | bytes]:
    return dict(status.trailing_metadata)


def test_a_rate_limit_sends_retry_after_and_its_quota_as_trailers() -> None:
    """The HTTP bindings' Retry-After and RateLimit headers, as gRPC trailers."""
    status = status_of(e.RateLimitedError(retry_after=5, limit=60, reset=1_000), Version.V1_0)
    assert status.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    sent = trailers(status)
    assert sent["retry-after"] == "5"
    assert "grpc-status-details-bin" in sent
    assert len(sent) > 2  # the quota's own trailers beside the two
    assert error_info(decoded(status)).metadata["retryAfterSeconds"] == "5"


def test_a_rate_limit_without_a_quota_sends_only_retry_after() -> None:
    sent = trailers(status_of(e.RateLimitedError(retry_after=1), Version.V1_0))
    assert set(sent) == {"grpc-status-details-bin", "retry-after"}


def test_a_rate_limit_without_hints_sends_no_extra_trailer() -> None:
    sent = trailers(status_of(e.RateLimitedError(), Version.V1_0))
    assert set(sent) == {"grpc-status-details-bin"}


def test_a_limit_without_its_reset_is_not_half_announced() -> None:
    sent = trailers(status_of(e.RateLimitedError(retry_after=2, limit=10), Version.V1_0))
    assert set(sent) == {"grpc-status-details-bin", "retry-after"}


def test_a_protocol_error_is_passed_through_unlogged(caplog: pytest.LogCaptureFixture) -> None:
    error = e.TaskNotFoundError("t")
    with caplog.at_level(logging.ERROR, logger="parley.grpc"):
        assert to_a2a_error(error, "GetTask") is error
    assert caplog.records == []


def test_a_foreign_exception_is_logged_and_becomes_a_bare_internal_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The traceback stays in the log; the client learns nothing of it (R-OPS-13)."""
    with caplog.at_level(logging.ERROR, logger="parley.grpc"):
        error = to_a2a_error(KeyError("secret-column"), "SendMessage")
    assert error == e.InternalError()
    assert "secret-column" not in error.message
    [record] = caplog.records
    assert "SendMessage" in record.getMessage()
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], KeyError)
    status = status_of(error, Version.V1_0)
    assert status.code is grpc.StatusCode.INTERNAL
    assert "secret-column" not in status.details


TEMPORARY = {e.UnavailableError: "UNAVAILABLE", e.RateLimitedError: "RESOURCE_EXHAUSTED"}


@pytest.mark.parametrize("version", VERSIONS, ids=lambda v: v.name)
@pytest.mark.parametrize("cls", e.ALL_ERRORS, ids=lambda c: c.__name__)
def test_temporary_failures_have_codes_of_their_own(
    cls: type[e.A2AError], version: Version
) -> None:
    """R-ERR-14: a client can tell a failure worth retrying (the store is down, a rate
    limit) from a permanent one by the status code alone."""
    code = status_of(cls(), version).code.name
    if cls in TEMPORARY:
        assert code == TEMPORARY[cls]
    else:
        assert code not in TEMPORARY.values()
