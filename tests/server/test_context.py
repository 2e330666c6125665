"""Who is calling (`parley.server.context`): a call's scope keys everything it may see by
tenant and caller (DESIGN 8, R-SCOPE-3); what an authenticator may read of a request
(cookies, query values); and which authenticator a binding uses."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from parley.server.context import (
    ANONYMOUS,
    ANONYMOUS_AUTHENTICATOR,
    ANONYMOUS_CALLER,
    AnonymousAuthenticator,
    AuthRequest,
    CallContext,
    Caller,
    authenticator_of,
)
from tests.server.support import run


def request(
    headers: dict[str, str] | None = None, query: tuple[tuple[str, str], ...] = ()
) -> AuthRequest:
    return AuthRequest("http", "POST", "/", headers or {}, query=query)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (CallContext(caller=Caller(id="alice")), CallContext(caller=Caller(id="bob"))),
        (
            CallContext(caller=Caller(id="alice")),
            CallContext(caller=Caller(id="alice"), tenant="acme"),
        ),
        (CallContext(tenant="acme"), CallContext(tenant="globex")),
    ],
    ids=["caller", "tenant", "anonymous-tenant"],
)
def test_scopes_differ_when_caller_or_tenant_differs(one: CallContext, other: CallContext) -> None:
    """R-SCOPE-3: two calls with different scopes never see each other's tasks."""
    assert one.scope != other.scope


def test_the_scope_ignores_everything_but_tenant_and_caller() -> None:
    """Scopes, claims, extensions, headers and the address do not split a caller's tasks."""
    base = CallContext(caller=Caller(id="alice"), tenant="acme")
    changed = replace(
        base,
        caller=Caller(id="alice", scopes=frozenset({"admin"}), claims={"iss": "x"}),
        activated_extensions=("urn:x",),
        headers={"x": "y"},
        client="10.0.0.1:1",
        resume_after=4,
    )
    assert changed.scope == base.scope == ("acme", "alice")


def test_the_default_call_is_anonymous_without_tenant() -> None:
    ctx = CallContext()
    assert ctx.scope == ("", ANONYMOUS)
    assert ctx.caller == ANONYMOUS_CALLER
    assert (ctx.resume_after, ctx.client, ctx.quota) == (None, None, None)


def test_callers_compare_by_value() -> None:
    assert Caller(id="a", scopes=frozenset({"x"})) == Caller(id="a", scopes=frozenset({"x"}))
    assert Caller(id="a") != Caller(id="a", scopes=frozenset({"x"}))


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("api_key=s3cret", "s3cret"),
        ("theme=dark; api_key=s3cret; lang=en", "s3cret"),
        ('api_key="quoted"', "quoted"),
        ("api_key= spaced ;x=1", "spaced"),
        ("api_key=a=b", "a=b"),
        ("api_key=", ""),
    ],
)
def test_a_cookie_is_found_among_others(header: str, expected: str) -> None:
    assert request({"cookie": header}).cookie("api_key") == expected


@pytest.mark.parametrize(
    "header",
    ["", "theme=dark", "my_api_key=x", "api_key", "API_KEY=upper"],
    ids=["empty", "other", "suffix-match", "no-value", "case"],
)
def test_a_cookie_not_there_is_none(header: str) -> None:
    assert request({"cookie": header}).cookie("api_key") is None


def test_no_cookie_header_is_none() -> None:
    assert request().cookie("api_key") is None


def test_a_query_value_is_the_first_of_its_name() -> None:
    query = (("key", "one"), ("other", "x"), ("key", "two"))
    assert request(query=query).query_value("key") == "one"
    assert request(query=query).query_value("missing") is None


def test_the_anonymous_authenticator_accepts_everyone_as_one_principal() -> None:
    caller = run(AnonymousAuthenticator().authenticate(request({"authorization": "Bearer x"})))
    assert caller is ANONYMOUS_CALLER
    assert caller.id == ANONYMOUS
    assert caller.scopes == frozenset()


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name

    async def authenticate(self, request: AuthRequest) -> Caller:
        return Caller(id=self.name)


class _Handler:
    def __init__(self, authenticator: _Named | None) -> None:
        self.authenticator = authenticator


def test_a_given_authenticator_wins_over_the_handlers() -> None:
    given = _Named("given")
    assert authenticator_of(_Handler(_Named("own")), given) is given


def test_the_handlers_own_authenticator_is_used_when_none_is_given() -> None:
    own = _Named("own")
    assert authenticator_of(_Handler(own)) is own


@pytest.mark.parametrize("handler", [object(), _Handler(None)], ids=["no-attribute", "none"])
def test_without_any_authenticator_every_caller_is_anonymous(handler: object) -> None:
    assert authenticator_of(handler) is ANONYMOUS_AUTHENTICATOR
