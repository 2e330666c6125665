"""The SQLite schema, as ordered migrations: `MIGRATIONS[n - 1]` takes a database from
version n - 1 to n (each step, a statement or a function of the connection, runs in one
transaction with the version bump, which comes first).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from parley.server.stores import row_upgrade

Step = str | Callable[[sqlite3.Connection], None]

MIGRATIONS: tuple[tuple[Step, ...], ...] = (
    (
        # Version 1. Model objects are stored as A2A 1.0 wire JSON (the stores' own
        # format from version 5). `sort_ts` is the
        # status timestamp in µs since the epoch (-2**63 when there is none), so
        # (sort_ts DESC, id DESC) is the ListTasks order; ids compare as bytes (UTF-8),
        # which is code-point order, as in `paging.sort_key`.
        """CREATE TABLE tasks (
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            id TEXT NOT NULL,
            context_id TEXT NOT NULL,
            state INTEGER NOT NULL,
            status TEXT NOT NULL,
            sort_ts INTEGER NOT NULL,
            metadata TEXT,
            version INTEGER NOT NULL,
            history_count INTEGER NOT NULL,
            event_count INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (tenant, owner, id)
        )""",
        "CREATE INDEX tasks_by_time ON tasks (tenant, owner, sort_ts DESC, id DESC)",
        """CREATE INDEX tasks_by_context
            ON tasks (tenant, owner, context_id, sort_ts DESC, id DESC)""",
        "CREATE INDEX tasks_by_state ON tasks (tenant, owner, state, sort_ts DESC, id DESC)",
        "CREATE INDEX tasks_active ON tasks (state) WHERE state IN (1, 2)",
        "CREATE INDEX tasks_finished ON tasks (updated_at) WHERE state IN (3, 4, 5, 7)",
        """CREATE TABLE task_messages (
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            task_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (tenant, owner, task_id, position),
            FOREIGN KEY (tenant, owner, task_id) REFERENCES tasks (tenant, owner, id)
                ON DELETE CASCADE
        )""",
        """CREATE TABLE artifacts (
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            task_id TEXT NOT NULL,
            artifact_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            header TEXT NOT NULL,
            PRIMARY KEY (tenant, owner, task_id, position),
            FOREIGN KEY (tenant, owner, task_id) REFERENCES tasks (tenant, owner, id)
                ON DELETE CASCADE
        )""",
        """CREATE TABLE artifact_chunks (
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            task_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            parts TEXT NOT NULL,
            PRIMARY KEY (tenant, owner, task_id, position, seq),
            FOREIGN KEY (tenant, owner, task_id, position)
                REFERENCES artifacts (tenant, owner, task_id, position) ON DELETE CASCADE
        )""",
        # rowid keeps the order configs were first put in (a replacement keeps its place).
        """CREATE TABLE push_configs (
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            task_id TEXT NOT NULL,
            config_id TEXT NOT NULL,
            body TEXT NOT NULL,
            UNIQUE (tenant, owner, task_id, config_id)
        )""",
    ),
    (
        # Version 2: push delivery. A config remembers the protocol version it was made
        # in (its payloads are that version's); `push_outbox` holds the notifications
        # recorded with the task writes that caused them (DESIGN 10), in `id` order per
        # (task, config). state 0 = pending, 1 = dead (kept for inspection); times are µs
        # since the epoch; a delivered notification's row is deleted.
        "ALTER TABLE push_configs ADD COLUMN protocol TEXT",  # NULL: set before, in 1.0
        """CREATE TABLE push_outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            task_id TEXT NOT NULL,
            config_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            payload TEXT NOT NULL,
            state INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            due_at INTEGER NOT NULL,
            lease_until INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            created_at INTEGER NOT NULL
        )""",
        """CREATE INDEX push_outbox_queue
            ON push_outbox (tenant, owner, task_id, config_id, state, id)""",
        "CREATE INDEX push_outbox_due ON push_outbox (state, due_at)",
    ),
    (
        # Version 3: the task's generation (A2A 1.1 draft), kept by folding. A task
        # written before has no count of its updates: it starts from its version, which
        # is at least that count (`docs/decisions.md`), so numbers only grow.
        "ALTER TABLE tasks ADD COLUMN generation INTEGER NOT NULL DEFAULT 0",
        "UPDATE tasks SET generation = version",
    ),
    (
        # Version 4: `push_outbox` without AUTOINCREMENT, whose `sqlite_sequence` row was
        # one more page written with every notification recorded. A new row's id is still
        # above every id in the table (SQLite takes the largest + 1), so a queue keeps its
        # order; an id freed by deleting the newest rows may come back, so a settle names
        # its notification (`sqlite_outbox._ROW`), never its id alone.
        """CREATE TABLE push_outbox_4 (
            id INTEGER PRIMARY KEY,
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            task_id TEXT NOT NULL,
            config_id TEXT NOT NULL,
            event_id TEXT NOT NULL,
            payload TEXT NOT NULL,
            state INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            due_at INTEGER NOT NULL,
            lease_until INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            created_at INTEGER NOT NULL
        )""",
        """INSERT INTO push_outbox_4 (id, tenant, owner, task_id, config_id, event_id, payload,
            state, attempts, due_at, lease_until, last_error, created_at)
        SELECT id, tenant, owner, task_id, config_id, event_id, payload, state, attempts,
            due_at, lease_until, last_error, created_at FROM push_outbox""",
        "DROP TABLE push_outbox",
        "ALTER TABLE push_outbox_4 RENAME TO push_outbox",
        """CREATE INDEX push_outbox_queue
            ON push_outbox (tenant, owner, task_id, config_id, state, id)""",
        "CREATE INDEX push_outbox_due ON push_outbox (state, due_at)",
    ),
    (
        # Version 5: the stores' own row format (`row_format`), no longer A2A 1.0 wire
        # JSON, so a change to a codec never changes a database. Every row is rewritten
        # here (`row_upgrade`); `parley_schema` keeps the format with this version.
        "ALTER TABLE parley_schema ADD COLUMN row_format INTEGER",
        row_upgrade.upgrade_sqlite,
        row_upgrade.RECORD,
    ),
)
