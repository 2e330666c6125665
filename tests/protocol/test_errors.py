"""The closed error hierarchy (`parley.protocol.errors`): one class per spec error, compared
by value, each with a default message; the list the error table must cover is complete;
RateLimitedError keeps its retry hint in ErrorInfo metadata both ways; `invalid_field`
names the field (R-ERR-1, R-ERR-10, R-ERR-16)."""

from __future__ import annotations

import inspect

import pytest

from parley.protocol import errors as e
from parley.wire.errors import ERROR_TABLE

CONCRETE = [
    cls
    for _, cls in inspect.getmembers(e, inspect.isclass)
    if issubclass(cls, e.A2AError) and cls is not e.A2AError
]


def test_every_error_class_of_the_module_is_listed_once_and_in_the_table() -> None:
    """ALL_ERRORS is what the error table must cover: a class added to the module but not
    to the list would reach a binding without a row (and turn into an InternalError)."""
    assert sorted(c.__name__ for c in CONCRETE) == sorted(c.__name__ for c in e.ALL_ERRORS)
    assert len(set(e.ALL_ERRORS)) == len(e.ALL_ERRORS)
    assert set(e.ALL_ERRORS) <= set(ERROR_TABLE)


@pytest.mark.parametrize("cls", e.ALL_ERRORS, ids=lambda c: c.__name__)
def test_each_error_has_its_own_default_message(cls: type[e.A2AError]) -> None:
    """R-ERR-16: every error carries a message, even when raised bare."""
    error = cls()
    assert error.message == cls.default_message
    assert error.message
    assert error.message != e.A2AError.default_message
    assert str(error) == error.message
    assert repr(error) == f"{cls.__name__}({error.message!r})"
    assert (error.metadata, error.field_violations, error.data) == ({}, (), None)


def test_default_messages_are_distinct() -> None:
    """A client that shows only the message can still tell the errors apart."""
    messages = [cls.default_message for cls in e.ALL_ERRORS]
    assert len(set(messages)) == len(messages)


@pytest.mark.parametrize("cls", e.ALL_ERRORS, ids=lambda c: c.__name__)
def test_errors_compare_by_class_and_content(cls: type[e.A2AError]) -> None:
    one = cls("boom", metadata={"taskId": "t"})
    assert one == cls("boom", metadata={"taskId": "t"})
    assert hash(one) == hash(cls("boom", metadata={"taskId": "other"}))
    assert one != cls("boom", metadata={"taskId": "u"})
    assert one != cls("other", metadata={"taskId": "t"})
    assert one != cls("boom", metadata={"taskId": "t"}, data={"x": 1})
    assert one != "boom"
    other = next(c for c in e.ALL_ERRORS if c is not cls)
    assert one != other("boom", metadata={"taskId": "t"})


def test_a_subclass_is_not_equal_to_its_base() -> None:
    class Narrower(e.TaskNotFoundError):
        pass

    assert Narrower("x") != e.TaskNotFoundError("x")
    assert e.TaskNotFoundError("x") != Narrower("x")


def test_metadata_is_copied_so_the_caller_may_change_its_own() -> None:
    given = {"taskId": "t"}
    error = e.TaskNotFoundError(metadata=given)
    given["taskId"] = "changed"
    assert error.metadata == {"taskId": "t"}


def test_errors_are_exceptions_that_catch_by_base() -> None:
    with pytest.raises(e.A2AError) as caught:
        raise e.ContentTypeNotSupportedError("image/gif")
    assert isinstance(caught.value, Exception)
    assert caught.value.message == "image/gif"


def test_an_empty_message_means_the_default() -> None:
    assert e.TaskNotCancelableError("").message == e.TaskNotCancelableError.default_message


def test_unauthenticated_keeps_its_challenges() -> None:
    """R-ERR-4/R-ERR-5: the challenges name the schemes that would be accepted."""
    error = e.UnauthenticatedError(challenges=('Bearer realm="a2a"', "ApiKey"))
    assert error.challenges == ('Bearer realm="a2a"', "ApiKey")
    assert error.message == "Authentication required"
    assert e.UnauthenticatedError().challenges == ()


def test_rate_limited_puts_retry_after_into_metadata() -> None:
    error = e.RateLimitedError(retry_after=7, limit=10, reset=1_700_000_000)
    assert error.metadata == {"retryAfterSeconds": "7"}
    assert (error.retry_after, error.limit, error.reset) == (7, 10, 1_700_000_000)


def test_rate_limited_rebuilt_from_metadata_gets_retry_after_back() -> None:
    """A client decoding any binding's error has only the metadata: retry_after follows."""
    error = e.RateLimitedError("slow down", metadata={"retryAfterSeconds": "12", "x": "y"})
    assert error.retry_after == 12
    assert error.metadata == {"retryAfterSeconds": "12", "x": "y"}


@pytest.mark.parametrize("value", ["", "soon", "-3", "1.5"])
def test_rate_limited_ignores_a_retry_hint_that_is_not_whole_seconds(value: str) -> None:
    error = e.RateLimitedError(metadata={"retryAfterSeconds": value})
    assert error.retry_after is None
    assert error.metadata == {"retryAfterSeconds": value}


def test_rate_limited_explicit_retry_after_does_not_override_given_metadata() -> None:
    error = e.RateLimitedError(retry_after=3, metadata={"retryAfterSeconds": "9"})
    assert error.retry_after == 3
    assert error.metadata["retryAfterSeconds"] == "9"


def test_rate_limited_without_a_hint_has_no_metadata() -> None:
    error = e.RateLimitedError()
    assert (error.retry_after, error.limit, error.reset, error.metadata) == (None, None, None, {})


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("message.parts", "message.parts: must not be empty"),
        ("", "must not be empty"),
    ],
)
def test_invalid_field_names_the_field_in_message_and_violation(field: str, message: str) -> None:
    """R-ERR-10/R-ERR-11: an invalid request names the field and what a valid one is."""
    error = e.invalid_field(field, "must not be empty")
    assert isinstance(error, e.InvalidParamsError)
    assert error.message == message
    assert error.field_violations == (
        e.FieldViolation(field=field, description="must not be empty"),
    )


def test_field_violations_are_values() -> None:
    a = e.FieldViolation(field="id", description="required")
    assert a == e.FieldViolation(field="id", description="required")
    assert e.InvalidParamsError(field_violations=(a,)) == e.InvalidParamsError(
        field_violations=(e.FieldViolation(field="id", description="required"),)
    )
