"""The checker's vocabulary (`parley.conformance.results`): a registry that keeps its checks
in registration order, refuses a second check with the same id and files each by scope; a
result that counts as a MUST failure only when a MUST check fails; and the shipped
registry's own rules (ids unique, every check citing a REFERENCE line)."""

from __future__ import annotations

import re

import pytest

from parley.conformance import CHECKS
from parley.conformance.results import (
    Check,
    Level,
    Registry,
    Result,
    Scope,
    Status,
)


async def _passes(_: object) -> str:
    return "fine"


def _check(level: Level = Level.MUST, scope: Scope = Scope.CARD) -> Check:
    return Check("x.y", "R-X-1", level, "a rule", scope, _passes)


def test_checks_run_in_registration_order_and_are_filed_by_scope() -> None:
    registry = Registry()
    registry.card("card.a", "R-A-1", Level.MUST, "first")(_passes)
    registry.interface("iface.b", "R-B-1", Level.SHOULD, "second")(_passes)
    registry.card("card.c", "R-C-1", Level.SHOULD, "third")(_passes)
    assert [c.id for c in registry.checks] == ["card.a", "iface.b", "card.c"]
    assert [c.id for c in registry.of(Scope.CARD)] == ["card.a", "card.c"]
    assert [c.id for c in registry.of(Scope.INTERFACE)] == ["iface.b"]
    second = registry.checks[1]
    assert (second.requirement, second.level, second.title, second.scope) == (
        "R-B-1",
        Level.SHOULD,
        "second",
        Scope.INTERFACE,
    )


def test_the_decorator_gives_the_function_back_unchanged() -> None:
    registry = Registry()
    assert registry.card("c", "R-1", Level.MUST, "t")(_passes) is _passes
    assert registry.checks[0].run is _passes


@pytest.mark.parametrize("second_scope", ["card", "interface"])
def test_an_id_is_registered_once_whatever_the_scope(second_scope: str) -> None:
    registry = Registry()
    registry.card("same.id", "R-1", Level.MUST, "t")(_passes)
    add = registry.card if second_scope == "card" else registry.interface
    with pytest.raises(ValueError, match=r"duplicate check id same\.id"):
        add("same.id", "R-2", Level.SHOULD, "u")(_passes)
    assert len(registry.checks) == 1


@pytest.mark.parametrize(
    ("level", "status", "must_failed"),
    [
        (Level.MUST, Status.FAIL, True),
        (Level.MUST, Status.PASS, False),
        (Level.MUST, Status.SKIP, False),
        (Level.SHOULD, Status.FAIL, False),
        (Level.SHOULD, Status.PASS, False),
        (Level.SHOULD, Status.SKIP, False),
    ],
)
def test_only_a_failed_must_is_a_must_failure(
    level: Level, status: Status, must_failed: bool
) -> None:
    """A SHOULD failure is reported but does not fail `parley check` (docs/check.md)."""
    assert Result(_check(level), status, "d").must_failed is must_failed


def test_a_result_is_a_card_result_unless_it_names_an_interface() -> None:
    assert Result(_check(), Status.PASS, "d").interface == ""
    named = Result(_check(), Status.PASS, "d", "JSONRPC 1.0 http://a")
    assert named.interface == "JSONRPC 1.0 http://a"


def test_the_levels_and_statuses_are_spelled_as_reports_print_them() -> None:
    assert [level.value for level in Level] == ["MUST", "SHOULD"]
    assert [status.value for status in Status] == ["pass", "fail", "skip"]


def test_the_shipped_checks_have_unique_ids_and_cite_reference_lines() -> None:
    ids = [check.id for check in CHECKS]
    assert len(ids) == len(set(ids))
    for check in CHECKS:
        assert re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_-]+)+", check.id), check.id
        assert check.requirement.startswith("R-"), check
        assert check.title, check
        assert isinstance(check.scope, Scope)


def test_the_card_checks_come_before_the_interface_checks() -> None:
    """The card is read and checked first; the interfaces it lists after (docs/check.md)."""
    scopes = [check.scope for check in CHECKS]
    assert scopes == sorted(scopes, key=lambda scope: scope is Scope.INTERFACE)
    assert scopes[0] is Scope.CARD
