"""Agent namespaces: which agent a stored task belongs to when several agents share one
store. A namespace is folded into the tenant of the store scope (`namespace`, SEPARATOR,
tenant), so every backend isolates agents exactly as it isolates tenants, with the same
keys, tables and queries.

SEPARATOR is a control character: no tenant contains one (`validation.check_ids` refuses
them at the edge) and no namespace does (`check_namespace`), so a stored tenant reads back
as (namespace, tenant) one way only. The empty namespace adds nothing: its scopes are the
plain tenants, as every task was stored before agents had namespaces.
"""

from __future__ import annotations

import re

SEPARATOR = "\x1f"
"""ASCII unit separator, between the namespace and the tenant in a stored tenant."""

MAX_NAMESPACE_BYTES = 128
"""Most UTF-8 bytes in a namespace. A stored tenant is the namespace and the tenant, and
PostgreSQL indexes it with other ids in one B-tree entry (see `validation.MAX_ID_BYTES`):
a short bound keeps that entry well under its limit."""

_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def check_namespace(namespace: str) -> str:
    """`namespace` if it can be one (at most MAX_NAMESPACE_BYTES of UTF-8, no control
    characters, no lone surrogates); ValueError otherwise."""
    try:
        size = len(namespace.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"namespace {namespace!r} has a lone surrogate") from None
    if size > MAX_NAMESPACE_BYTES:
        raise ValueError(f"namespace {namespace!r} is {size} bytes, over {MAX_NAMESPACE_BYTES}")
    if _FORBIDDEN.search(namespace):
        raise ValueError(f"namespace {namespace!r} has a control character")
    return namespace


def prefix(namespace: str) -> str:
    """What `namespace` puts before a tenant in a store scope ("" for the empty one)."""
    return namespace + SEPARATOR if namespace else ""


def owns(namespace: str, tenant: str) -> bool:
    """Whether a stored tenant (the first item of a store scope) is in `namespace`."""
    return tenant.rpartition(SEPARATOR)[0] == namespace
