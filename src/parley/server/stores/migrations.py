"""Schema versions shared by the durable backends: the refusal messages and the check
made when a store opens (a newer schema is always refused; an older one is migrated, or
refused when migrations on start are off).
"""

from __future__ import annotations

from parley.protocol import lifecycle
from parley.server.stores.base import SchemaError, SchemaStatus

ACTIVE_STATES = tuple(sorted(int(state) for state in lifecycle.ACTIVE))
"""The states recovery fails (the `tasks_active` partial index is on exactly these)."""
TERMINAL_STATES = tuple(sorted(int(state) for state in lifecycle.TERMINAL))
"""The states a purge deletes (the `tasks_finished` partial index is on exactly these)."""


def sql_list(values: tuple[int, ...]) -> str:
    """`(1, 2)`: integer literals for an IN list that matches a partial index."""
    return "(" + ", ".join(str(value) for value in values) + ")"


def too_new(where: str, status: SchemaStatus) -> SchemaError:
    return SchemaError(
        f"{where}: the database schema is at version {status.current}, newer than this "
        f"Parley understands (version {status.latest}); upgrade parley-a2a or use another "
        "database"
    )


def behind(where: str, status: SchemaStatus) -> SchemaError:
    return SchemaError(
        f"{where}: the database schema is at version {status.current}, this Parley needs "
        f"version {status.latest}; run `parley db upgrade --store URL` (or let the store "
        "migrate on start)"
    )


def check(where: str, status: SchemaStatus) -> None:
    """Refuse to use a database whose schema is not exactly the latest."""
    if status.too_new:
        raise too_new(where, status)
    if status.pending:
        raise behind(where, status)
