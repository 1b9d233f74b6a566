// The numbered migrations, applied in order at coordinator start (`Migrator`). Each entry is
// reviewed SQL; a schema change is a new entry, never an edit of an applied one. The SQL is
// compiled into the binary so a deployed `reel` needs no resource files beside it.

extension Migration {
    static let numbered: [Migration] = [
        Migration(version: 1, name: "initial", sql: #"""
-- Reel's durable state (DESIGN §5): jobs, their tasks, agents, events, stored assets.
-- Applied once, inside the migration runner's transaction and advisory lock.

CREATE TABLE jobs (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- waiting: submitted, assets still being uploaded (its tasks are not claimable yet).
    state         text NOT NULL DEFAULT 'queued'
                  CHECK (state IN ('waiting', 'queued', 'running', 'finalising', 'done', 'failed', 'cancelled')),
    -- Kept as text, byte for byte as submitted: chunk output must not depend on key order.
    composition   text NOT NULL,
    plan          text NOT NULL DEFAULT '{}',
    settings      text NOT NULL DEFAULT '{}',
    output_key    text,
    error         text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    started_at    timestamptz,
    finished_at   timestamptz,
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agents (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name           text NOT NULL UNIQUE,
    host           text NOT NULL DEFAULT '',
    capabilities   text NOT NULL DEFAULT '{}',
    state          text NOT NULL DEFAULT 'online' CHECK (state IN ('online', 'draining', 'offline')),
    last_heartbeat timestamptz NOT NULL DEFAULT now(),
    current_task   bigint,
    registered_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tasks (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id           bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    kind             text NOT NULL CHECK (kind IN ('video_chunk', 'audio', 'finalise')),
    -- Position among the job's tasks of this kind (chunk number).
    ordinal          integer NOT NULL,
    frame_start      bigint NOT NULL DEFAULT 0,
    frame_end        bigint NOT NULL DEFAULT 0 CHECK (frame_end >= frame_start),
    -- The task's specification for the agent (JSON, opaque to the store).
    spec             text NOT NULL DEFAULT '{}',
    state            text NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'leased', 'done', 'failed', 'cancelled')),
    attempts         integer NOT NULL DEFAULT 0,
    max_attempts     integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
    lease_owner      bigint REFERENCES agents (id) ON DELETE SET NULL,
    lease_expires_at timestamptz,
    -- Fencing token: +1 on every claim; results are accepted only under the current one.
    epoch            bigint NOT NULL DEFAULT 0,
    result_sha256    text,
    result_size      bigint,
    result_key       text,
    progress_frames  bigint NOT NULL DEFAULT 0,
    error            text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz,
    UNIQUE (job_id, kind, ordinal),
    CHECK (state <> 'leased' OR (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL))
);

ALTER TABLE agents ADD FOREIGN KEY (current_task) REFERENCES tasks (id) ON DELETE SET NULL;

-- The claim query scans queued tasks in job order; the expirer scans leased tasks by expiry.
CREATE INDEX tasks_queued ON tasks (job_id, kind, ordinal) WHERE state = 'queued';
CREATE INDEX tasks_leased_expiry ON tasks (lease_expires_at) WHERE state = 'leased';
CREATE INDEX tasks_job_state ON tasks (job_id, state);
CREATE INDEX jobs_active ON jobs (created_at, id) WHERE state IN ('queued', 'running', 'finalising');

CREATE TABLE events (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id   bigint REFERENCES jobs (id) ON DELETE CASCADE,
    task_id  bigint REFERENCES tasks (id) ON DELETE CASCADE,
    agent_id bigint REFERENCES agents (id) ON DELETE SET NULL,
    kind     text NOT NULL,
    message  text NOT NULL DEFAULT '',
    at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_job ON events (job_id, id);

CREATE TABLE assets (
    sha256     text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    size       bigint NOT NULL CHECK (size >= 0),
    stored_key text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Which content hashes a job reads (so a waiting job knows when its uploads are complete).
CREATE TABLE job_assets (
    job_id bigint NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    PRIMARY KEY (job_id, sha256)
);
"""#),
        Migration(version: 2, name: "storage_and_quarantine", sql: #"""
-- Issue 8: bad agents are quarantined, a task is not re-offered to an agent that failed it,
-- and a job's failure quotes every agent's error (task_failures); offline agents are
-- forgotten after a while (last_heartbeat already says since when).

ALTER TABLE agents ADD COLUMN quarantined_until timestamptz;
ALTER TABLE agents ADD COLUMN last_error text;

-- One row per FAIL. Kept with the task (and deleted with it); agent_name survives the agent
-- row so a job's error can still name who failed it.
CREATE TABLE task_failures (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id    bigint NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    agent_id   bigint REFERENCES agents (id) ON DELETE SET NULL,
    agent_name text NOT NULL,
    message    text NOT NULL,
    at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX task_failures_task ON task_failures (task_id, agent_id);
CREATE INDEX task_failures_agent ON task_failures (agent_id, at);

-- Retention and GC look results and assets up by hash.
CREATE INDEX tasks_result_sha256 ON tasks (result_sha256) WHERE result_sha256 IS NOT NULL;
CREATE INDEX job_assets_sha256 ON job_assets (sha256);
"""#),
    ]
}
