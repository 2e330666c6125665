"""The SQL of the PostgreSQL stores: statements composed of constant fragments only (every
value is a bound parameter), and the writes of a save's appended rows.
"""

# ruff: noqa: S608

from __future__ import annotations

from typing import TYPE_CHECKING

from parley.server.push.outbox import BEHIND
from parley.server.stores import rows
from parley.server.stores.migrations import TERMINAL_STATES, sql_list

if TYPE_CHECKING:
    from parley.server.stores.postgres_db import Connection

Key = tuple[str, str, str]

KEY = "tenant = $1 AND owner = $2 AND id = $3"
CHILD = "tenant = $1 AND owner = $2 AND task_id = $3"
INSERT_TASK = """INSERT INTO tasks (tenant, owner, id, context_id, state, status, sort_ts,
    metadata, version, history_count, event_count, created_at, updated_at, generation)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, 0, $10, $10, $11) ON CONFLICT DO NOTHING"""
UPDATE_TASK = f"""UPDATE tasks SET state = $4, status = $5, sort_ts = $6, metadata = $7,
    version = version + 1, history_count = $8, event_count = event_count + $9, updated_at = $10,
    generation = $11 WHERE {KEY}"""
UPSERT_HEADER = """INSERT INTO artifacts (tenant, owner, task_id, artifact_id, position, header)
    VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant, owner, task_id, position)
    DO UPDATE SET artifact_id = excluded.artifact_id, header = excluded.header"""
INSERT_CHUNK = """INSERT INTO artifact_chunks (tenant, owner, task_id, position, seq, parts)
    VALUES ($1, $2, $3, $4, $5, $6)"""
INSERT_MESSAGE = """INSERT INTO task_messages (tenant, owner, task_id, position, body)
    VALUES ($1, $2, $3, $4, $5)"""
HISTORY = """(SELECT json_agg(m.body ORDER BY m.position) FROM task_messages m
    WHERE m.tenant = t.tenant AND m.owner = t.owner AND m.task_id = t.id
    AND m.position >= {first})"""
ARTIFACTS = """(SELECT json_agg(json_build_array(a.header, (
        SELECT json_agg(c.parts ORDER BY c.seq) FROM artifact_chunks c
        WHERE c.tenant = a.tenant AND c.owner = a.owner AND c.task_id = a.task_id
        AND c.position = a.position)) ORDER BY a.position)
    FROM artifacts a WHERE a.tenant = t.tenant AND a.owner = t.owner AND a.task_id = t.id)"""
GET = f"""SELECT t.context_id, t.status, t.metadata, t.version, t.generation,
    CASE WHEN $4::bigint = 0 THEN NULL
    ELSE {HISTORY.format(first="t.history_count - coalesce($4::bigint, t.history_count)")} END,
    {ARTIFACTS}
    FROM tasks t WHERE t.tenant = $1 AND t.owner = $2 AND t.id = $3"""
RECORD = f"""INSERT INTO push_outbox (tenant, owner, task_id, config_id, event_id, payload,
        due_at, created_at)
    SELECT $1, $2, $3, p.config_id, n.event_id, n.payload,
        CASE WHEN n.i = 1 AND NOT EXISTS (SELECT 1 FROM push_outbox q WHERE q.tenant = $1
            AND q.owner = $2 AND q.task_id = $3 AND q.config_id = p.config_id AND q.state = 0
            FOR SHARE)
        THEN {{now}} ELSE {BEHIND} END, {{now}}
    FROM push_configs p CROSS JOIN unnest({{ids}}::text[], {{bodies}}::json[])
        WITH ORDINALITY AS n(event_id, payload, i)
    WHERE p.tenant = $1 AND p.owner = $2 AND p.task_id = $3 AND {{applied}}
    ORDER BY p.seq, n.i RETURNING 1"""
"""Queue a write's notifications (ids and bodies as arrays) for each push config of the
task $1..$3, config by config in creation order, each in event order (ids follow); only a
new queue's first is due now, the others wait BEHIND (`push.outbox`). The pending row seen
is locked FOR SHARE: a settle of that head running meanwhile (which makes its next due)
is waited for and the check re-read, so a row is never left BEHIND a settled head."""

CREATE = f"""WITH made AS (
        {INSERT_TASK} RETURNING 1),
    outbox AS ({
    RECORD.format(applied="EXISTS (SELECT 1 FROM made)", ids="$12", bodies="$13", now="$14")
})
    SELECT (SELECT count(*) FROM made), (SELECT count(*) FROM outbox)"""
"""A new task and its first notification (to configs put before it, with the message that
created it) in one statement."""

CREATE_CONFIGURED = f"""WITH made AS (
        {INSERT_TASK} RETURNING 1),
    configs AS (
        INSERT INTO push_configs (tenant, owner, task_id, config_id, body, protocol)
        SELECT $1, $2, $3, c.config_id, c.body, c.protocol
        FROM unnest($15::text[], $16::json[], $17::text[]) AS c(config_id, body, protocol)
        WHERE EXISTS (SELECT 1 FROM made)
        ON CONFLICT (tenant, owner, task_id, config_id)
        DO UPDATE SET body = excluded.body, protocol = excluded.protocol
        RETURNING config_id, seq),
    outbox AS (
        INSERT INTO push_outbox (tenant, owner, task_id, config_id, event_id, payload,
            due_at, created_at)
        SELECT $1, $2, $3, c.config_id, n.event_id, n.payload,
            CASE WHEN n.i = 1 THEN $14 ELSE {BEHIND} END, $14
        FROM configs c CROSS JOIN unnest($12::text[], $13::json[])
            WITH ORDINALITY AS n(event_id, payload, i)
        ORDER BY c.seq, n.i RETURNING 1)
    SELECT (SELECT count(*) FROM made), (SELECT count(*) FROM outbox)"""
"""`CREATE` with the configs given with the task ($15..$17: ids, bodies, protocols; no two
with one id): the task, its configs and their first notifications in one statement, one
round trip. A new task's queues are new: each one's first notification is due at once."""

RECORD_AFTER = RECORD.format(applied="TRUE", ids="$4", bodies="$5", now="$6")

SAVE_CTES = f"""WITH up AS (
        {UPDATE_TASK} AND version = $12 RETURNING 1),
    headers AS (
        INSERT INTO artifacts (tenant, owner, task_id, artifact_id, position, header)
        SELECT $1, $2, $3, h.artifact_id, h.position, h.header
        FROM unnest($13::text[], $14::int[], $15::json[]) AS h(artifact_id, position, header)
        WHERE EXISTS (SELECT 1 FROM up)
        ON CONFLICT (tenant, owner, task_id, position)
        DO UPDATE SET artifact_id = excluded.artifact_id, header = excluded.header),
    dropped AS (
        DELETE FROM artifact_chunks WHERE {CHILD} AND position = ANY($16::int[])
        AND EXISTS (SELECT 1 FROM up)),
    chunks AS (
        INSERT INTO artifact_chunks (tenant, owner, task_id, position, seq, parts)
        SELECT $1, $2, $3, c.position, c.seq, c.parts
        FROM unnest($17::int[], $18::bigint[], $19::json[]) AS c(position, seq, parts)
        WHERE EXISTS (SELECT 1 FROM up)),
    messages AS (
        INSERT INTO task_messages (tenant, owner, task_id, position, body)
        SELECT $1, $2, $3, m.position, m.body
        FROM unnest($20::int[], $21::json[]) AS m(position, body)
        WHERE EXISTS (SELECT 1 FROM up))"""
SAVE = (
    SAVE_CTES
    + f""",
    outbox AS ({
        RECORD.format(applied="EXISTS (SELECT 1 FROM up)", ids="$22", bodies="$23", now="$24")
    })
    SELECT (SELECT count(*) FROM up), (SELECT count(*) FROM outbox)"""
)
"""A whole save in one statement (one round trip), for a task whose counts are known:
the update applies only at the expected version, and the rows only if it applied, the
notifications of the task's push configs (`RECORD`) included.
Statements in one WITH see one snapshot, so the DELETE of replaced chunks removes only
earlier chunks, never the ones inserted beside it."""

CONFIGS = "SELECT 1 FROM push_configs p WHERE p.tenant = $1 AND p.owner = $2 AND p.task_id = $3"
SAVE_BARE = (
    SAVE_CTES.replace(
        "AND version = $12 RETURNING 1",
        f"AND version = $12 AND NOT EXISTS ({CONFIGS}) RETURNING 1",
    )
    + f"""
    SELECT (SELECT count(*) FROM up), EXISTS ({CONFIGS})"""
)
"""`SAVE` for a task that had no push config at its last write: no notifications passed
(none encoded), and the update applies only if the task still has none; else it answers
(0, true) and the save is made again with them. So a task without configs pays one
`EXISTS` per save, and the first save after a config appears, one more round trip."""

PURGE = f"""WITH gone AS (
        DELETE FROM tasks WHERE (tenant, owner, id) IN (
            SELECT tenant, owner, id FROM tasks
            WHERE state IN {sql_list(TERMINAL_STATES)} AND updated_at < $1
            ORDER BY updated_at LIMIT $2)
        RETURNING tenant, owner, id),
    configs AS (
        DELETE FROM push_configs p USING gone g
        WHERE p.tenant = g.tenant AND p.owner = g.owner AND p.task_id = g.id),
    notifications AS (
        DELETE FROM push_outbox o USING gone g
        WHERE o.tenant = g.tenant AND o.owner = g.owner AND o.task_id = g.id)
    SELECT count(*) FROM gone"""


async def write_rows(connection: Connection, key: Key, changes: rows.Rows) -> None:
    if changes.headers:
        await connection.executemany(
            UPSERT_HEADER, [(*key, h.artifact_id, h.position, h.header) for h in changes.headers]
        )
    for chunk in changes.chunks:
        if chunk.replace:
            await connection.execute(
                f"DELETE FROM artifact_chunks WHERE {CHILD} AND position = $4",
                *key,
                chunk.position,
            )
        await connection.execute(INSERT_CHUNK, *key, chunk.position, chunk.seq, chunk.parts)
    if changes.messages:
        await connection.executemany(
            INSERT_MESSAGE, [(*key, *message) for message in changes.messages]
        )


def save_arguments(changes: rows.Rows) -> tuple[object, ...]:
    """$13..$21 of `SAVE`: headers, replaced positions, chunks, messages as arrays.
    A chunk that replaces its artifact's parts supersedes the earlier chunks of the save."""
    replaced = {c.position: i for i, c in enumerate(changes.chunks) if c.replace}
    chunks = [c for i, c in enumerate(changes.chunks) if i >= replaced.get(c.position, -1)]
    headers = changes.headers
    return (
        [h.artifact_id for h in headers],
        [h.position for h in headers],
        [h.header for h in headers],
        list(replaced),
        [c.position for c in chunks],
        [c.seq for c in chunks],
        [c.parts for c in chunks],
        [position for position, _ in changes.messages],
        [body for _, body in changes.messages],
    )
