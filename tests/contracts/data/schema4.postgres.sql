--
-- PostgreSQL database dump
--

\restrict xYzbJxfV7dGcfie1HmhyfNwqV1T0jIeSfn0z8y53svhjwQKCe1sb2EVvUbU5fdK

-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: parley_fixture; Type: SCHEMA; Schema: -; Owner: -
--

CREATE SCHEMA parley_fixture;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: artifact_chunks; Type: TABLE; Schema: parley_fixture; Owner: -
--

CREATE TABLE parley_fixture.artifact_chunks (
    tenant text NOT NULL,
    owner text NOT NULL,
    task_id text NOT NULL COLLATE pg_catalog."C",
    "position" integer NOT NULL,
    seq bigint NOT NULL,
    parts json NOT NULL
);


--
-- Name: artifacts; Type: TABLE; Schema: parley_fixture; Owner: -
--

CREATE TABLE parley_fixture.artifacts (
    tenant text NOT NULL,
    owner text NOT NULL,
    task_id text NOT NULL COLLATE pg_catalog."C",
    artifact_id text NOT NULL,
    "position" integer NOT NULL,
    header json NOT NULL
);


--
-- Name: parley_schema; Type: TABLE; Schema: parley_fixture; Owner: -
--

CREATE TABLE parley_fixture.parley_schema (
    version integer NOT NULL,
    applied_at timestamp with time zone NOT NULL
);


--
-- Name: push_configs; Type: TABLE; Schema: parley_fixture; Owner: -
--

CREATE TABLE parley_fixture.push_configs (
    tenant text NOT NULL,
    owner text NOT NULL,
    task_id text NOT NULL COLLATE pg_catalog."C",
    config_id text NOT NULL,
    seq bigint NOT NULL,
    body json NOT NULL,
    protocol text
);


--
-- Name: push_configs_seq_seq; Type: SEQUENCE; Schema: parley_fixture; Owner: -
--

ALTER TABLE parley_fixture.push_configs ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME parley_fixture.push_configs_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: push_outbox; Type: TABLE; Schema: parley_fixture; Owner: -
--

CREATE TABLE parley_fixture.push_outbox (
    id bigint NOT NULL,
    tenant text NOT NULL,
    owner text NOT NULL,
    task_id text NOT NULL COLLATE pg_catalog."C",
    config_id text NOT NULL,
    event_id text NOT NULL,
    payload json NOT NULL,
    state smallint DEFAULT 0 NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    due_at bigint NOT NULL,
    lease_until bigint DEFAULT 0 NOT NULL,
    last_error text,
    created_at bigint NOT NULL
);


--
-- Name: push_outbox_id_seq; Type: SEQUENCE; Schema: parley_fixture; Owner: -
--

ALTER TABLE parley_fixture.push_outbox ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME parley_fixture.push_outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: task_messages; Type: TABLE; Schema: parley_fixture; Owner: -
--

CREATE TABLE parley_fixture.task_messages (
    tenant text NOT NULL,
    owner text NOT NULL,
    task_id text NOT NULL COLLATE pg_catalog."C",
    "position" integer NOT NULL,
    body json NOT NULL
);


--
-- Name: tasks; Type: TABLE; Schema: parley_fixture; Owner: -
--

CREATE TABLE parley_fixture.tasks (
    tenant text NOT NULL,
    owner text NOT NULL,
    id text NOT NULL COLLATE pg_catalog."C",
    context_id text NOT NULL,
    state smallint NOT NULL,
    status json NOT NULL,
    sort_ts bigint NOT NULL,
    metadata json,
    version bigint NOT NULL,
    history_count integer NOT NULL,
    event_count bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    generation bigint DEFAULT 0 NOT NULL
);


--
-- Data for Name: artifact_chunks; Type: TABLE DATA; Schema: parley_fixture; Owner: -
--

INSERT INTO parley_fixture.artifact_chunks VALUES ('', 'alice', 'rich', 0, 0, '[{"text":"first "}]');
INSERT INTO parley_fixture.artifact_chunks VALUES ('', 'alice', 'rich', 0, 1, '[{"text":"second "}]');
INSERT INTO parley_fixture.artifact_chunks VALUES ('', 'alice', 'rich', 0, 3, '[{"text":"again"}]');
INSERT INTO parley_fixture.artifact_chunks VALUES ('', 'alice', 'rich', 1, 4, '[{"text":"replaced"}]');
INSERT INTO parley_fixture.artifact_chunks VALUES ('', 'alice', 'rich', 1, 5, '[{"text":" and more"}]');
INSERT INTO parley_fixture.artifact_chunks VALUES ('', 'alice', 'bare', 0, 0, '[]');


--
-- Data for Name: artifacts; Type: TABLE DATA; Schema: parley_fixture; Owner: -
--

INSERT INTO parley_fixture.artifacts VALUES ('', 'alice', 'rich', 'a-first', 0, '{"artifactId":"a-first","name":"summary","description":"the summary","metadata":{"pages":3},"extensions":["https://example.com/ext/v1"]}');
INSERT INTO parley_fixture.artifacts VALUES ('', 'alice', 'rich', 'a-second', 1, '{"artifactId":"a-second"}');
INSERT INTO parley_fixture.artifacts VALUES ('', 'alice', 'bare', '', 0, '{"artifactId":""}');


--
-- Data for Name: parley_schema; Type: TABLE DATA; Schema: parley_fixture; Owner: -
--

INSERT INTO parley_fixture.parley_schema VALUES (1, '2026-11-27 01:29:10.026315+00');
INSERT INTO parley_fixture.parley_schema VALUES (2, '2026-11-27 01:29:10.069583+00');
INSERT INTO parley_fixture.parley_schema VALUES (3, '2026-11-27 01:29:10.080016+00');
INSERT INTO parley_fixture.parley_schema VALUES (4, '2026-11-27 01:29:10.080633+00');


--
-- Data for Name: push_configs; Type: TABLE DATA; Schema: parley_fixture; Owner: -
--

INSERT INTO parley_fixture.push_configs OVERRIDING SYSTEM VALUE VALUES ('', 'alice', 'pushed', 'hook-1', 1, '{"id":"hook-1","taskId":"pushed","url":"https://hooks.example.com/a2a","token":"tok-1","authentication":{"scheme":"Bearer","credentials":"secret"}}', '1.0');
INSERT INTO parley_fixture.push_configs OVERRIDING SYSTEM VALUE VALUES ('', 'alice', 'pushed', 'hook-2', 2, '{"id":"hook-2","taskId":"pushed","url":"https://other.example.com/","token":"tok-1"}', '0.3');
INSERT INTO parley_fixture.push_configs OVERRIDING SYSTEM VALUE VALUES ('tenant-2', 'alice', 'pushed', 'hook-1', 3, '{"tenant":"tenant-2","id":"hook-1","taskId":"pushed","url":"https://hooks.example.com/a2a","token":"tok-1","authentication":{"scheme":"Bearer","credentials":"secret"}}', '1.0');
INSERT INTO parley_fixture.push_configs OVERRIDING SYSTEM VALUE VALUES ('tenant-2', 'alice', 'pushed', 'hook-2', 4, '{"tenant":"tenant-2","id":"hook-2","taskId":"pushed","url":"https://other.example.com/","token":"tok-1"}', '0.3');
INSERT INTO parley_fixture.push_configs OVERRIDING SYSTEM VALUE VALUES ('', 'bob', 'page-0', 'b', 5, '{"id":"b","taskId":"page-0","url":"https://bob.example.com/"}', '1.0');


--
-- Data for Name: push_outbox; Type: TABLE DATA; Schema: parley_fixture; Owner: -
--

INSERT INTO parley_fixture.push_outbox OVERRIDING SYSTEM VALUE VALUES (1, '', 'alice', 'pushed', 'hook-1', 'pushed.1.0', '{"task":{"id":"pushed","contextId":"ctx-push","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:50:00.000Z"},"history":[{"messageId":"m-pushed","role":"ROLE_USER","parts":[{"text":"pushed"}],"contextId":"ctx-push","taskId":"pushed"}]}}', 0, 0, 1742063400000000, 0, NULL, 1742063400000000);
INSERT INTO parley_fixture.push_outbox OVERRIDING SYSTEM VALUE VALUES (2, '', 'alice', 'pushed', 'hook-1', 'pushed.2.0', '{"statusUpdate":{"taskId":"pushed","contextId":"ctx-push","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-03-15T19:30:00.000Z"}}}', 0, 0, 4611686018427387904, 0, NULL, 1742063400000000);
INSERT INTO parley_fixture.push_outbox OVERRIDING SYSTEM VALUE VALUES (3, 'tenant-2', 'alice', 'pushed', 'hook-1', 'pushed.1.0', '{"task":{"id":"pushed","contextId":"ctx-push","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:50:00.000Z"},"history":[{"messageId":"m-pushed","role":"ROLE_USER","parts":[{"text":"pushed"}],"contextId":"ctx-push","taskId":"pushed"}]}}', 0, 0, 1742063400000000, 0, NULL, 1742063400000000);
INSERT INTO parley_fixture.push_outbox OVERRIDING SYSTEM VALUE VALUES (4, 'tenant-2', 'alice', 'pushed', 'hook-1', 'pushed.2.0', '{"statusUpdate":{"taskId":"pushed","contextId":"ctx-push","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-03-15T19:30:00.000Z"}}}', 0, 0, 4611686018427387904, 0, NULL, 1742063400000000);


--
-- Data for Name: task_messages; Type: TABLE DATA; Schema: parley_fixture; Owner: -
--

INSERT INTO parley_fixture.task_messages VALUES ('', 'alice', 'rich', 0, '{"messageId":"m-user","role":"ROLE_USER","parts":[{"text":"Summarise these.","mediaType":"text/plain","metadata":{"k":[1,2]}},{"raw":"AAFiaW5hcnn/","mediaType":"application/octet-stream"},{"url":"https://example.com/report.pdf","filename":"report.pdf"},{"data":{"rows":[{"a":1.5,"b":null}],"ok":true},"filename":"d.json"}],"contextId":"ctx-rich","taskId":"rich","metadata":{"source":"fixture","nested":{"deep":["x"]}},"extensions":["https://example.com/ext/v1"],"referenceTaskIds":["untimed"]}');
INSERT INTO parley_fixture.task_messages VALUES ('', 'alice', 'rich', 1, '{"messageId":"m-note","role":"ROLE_AGENT","parts":[{"text":"Working on it"}],"contextId":"ctx-rich","taskId":"rich"}');
INSERT INTO parley_fixture.task_messages VALUES ('', 'alice', 'untimed', 0, '{"messageId":"m-untimed","role":"ROLE_USER","parts":[{"text":"untimed"}],"contextId":"ctx-rich","taskId":"untimed"}');
INSERT INTO parley_fixture.task_messages VALUES ('', 'alice', 'bare', 0, '{"messageId":"","role":"ROLE_AGENT","parts":[]}');
INSERT INTO parley_fixture.task_messages VALUES ('', 'bob', 'page-0', 0, '{"messageId":"m-page-0","role":"ROLE_USER","parts":[{"text":"page-0"}],"contextId":"ctx-page","taskId":"page-0"}');
INSERT INTO parley_fixture.task_messages VALUES ('tenant-2', 'alice', 'page-0', 0, '{"messageId":"m-page-0","role":"ROLE_USER","parts":[{"text":"page-0"}],"contextId":"ctx-page","taskId":"page-0"}');
INSERT INTO parley_fixture.task_messages VALUES ('', 'bob', 'page-1', 0, '{"messageId":"m-page-1","role":"ROLE_USER","parts":[{"text":"page-1"}],"contextId":"ctx-page","taskId":"page-1"}');
INSERT INTO parley_fixture.task_messages VALUES ('tenant-2', 'alice', 'page-1', 0, '{"messageId":"m-page-1","role":"ROLE_USER","parts":[{"text":"page-1"}],"contextId":"ctx-page","taskId":"page-1"}');
INSERT INTO parley_fixture.task_messages VALUES ('', 'bob', 'page-2', 0, '{"messageId":"m-page-2","role":"ROLE_USER","parts":[{"text":"page-2"}],"contextId":"ctx-page","taskId":"page-2"}');
INSERT INTO parley_fixture.task_messages VALUES ('tenant-2', 'alice', 'page-2', 0, '{"messageId":"m-page-2","role":"ROLE_USER","parts":[{"text":"page-2"}],"contextId":"ctx-page","taskId":"page-2"}');
INSERT INTO parley_fixture.task_messages VALUES ('', 'bob', 'page-3', 0, '{"messageId":"m-page-3","role":"ROLE_USER","parts":[{"text":"page-3"}],"contextId":"ctx-page","taskId":"page-3"}');
INSERT INTO parley_fixture.task_messages VALUES ('tenant-2', 'alice', 'page-3', 0, '{"messageId":"m-page-3","role":"ROLE_USER","parts":[{"text":"page-3"}],"contextId":"ctx-page","taskId":"page-3"}');
INSERT INTO parley_fixture.task_messages VALUES ('', 'bob', 'page-4', 0, '{"messageId":"m-page-4","role":"ROLE_USER","parts":[{"text":"page-4"}],"contextId":"ctx-page","taskId":"page-4"}');
INSERT INTO parley_fixture.task_messages VALUES ('tenant-2', 'alice', 'page-4', 0, '{"messageId":"m-page-4","role":"ROLE_USER","parts":[{"text":"page-4"}],"contextId":"ctx-page","taskId":"page-4"}');
INSERT INTO parley_fixture.task_messages VALUES ('', 'alice', 'pushed', 0, '{"messageId":"m-pushed","role":"ROLE_USER","parts":[{"text":"pushed"}],"contextId":"ctx-push","taskId":"pushed"}');
INSERT INTO parley_fixture.task_messages VALUES ('tenant-2', 'alice', 'pushed', 0, '{"messageId":"m-pushed","role":"ROLE_USER","parts":[{"text":"pushed"}],"contextId":"ctx-push","taskId":"pushed"}');


--
-- Data for Name: tasks; Type: TABLE DATA; Schema: parley_fixture; Owner: -
--

INSERT INTO parley_fixture.tasks VALUES ('', 'alice', 'rich', 'ctx-rich', 3, '{"state":"TASK_STATE_COMPLETED","message":{"messageId":"done","role":"ROLE_AGENT","parts":[{"text":"done"}],"contextId":"ctx-rich","taskId":"rich"},"timestamp":"2025-03-15T18:35:00.000Z"}', 1742063700000000, '{"priority":"high","tags":["a","b"],"why":"finished"}', 6, 2, 6, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 7);
INSERT INTO parley_fixture.tasks VALUES ('', 'alice', 'untimed', 'ctx-rich', 1, '{"state":"TASK_STATE_SUBMITTED"}', -9223372036854775808, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('', 'alice', 'bare', 'ctx-bare', 6, '{"state":"TASK_STATE_INPUT_REQUIRED","timestamp":"2025-03-15T18:30:00.000Z"}', 1742063400000000, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('', 'bob', 'page-0', 'ctx-page', 2, '{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:40:00.000Z"}', 1742064000000000, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('tenant-2', 'alice', 'page-0', 'ctx-elsewhere', 2, '{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:40:00.000Z"}', 1742064000000000, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('', 'bob', 'page-1', 'ctx-page', 2, '{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:41:00.000Z"}', 1742064060000000, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('tenant-2', 'alice', 'page-1', 'ctx-elsewhere', 2, '{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:41:00.000Z"}', 1742064060000000, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('', 'bob', 'page-2', 'ctx-page', 2, '{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:42:00.000Z"}', 1742064120000000, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('tenant-2', 'alice', 'page-2', 'ctx-elsewhere', 2, '{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:42:00.000Z"}', 1742064120000000, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('', 'bob', 'page-3', 'ctx-page', 2, '{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:40:00.000Z"}', 1742064000000000, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('tenant-2', 'alice', 'page-3', 'ctx-elsewhere', 2, '{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:40:00.000Z"}', 1742064000000000, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('', 'bob', 'page-4', 'ctx-page', 2, '{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:41:00.000Z"}', 1742064060000000, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('tenant-2', 'alice', 'page-4', 'ctx-elsewhere', 2, '{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:41:00.000Z"}', 1742064060000000, NULL, 1, 1, 0, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 0);
INSERT INTO parley_fixture.tasks VALUES ('', 'alice', 'pushed', 'ctx-push', 3, '{"state":"TASK_STATE_COMPLETED","timestamp":"2025-03-15T19:30:00.000Z"}', 1742067000000000, NULL, 2, 1, 1, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 1);
INSERT INTO parley_fixture.tasks VALUES ('tenant-2', 'alice', 'pushed', 'ctx-push', 3, '{"state":"TASK_STATE_COMPLETED","timestamp":"2025-03-15T19:30:00.000Z"}', 1742067000000000, NULL, 2, 1, 1, '2025-03-15 18:30:00+00', '2025-03-15 18:30:00+00', 1);


--
-- Name: push_configs_seq_seq; Type: SEQUENCE SET; Schema: parley_fixture; Owner: -
--

SELECT pg_catalog.setval('parley_fixture.push_configs_seq_seq', 5, true);


--
-- Name: push_outbox_id_seq; Type: SEQUENCE SET; Schema: parley_fixture; Owner: -
--

SELECT pg_catalog.setval('parley_fixture.push_outbox_id_seq', 4, true);


--
-- Name: artifact_chunks artifact_chunks_pkey; Type: CONSTRAINT; Schema: parley_fixture; Owner: -
--

ALTER TABLE ONLY parley_fixture.artifact_chunks
    ADD CONSTRAINT artifact_chunks_pkey PRIMARY KEY (tenant, owner, task_id, "position", seq);


--
-- Name: artifacts artifacts_pkey; Type: CONSTRAINT; Schema: parley_fixture; Owner: -
--

ALTER TABLE ONLY parley_fixture.artifacts
    ADD CONSTRAINT artifacts_pkey PRIMARY KEY (tenant, owner, task_id, "position");


--
-- Name: parley_schema parley_schema_pkey; Type: CONSTRAINT; Schema: parley_fixture; Owner: -
--

ALTER TABLE ONLY parley_fixture.parley_schema
    ADD CONSTRAINT parley_schema_pkey PRIMARY KEY (version);


--
-- Name: push_configs push_configs_pkey; Type: CONSTRAINT; Schema: parley_fixture; Owner: -
--

ALTER TABLE ONLY parley_fixture.push_configs
    ADD CONSTRAINT push_configs_pkey PRIMARY KEY (tenant, owner, task_id, config_id);


--
-- Name: push_outbox push_outbox_pkey; Type: CONSTRAINT; Schema: parley_fixture; Owner: -
--

ALTER TABLE ONLY parley_fixture.push_outbox
    ADD CONSTRAINT push_outbox_pkey PRIMARY KEY (id);


--
-- Name: task_messages task_messages_pkey; Type: CONSTRAINT; Schema: parley_fixture; Owner: -
--

ALTER TABLE ONLY parley_fixture.task_messages
    ADD CONSTRAINT task_messages_pkey PRIMARY KEY (tenant, owner, task_id, "position");


--
-- Name: tasks tasks_pkey; Type: CONSTRAINT; Schema: parley_fixture; Owner: -
--

ALTER TABLE ONLY parley_fixture.tasks
    ADD CONSTRAINT tasks_pkey PRIMARY KEY (tenant, owner, id);


--
-- Name: push_outbox_due; Type: INDEX; Schema: parley_fixture; Owner: -
--

CREATE INDEX push_outbox_due ON parley_fixture.push_outbox USING btree (state, due_at);


--
-- Name: push_outbox_queue; Type: INDEX; Schema: parley_fixture; Owner: -
--

CREATE INDEX push_outbox_queue ON parley_fixture.push_outbox USING btree (tenant, owner, task_id, config_id, state, id);


--
-- Name: tasks_active; Type: INDEX; Schema: parley_fixture; Owner: -
--

CREATE INDEX tasks_active ON parley_fixture.tasks USING btree (state) WHERE (state = ANY (ARRAY[1, 2]));


--
-- Name: tasks_by_context; Type: INDEX; Schema: parley_fixture; Owner: -
--

CREATE INDEX tasks_by_context ON parley_fixture.tasks USING btree (tenant, owner, context_id, sort_ts DESC, id DESC);


--
-- Name: tasks_by_state; Type: INDEX; Schema: parley_fixture; Owner: -
--

CREATE INDEX tasks_by_state ON parley_fixture.tasks USING btree (tenant, owner, state, sort_ts DESC, id DESC);


--
-- Name: tasks_by_time; Type: INDEX; Schema: parley_fixture; Owner: -
--

CREATE INDEX tasks_by_time ON parley_fixture.tasks USING btree (tenant, owner, sort_ts DESC, id DESC);


--
-- Name: tasks_finished; Type: INDEX; Schema: parley_fixture; Owner: -
--

CREATE INDEX tasks_finished ON parley_fixture.tasks USING btree (updated_at) WHERE (state = ANY (ARRAY[3, 4, 5, 7]));


--
-- Name: artifact_chunks artifact_chunks_tenant_owner_task_id_position_fkey; Type: FK CONSTRAINT; Schema: parley_fixture; Owner: -
--

ALTER TABLE ONLY parley_fixture.artifact_chunks
    ADD CONSTRAINT artifact_chunks_tenant_owner_task_id_position_fkey FOREIGN KEY (tenant, owner, task_id, "position") REFERENCES parley_fixture.artifacts(tenant, owner, task_id, "position") ON DELETE CASCADE;


--
-- Name: artifacts artifacts_tenant_owner_task_id_fkey; Type: FK CONSTRAINT; Schema: parley_fixture; Owner: -
--

ALTER TABLE ONLY parley_fixture.artifacts
    ADD CONSTRAINT artifacts_tenant_owner_task_id_fkey FOREIGN KEY (tenant, owner, task_id) REFERENCES parley_fixture.tasks(tenant, owner, id) ON DELETE CASCADE;


--
-- Name: task_messages task_messages_tenant_owner_task_id_fkey; Type: FK CONSTRAINT; Schema: parley_fixture; Owner: -
--

ALTER TABLE ONLY parley_fixture.task_messages
    ADD CONSTRAINT task_messages_tenant_owner_task_id_fkey FOREIGN KEY (tenant, owner, task_id) REFERENCES parley_fixture.tasks(tenant, owner, id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--

\unrestrict xYzbJxfV7dGcfie1HmhyfNwqV1T0jIeSfn0z8y53svhjwQKCe1sb2EVvUbU5fdK

