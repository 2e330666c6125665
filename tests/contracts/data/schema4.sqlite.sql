BEGIN TRANSACTION;
CREATE TABLE artifact_chunks (
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            task_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            parts TEXT NOT NULL,
            PRIMARY KEY (tenant, owner, task_id, position, seq),
            FOREIGN KEY (tenant, owner, task_id, position)
                REFERENCES artifacts (tenant, owner, task_id, position) ON DELETE CASCADE
        );
INSERT INTO "artifact_chunks" VALUES('','alice','rich',0,0,'[{"text":"first "}]');
INSERT INTO "artifact_chunks" VALUES('','alice','rich',0,1,'[{"text":"second "}]');
INSERT INTO "artifact_chunks" VALUES('','alice','rich',0,3,'[{"text":"again"}]');
INSERT INTO "artifact_chunks" VALUES('','alice','rich',1,4,'[{"text":"replaced"}]');
INSERT INTO "artifact_chunks" VALUES('','alice','rich',1,5,'[{"text":" and more"}]');
INSERT INTO "artifact_chunks" VALUES('','alice','bare',0,0,'[]');
CREATE TABLE artifacts (
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            task_id TEXT NOT NULL,
            artifact_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            header TEXT NOT NULL,
            PRIMARY KEY (tenant, owner, task_id, position),
            FOREIGN KEY (tenant, owner, task_id) REFERENCES tasks (tenant, owner, id)
                ON DELETE CASCADE
        );
INSERT INTO "artifacts" VALUES('','alice','rich','a-first',0,'{"artifactId":"a-first","name":"summary","description":"the summary","metadata":{"pages":3},"extensions":["https://example.com/ext/v1"]}');
INSERT INTO "artifacts" VALUES('','alice','rich','a-second',1,'{"artifactId":"a-second"}');
INSERT INTO "artifacts" VALUES('','alice','bare','',0,'{"artifactId":""}');
CREATE TABLE parley_schema (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);
INSERT INTO "parley_schema" VALUES(1,'2026-11-27T01:29:09.519464+00:00');
INSERT INTO "parley_schema" VALUES(2,'2026-11-27T01:29:09.520018+00:00');
INSERT INTO "parley_schema" VALUES(3,'2026-11-27T01:29:09.520333+00:00');
INSERT INTO "parley_schema" VALUES(4,'2026-11-27T01:29:09.526254+00:00');
CREATE TABLE push_configs (
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            task_id TEXT NOT NULL,
            config_id TEXT NOT NULL,
            body TEXT NOT NULL, protocol TEXT,
            UNIQUE (tenant, owner, task_id, config_id)
        );
INSERT INTO "push_configs" VALUES('','alice','pushed','hook-1','{"id":"hook-1","taskId":"pushed","url":"https://hooks.example.com/a2a","token":"tok-1","authentication":{"scheme":"Bearer","credentials":"secret"}}','1.0');
INSERT INTO "push_configs" VALUES('','alice','pushed','hook-2','{"id":"hook-2","taskId":"pushed","url":"https://other.example.com/","token":"tok-1"}','0.3');
INSERT INTO "push_configs" VALUES('tenant-2','alice','pushed','hook-1','{"tenant":"tenant-2","id":"hook-1","taskId":"pushed","url":"https://hooks.example.com/a2a","token":"tok-1","authentication":{"scheme":"Bearer","credentials":"secret"}}','1.0');
INSERT INTO "push_configs" VALUES('tenant-2','alice','pushed','hook-2','{"tenant":"tenant-2","id":"hook-2","taskId":"pushed","url":"https://other.example.com/","token":"tok-1"}','0.3');
INSERT INTO "push_configs" VALUES('','bob','page-0','b','{"id":"b","taskId":"page-0","url":"https://bob.example.com/"}','1.0');
CREATE TABLE "push_outbox" (
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
        );
INSERT INTO "push_outbox" VALUES(1,'','alice','pushed','hook-1','pushed.1.0','{"task":{"id":"pushed","contextId":"ctx-push","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:50:00.000Z"},"history":[{"messageId":"m-pushed","role":"ROLE_USER","parts":[{"text":"pushed"}],"contextId":"ctx-push","taskId":"pushed"}]}}',0,0,1742063400000000,0,NULL,1742063400000000);
INSERT INTO "push_outbox" VALUES(2,'','alice','pushed','hook-1','pushed.2.0','{"statusUpdate":{"taskId":"pushed","contextId":"ctx-push","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-03-15T19:30:00.000Z"}}}',0,0,4611686018427387904,0,NULL,1742063400000000);
INSERT INTO "push_outbox" VALUES(3,'tenant-2','alice','pushed','hook-1','pushed.1.0','{"task":{"id":"pushed","contextId":"ctx-push","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:50:00.000Z"},"history":[{"messageId":"m-pushed","role":"ROLE_USER","parts":[{"text":"pushed"}],"contextId":"ctx-push","taskId":"pushed"}]}}',0,0,1742063400000000,0,NULL,1742063400000000);
INSERT INTO "push_outbox" VALUES(4,'tenant-2','alice','pushed','hook-1','pushed.2.0','{"statusUpdate":{"taskId":"pushed","contextId":"ctx-push","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-03-15T19:30:00.000Z"}}}',0,0,4611686018427387904,0,NULL,1742063400000000);
CREATE TABLE task_messages (
            tenant TEXT NOT NULL,
            owner TEXT NOT NULL,
            task_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (tenant, owner, task_id, position),
            FOREIGN KEY (tenant, owner, task_id) REFERENCES tasks (tenant, owner, id)
                ON DELETE CASCADE
        );
INSERT INTO "task_messages" VALUES('','alice','rich',0,'{"messageId":"m-user","role":"ROLE_USER","parts":[{"text":"Summarise these.","mediaType":"text/plain","metadata":{"k":[1,2]}},{"raw":"AAFiaW5hcnn/","mediaType":"application/octet-stream"},{"url":"https://example.com/report.pdf","filename":"report.pdf"},{"data":{"rows":[{"a":1.5,"b":null}],"ok":true},"filename":"d.json"}],"contextId":"ctx-rich","taskId":"rich","metadata":{"source":"fixture","nested":{"deep":["x"]}},"extensions":["https://example.com/ext/v1"],"referenceTaskIds":["untimed"]}');
INSERT INTO "task_messages" VALUES('','alice','rich',1,'{"messageId":"m-note","role":"ROLE_AGENT","parts":[{"text":"Working on it"}],"contextId":"ctx-rich","taskId":"rich"}');
INSERT INTO "task_messages" VALUES('','alice','untimed',0,'{"messageId":"m-untimed","role":"ROLE_USER","parts":[{"text":"untimed"}],"contextId":"ctx-rich","taskId":"untimed"}');
INSERT INTO "task_messages" VALUES('','alice','bare',0,'{"messageId":"","role":"ROLE_AGENT","parts":[]}');
INSERT INTO "task_messages" VALUES('','bob','page-0',0,'{"messageId":"m-page-0","role":"ROLE_USER","parts":[{"text":"page-0"}],"contextId":"ctx-page","taskId":"page-0"}');
INSERT INTO "task_messages" VALUES('tenant-2','alice','page-0',0,'{"messageId":"m-page-0","role":"ROLE_USER","parts":[{"text":"page-0"}],"contextId":"ctx-page","taskId":"page-0"}');
INSERT INTO "task_messages" VALUES('','bob','page-1',0,'{"messageId":"m-page-1","role":"ROLE_USER","parts":[{"text":"page-1"}],"contextId":"ctx-page","taskId":"page-1"}');
INSERT INTO "task_messages" VALUES('tenant-2','alice','page-1',0,'{"messageId":"m-page-1","role":"ROLE_USER","parts":[{"text":"page-1"}],"contextId":"ctx-page","taskId":"page-1"}');
INSERT INTO "task_messages" VALUES('','bob','page-2',0,'{"messageId":"m-page-2","role":"ROLE_USER","parts":[{"text":"page-2"}],"contextId":"ctx-page","taskId":"page-2"}');
INSERT INTO "task_messages" VALUES('tenant-2','alice','page-2',0,'{"messageId":"m-page-2","role":"ROLE_USER","parts":[{"text":"page-2"}],"contextId":"ctx-page","taskId":"page-2"}');
INSERT INTO "task_messages" VALUES('','bob','page-3',0,'{"messageId":"m-page-3","role":"ROLE_USER","parts":[{"text":"page-3"}],"contextId":"ctx-page","taskId":"page-3"}');
INSERT INTO "task_messages" VALUES('tenant-2','alice','page-3',0,'{"messageId":"m-page-3","role":"ROLE_USER","parts":[{"text":"page-3"}],"contextId":"ctx-page","taskId":"page-3"}');
INSERT INTO "task_messages" VALUES('','bob','page-4',0,'{"messageId":"m-page-4","role":"ROLE_USER","parts":[{"text":"page-4"}],"contextId":"ctx-page","taskId":"page-4"}');
INSERT INTO "task_messages" VALUES('tenant-2','alice','page-4',0,'{"messageId":"m-page-4","role":"ROLE_USER","parts":[{"text":"page-4"}],"contextId":"ctx-page","taskId":"page-4"}');
INSERT INTO "task_messages" VALUES('','alice','pushed',0,'{"messageId":"m-pushed","role":"ROLE_USER","parts":[{"text":"pushed"}],"contextId":"ctx-push","taskId":"pushed"}');
INSERT INTO "task_messages" VALUES('tenant-2','alice','pushed',0,'{"messageId":"m-pushed","role":"ROLE_USER","parts":[{"text":"pushed"}],"contextId":"ctx-push","taskId":"pushed"}');
CREATE TABLE tasks (
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
            updated_at INTEGER NOT NULL, generation INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (tenant, owner, id)
        );
INSERT INTO "tasks" VALUES('','alice','rich','ctx-rich',3,'{"state":"TASK_STATE_COMPLETED","message":{"messageId":"done","role":"ROLE_AGENT","parts":[{"text":"done"}],"contextId":"ctx-rich","taskId":"rich"},"timestamp":"2025-03-15T18:35:00.000Z"}',1742063700000000,'{"priority":"high","tags":["a","b"],"why":"finished"}',6,2,6,1742063400000000,1742063400000000,7);
INSERT INTO "tasks" VALUES('','alice','untimed','ctx-rich',1,'{"state":"TASK_STATE_SUBMITTED"}',-9223372036854775808,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('','alice','bare','ctx-bare',6,'{"state":"TASK_STATE_INPUT_REQUIRED","timestamp":"2025-03-15T18:30:00.000Z"}',1742063400000000,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('','bob','page-0','ctx-page',2,'{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:40:00.000Z"}',1742064000000000,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('tenant-2','alice','page-0','ctx-elsewhere',2,'{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:40:00.000Z"}',1742064000000000,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('','bob','page-1','ctx-page',2,'{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:41:00.000Z"}',1742064060000000,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('tenant-2','alice','page-1','ctx-elsewhere',2,'{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:41:00.000Z"}',1742064060000000,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('','bob','page-2','ctx-page',2,'{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:42:00.000Z"}',1742064120000000,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('tenant-2','alice','page-2','ctx-elsewhere',2,'{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:42:00.000Z"}',1742064120000000,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('','bob','page-3','ctx-page',2,'{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:40:00.000Z"}',1742064000000000,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('tenant-2','alice','page-3','ctx-elsewhere',2,'{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:40:00.000Z"}',1742064000000000,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('','bob','page-4','ctx-page',2,'{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:41:00.000Z"}',1742064060000000,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('tenant-2','alice','page-4','ctx-elsewhere',2,'{"state":"TASK_STATE_WORKING","timestamp":"2025-03-15T18:41:00.000Z"}',1742064060000000,NULL,1,1,0,1742063400000000,1742063400000000,0);
INSERT INTO "tasks" VALUES('','alice','pushed','ctx-push',3,'{"state":"TASK_STATE_COMPLETED","timestamp":"2025-03-15T19:30:00.000Z"}',1742067000000000,NULL,2,1,1,1742063400000000,1742063400000000,1);
INSERT INTO "tasks" VALUES('tenant-2','alice','pushed','ctx-push',3,'{"state":"TASK_STATE_COMPLETED","timestamp":"2025-03-15T19:30:00.000Z"}',1742067000000000,NULL,2,1,1,1742063400000000,1742063400000000,1);
CREATE INDEX tasks_by_time ON tasks (tenant, owner, sort_ts DESC, id DESC);
CREATE INDEX tasks_by_context
            ON tasks (tenant, owner, context_id, sort_ts DESC, id DESC);
CREATE INDEX tasks_by_state ON tasks (tenant, owner, state, sort_ts DESC, id DESC);
CREATE INDEX tasks_active ON tasks (state) WHERE state IN (1, 2);
CREATE INDEX tasks_finished ON tasks (updated_at) WHERE state IN (3, 4, 5, 7);
CREATE INDEX push_outbox_queue
            ON push_outbox (tenant, owner, task_id, config_id, state, id);
CREATE INDEX push_outbox_due ON push_outbox (state, due_at);
DELETE FROM "sqlite_sequence";
COMMIT;
