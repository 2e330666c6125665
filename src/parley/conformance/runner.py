"""Runs the checks against one agent: reads its card, runs the card checks, then every
interface check on each interface (binding, version) the card lists: HTTP ones through
`Subject`, gRPC ones through `GrpcSubject`. Each check is isolated: its failure, skip or
crash is one result, and the run goes on."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import httpx

from parley.client.card import GRPC_BINDING, card_urls, decode_card
from parley.conformance import (
    auth_checks,
    card_checks,
    error_checks,
    push_checks,
    stream_checks,
    subscribe_checks,
    task_checks,
)
from parley.conformance.context import CardContext, InterfaceContext
from parley.conformance.exchange import HTTP_BINDINGS, Exchange, Subject
from parley.conformance.results import (
    Check,
    CheckFailedError,
    CheckSkippedError,
    Level,
    Result,
    Scope,
    Status,
)
from parley.model import AgentCard, AgentInterface
from parley.protocol.negotiation import Version, parse_version
from parley.wire.json_bytes import JSON

CHECKS: tuple[Check, ...] = tuple(
    check
    for module in (
        card_checks,
        task_checks,
        error_checks,
        stream_checks,
        subscribe_checks,
        push_checks,
        auth_checks,
    )
    for check in module.checks.checks
)
"""Every check, in the order it runs."""

CARD_SERVED = Check(
    "card.served",
    "R-CARD-28",
    Level.MUST,
    "the well-known path serves the card",
    Scope.CARD,
    card_checks.required_fields,
)
INTERFACE_CHECKED = Check(
    "interface.checked",
    "R-CARD-4",
    Level.SHOULD,
    "the interface can be checked",
    Scope.INTERFACE,
    task_checks.reachable,
)


@dataclass(frozen=True, slots=True)
class Report:
    url: str
    results: tuple[Result, ...]

    @property
    def must_failed(self) -> bool:
        return any(result.must_failed for result in self.results)


async def check_agent(
    url: str,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 10.0,
    only: Sequence[str] = (),
    http: httpx.AsyncClient | None = None,
) -> Report:
    """Check the agent whose card is at (or under) `url`. `only`: check id prefixes."""
    client = http or httpx.AsyncClient(timeout=timeout)
    try:
        return Report(url, tuple(await _run(client, url, headers or {}, timeout, only)))
    finally:
        if http is None:
            await client.aclose()


def _chosen(scope: Scope, only: Sequence[str]) -> list[Check]:
    return [c for c in CHECKS if c.scope is scope and (not only or c.id.startswith(tuple(only)))]


async def _run(
    http: httpx.AsyncClient, url: str, headers: dict[str, str], timeout: float, only: Sequence[str]
) -> list[Result]:
    card_context, served = await _read_card(http, url)
    results = [served]
    if served.status is Status.FAIL:
        return results
    for check in _chosen(Scope.CARD, only):
        results.append(await _one(check, card_context))
    card = card_context.card
    if card is None:
        return results
    for interface in _interfaces(card):
        results.extend(
            await _interface(http, card, interface, headers=headers, timeout=timeout, only=only)
        )
    return results


async def _read_card(http: httpx.AsyncClient, url: str) -> tuple[CardContext, Result]:
    reply: httpx.Response | None = None
    where = url
    for where in card_urls(url):
        try:
            reply = await http.get(where)
        except httpx.HTTPError as exc:
            return _no_card(http, where, f"{type(exc).__name__}: {exc}")
        if reply.status_code != 404:
            break
    if reply is None or reply.status_code != 200:
        return _no_card(http, where, f"HTTP {reply.status_code if reply else '—'}")
    try:
        document: JSON = json.loads(reply.content)
    except ValueError:
        return _no_card(http, where, "the card is not JSON")
    card: AgentCard | None = None
    error = ""
    try:
        card = decode_card(document)
    except Exception as exc:  # any decoding failure is reported by card.required-fields
        error = str(exc)
    context = CardContext(http, where, document, card, error)
    return context, Result(CARD_SERVED, Status.PASS, f"{where}: HTTP 200 JSON")


def _no_card(http: httpx.AsyncClient, where: str, why: str) -> tuple[CardContext, Result]:
    return CardContext(http, where, None, None, why), Result(
        CARD_SERVED, Status.FAIL, f"{where}: {why}"
    )


def _interfaces(card: AgentCard) -> Iterable[AgentInterface]:
    seen: set[tuple[str, str, str]] = set()
    for interface in card.supported_interfaces:
        key = (interface.protocol_binding, interface.protocol_version, interface.url)
        if key not in seen:
            seen.add(key)
            yield interface


async def _interface(
    http: httpx.AsyncClient,
    card: AgentCard,
    interface: AgentInterface,
    *,
    headers: dict[str, str],
    timeout: float,
    only: Sequence[str],
) -> list[Result]:
    label = f"{interface.protocol_binding} {interface.protocol_version} {interface.url}"
    if interface.protocol_binding not in (*HTTP_BINDINGS, GRPC_BINDING):
        why = f"{interface.protocol_binding} interfaces are not checked"
        return [Result(INTERFACE_CHECKED, Status.SKIP, why, label)]
    try:
        version = parse_version(interface.protocol_version)
    except Exception:  # a version the checker does not speak
        why = f"version {interface.protocol_version} is not one the checker speaks"
        return [Result(INTERFACE_CHECKED, Status.SKIP, why, label)]
    try:
        subject = _exchange(http, interface, version, timeout)
    except Exception as exc:  # no grpc extra, or an address gRPC cannot dial
        why = f"cannot be checked: {type(exc).__name__}: {exc}"
        return [Result(INTERFACE_CHECKED, Status.SKIP, why, label)]
    try:
        return await _checks(InterfaceContext(subject, card, headers), label, only)
    finally:
        await subject.aclose()


def _exchange(
    http: httpx.AsyncClient, interface: AgentInterface, version: Version, timeout: float
) -> Exchange:
    binding, url, tenant = interface.protocol_binding, interface.url, interface.tenant
    if binding == GRPC_BINDING:
        from parley.conformance.grpc_exchange import GrpcSubject  # noqa: PLC0415 - grpc extra

        return GrpcSubject(binding, version, url, tenant, stream_seconds=timeout)
    return Subject(http, binding, version, url, tenant, stream_seconds=timeout)


async def _checks(context: InterfaceContext, label: str, only: Sequence[str]) -> list[Result]:
    results: list[Result] = []
    for check in _chosen(Scope.INTERFACE, only):
        if (
            results
            and results[0].check.id == "interface.reachable"
            and results[0].status is Status.FAIL
        ):
            results.append(Result(check, Status.SKIP, "the interface is unreachable", label))
            continue
        results.append(await _one(check, context, label))
    return results


async def _one(check: Check, context: CardContext | InterfaceContext, label: str = "") -> Result:
    try:
        detail = await check.run(context)
    except CheckFailedError as exc:
        return Result(check, Status.FAIL, str(exc), label)
    except CheckSkippedError as exc:
        return Result(check, Status.SKIP, str(exc), label)
    except httpx.HTTPError as exc:
        return Result(check, Status.FAIL, f"{type(exc).__name__}: {exc}", label)
    except Exception as exc:  # an answer the check did not foresee is a finding too
        return Result(check, Status.FAIL, f"unexpected answer: {type(exc).__name__}: {exc}", label)
    return Result(check, Status.PASS, detail, label)
