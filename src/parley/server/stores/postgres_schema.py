"""The PostgreSQL schema, as ordered migrations: `MIGRATIONS[n - 1]` takes a database from
version n - 1 to n (each step, a statement or a coroutine function of the connection, runs
in one transaction with the version bump, which comes first).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from parley.server.stores import row_upgrade

Step = str | Callable[[Any], Awaitable[None]]

MIGRATIONS: tuple[tuple[Step, ...], ...] = (
    (
        # Version 1. Model objects are stored as A2A 1.0 wire JSON (`json`, kept as
        # written; the stores' own format from version 5). `sort_ts` is the status
        # timestamp in µs since the epoch (-2**63 when there is none), so (sort_ts DESC,
        # id DESC) is the ListTasks order; ids use the "C" collation (byte order of UTF-8
        # = code-point order, as `paging.sort_key`).
        """CREATE TABLE tasks (
            tenant text NOT NULL,
            owner text NOT NULL,
            id text COLLATE "C" NOT NULL,
            context_id text NOT NULL,
            state smallint NOT NULL,
            status json NOT NULL,
            sort_ts bigint NOT NULL,
            metadata json,
            version bigint NOT NULL,
            history_count integer NOT NULL,
            event_count bigint NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (tenant, owner, id)
        )""",
        "CREATE INDEX tasks_by_time ON tasks (tenant, owner, sort_ts DESC, id DESC)",
        """CREATE INDEX tasks_by_context
            ON tasks (tenant, owner, context_id, sort_ts DESC, id DESC)""",
        "CREATE INDEX tasks_by_state ON tasks (tenant, owner, state, sort_ts DESC, id DESC)",
        "CREATE INDEX tasks_active ON tasks (state) WHERE state IN (1, 2)",
        "CREATE INDEX tasks_finished ON tasks (updated_at) WHERE state IN (3, 4, 5, 7)",
        """CREATE TABLE task_messages (
            tenant text NOT NULL,
            owner text NOT NULL,
            task_id text COLLATE "C" NOT NULL,
            position integer NOT NULL,
            body json NOT NULL,
            PRIMARY KEY (tenant, owner, task_id, position),
            FOREIGN KEY (tenant, owner, task_id) REFERENCES tasks (tenant, owner, id)
                ON DELETE CASCADE
        )""",
        """CREATE TABLE artifacts (
            tenant text NOT NULL,
            owner text NOT NULL,
            task_id text COLLATE "C" NOT NULL,
            artifact_id text NOT NULL,
            position integer NOT NULL,
            header json NOT NULL,
            PRIMARY KEY (tenant, owner, task_id, position),
            FOREIGN KEY (tenant, owner, task_id) REFERENCES tasks (tenant, owner, id)
                ON DELETE CASCADE
        )""",
        """CREATE TABLE artifact_chunks (
            tenant text NOT NULL,
            owner text NOT NULL,
            task_id text COLLATE "C" NOT NULL,
            position integer NOT NULL,
            seq bigint NOT NULL,
            parts json NOT NULL,
            PRIMARY KEY (tenant, owner, task_id, position, seq),
            FOREIGN KEY (tenant, owner, task_id, position)
                REFERENCES artifacts (tenant, owner, task_id, position) ON DELETE CASCADE
        )""",
        # `seq` keeps the order configs were first put in (a replacement keeps its place).
        """CREATE TABLE push_configs (
            tenant text NOT NULL,
            owner text NOT NULL,
            task_id text COLLATE "C" NOT NULL,
            config_id text NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            body json NOT NULL,
            PRIMARY KEY (tenant, owner, task_id, config_id)
        )""",
    ),
    (
        # Version 2: push delivery (see the SQLite schema's version 2).
        "ALTER TABLE push_configs ADD COLUMN protocol text",  # NULL: set before, in 1.0
        """CREATE TABLE push_outbox (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant text NOT NULL,
            owner text NOT NULL,
            task_id text COLLATE "C" NOT NULL,
            config_id text NOT NULL,
            event_id text NOT NULL,
            payload json NOT NULL,
            state smallint NOT NULL DEFAULT 0,
            attempts integer NOT NULL DEFAULT 0,
            due_at bigint NOT NULL,
            lease_until bigint NOT NULL DEFAULT 0,
            last_error text,
            created_at bigint NOT NULL
        )""",
        """CREATE INDEX push_outbox_queue
            ON push_outbox (tenant, owner, task_id, config_id, state, id)""",
        "CREATE INDEX push_outbox_due ON push_outbox (state, due_at)",
    ),
    (
        # Version 3: the task's generation (A2A 1.1 draft), as in the SQLite schema.
        "ALTER TABLE tasks ADD COLUMN generation bigint NOT NULL DEFAULT 0",
        "UPDATE tasks SET generation = version",
    ),
    (
        # Version 4: nothing here. SQLite's outbox lost AUTOINCREMENT (see its schema); an
        # identity column costs no such write, and both backends keep the same versions.
    ),
    (
        # Version 5: the stores' own row format, as in the SQLite schema.
        "ALTER TABLE parley_schema ADD COLUMN row_format integer",
        row_upgrade.upgrade_postgres,
        row_upgrade.RECORD,
    ),
)
