// The numbered migrations, applied in order at coordinator start (`Migrator`). Each entry is
// reviewed SQL; a schema change is a new entry, never an edit of an applied one. The SQL is
// compiled into the binary so a deployed `reel` needs no resource files beside it.

extension Migration {
    static let numbered: [Migration] = [
        Migration(version: 1, name: "initial", sql: #"""
-- Reel's durable state (docs/architecture.md): jobs, their tasks, agents, events, stored assets.
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
-- Bad agents are quarantined, a task is not re-offered to an agent that failed it,
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
        Migration(version: 3, name: "dispatch_at_scale", sql: #"""
-- Dispatch at scale: the plan is stored once per job (content-addressed, like an asset; tasks keep
-- only their frame range), jobs have a priority and can be paused, and a job's task counts
-- are kept on its row so STATUS costs the same for 10 tasks as for 100,000.

ALTER TABLE jobs ADD COLUMN priority integer NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN paused boolean NOT NULL DEFAULT false;
-- SHA-256 and size of the job's plan document in the coordinator's storage (agents FETCH it).
ALTER TABLE jobs ADD COLUMN plan_sha256 text CHECK (plan_sha256 ~ '^[0-9a-f]{64}$');
ALTER TABLE jobs ADD COLUMN plan_size bigint;
-- Render tasks (video chunks and audio; the finalise task is the job's own state).
ALTER TABLE jobs ADD COLUMN render_tasks integer NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN tasks_done integer NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN tasks_failed integer NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN tasks_cancelled integer NOT NULL DEFAULT 0;
-- Frames of all video chunks, and of the done ones.
ALTER TABLE jobs ADD COLUMN frames_total bigint NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN frames_done bigint NOT NULL DEFAULT 0;
-- Tasks planned from now on carry no specification of their own (the TASK payload is built
-- from the row and the job's plan reference); older rows keep theirs.
ALTER TABLE tasks ALTER COLUMN spec SET DEFAULT '';

UPDATE jobs j SET render_tasks = c.render_tasks, tasks_done = c.done, tasks_failed = c.failed,
                  tasks_cancelled = c.cancelled, frames_total = c.frames_total, frames_done = c.frames_done
FROM (SELECT job_id, count(*) AS render_tasks,
             count(*) FILTER (WHERE state = 'done') AS done,
             count(*) FILTER (WHERE state = 'failed') AS failed,
             count(*) FILTER (WHERE state = 'cancelled') AS cancelled,
             coalesce(sum(frame_end - frame_start) FILTER (WHERE kind = 'video_chunk'), 0) AS frames_total,
             coalesce(sum(frame_end - frame_start) FILTER (WHERE kind = 'video_chunk' AND state = 'done'), 0) AS frames_done
      FROM tasks WHERE kind <> 'finalise' GROUP BY job_id) c
WHERE j.id = c.job_id;

-- The counters follow every INSERT and UPDATE of tasks, once per statement (transition
-- tables), in the statement's own transaction. A statement that changes no task's
-- done/failed/cancelled membership (a claim, a heartbeat, progress) does not touch jobs, so
-- claims never take a job row lock; every other state change locks its job row first
-- (JobStore's lock order: job, then tasks, then agents).
CREATE FUNCTION reel_tasks_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE jobs j SET render_tasks = j.render_tasks + d.n, tasks_done = j.tasks_done + d.done,
                      frames_total = j.frames_total + d.frames, frames_done = j.frames_done + d.frames_done
    FROM (SELECT job_id, count(*) AS n, count(*) FILTER (WHERE state = 'done') AS done,
                 coalesce(sum(frame_end - frame_start) FILTER (WHERE kind = 'video_chunk'), 0) AS frames,
                 coalesce(sum(frame_end - frame_start) FILTER (WHERE kind = 'video_chunk' AND state = 'done'), 0) AS frames_done
          FROM new_rows WHERE kind <> 'finalise' GROUP BY job_id) d
    WHERE j.id = d.job_id;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION reel_tasks_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE jobs j SET tasks_done = j.tasks_done + d.done, tasks_failed = j.tasks_failed + d.failed,
                      tasks_cancelled = j.tasks_cancelled + d.cancelled, frames_done = j.frames_done + d.frames
    FROM (SELECT n.job_id,
                 sum((n.state = 'done')::int - (o.state = 'done')::int) AS done,
                 sum((n.state = 'failed')::int - (o.state = 'failed')::int) AS failed,
                 sum((n.state = 'cancelled')::int - (o.state = 'cancelled')::int) AS cancelled,
                 sum(CASE WHEN n.kind = 'video_chunk'
                          THEN ((n.state = 'done')::int - (o.state = 'done')::int) * (n.frame_end - n.frame_start)
                          ELSE 0 END) AS frames
          FROM old_rows o JOIN new_rows n ON n.id = o.id
          WHERE n.kind <> 'finalise' AND n.state IS DISTINCT FROM o.state
            AND (n.state IN ('done', 'failed', 'cancelled') OR o.state IN ('done', 'failed', 'cancelled'))
          GROUP BY n.job_id) d
    WHERE j.id = d.job_id AND (d.done <> 0 OR d.failed <> 0 OR d.cancelled <> 0);
    RETURN NULL;
END
$fn$;

CREATE TRIGGER tasks_counted_on_insert AFTER INSERT ON tasks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reel_tasks_inserted();
CREATE TRIGGER tasks_counted_on_update AFTER UPDATE ON tasks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reel_tasks_updated();

-- Claims scan queued tasks in dispatch order within each job.
CREATE INDEX tasks_claim_order ON tasks (job_id, (CASE kind WHEN 'audio' THEN 0 WHEN 'video_chunk' THEN 1 ELSE 2 END), ordinal, id)
    WHERE state = 'queued';
DROP INDEX tasks_queued;
CREATE INDEX tasks_owner ON tasks (lease_owner) WHERE state = 'leased';
"""#),
        Migration(version: 4, name: "run_after_retry", sql: #"""
-- A retried job's speed and ETA count from the retry: when its current run started and how
-- many frames were already done then (reset by RETRY, set by the run's first claim).
ALTER TABLE jobs ADD COLUMN run_started_at timestamptz;
ALTER TABLE jobs ADD COLUMN run_frames_base bigint NOT NULL DEFAULT 0;
UPDATE jobs SET run_started_at = started_at;
"""#),
        Migration(version: 5, name: "task_claims", sql: #"""
-- The console's job page shows each chunk's agent and start without reading the job's events
-- (a long job has hundreds of thousands): the latest claim's agent and time, set by the claim.
-- No foreign key (a claim would pay its check on every row): a forgotten agent's id simply
-- finds no name.
ALTER TABLE tasks ADD COLUMN last_agent bigint;
ALTER TABLE tasks ADD COLUMN claimed_at timestamptz;
UPDATE tasks t SET last_agent = c.agent_id, claimed_at = c.at
FROM (SELECT DISTINCT ON (task_id) task_id, agent_id, at FROM events
      WHERE kind = 'claimed' AND task_id IS NOT NULL ORDER BY task_id, id DESC) c
WHERE c.task_id = t.id;
"""#),
        Migration(version: 6, name: "chunk_reuse", sql: #"""
-- Incremental re-rendering. A render task carries the content key of its output
-- (SHA-256 over everything that decides its bytes, ReelCore's ContentKey); planning looks up
-- a done task with the same key, in any job, and inserts the new task done with that result.
-- reused marks such tasks; jobs.tasks_reused counts them (STATUS shows it).
ALTER TABLE tasks ADD COLUMN content_key text CHECK (content_key ~ '^[0-9a-f]{64}$');
ALTER TABLE tasks ADD COLUMN reused boolean NOT NULL DEFAULT false;
ALTER TABLE jobs ADD COLUMN tasks_reused integer NOT NULL DEFAULT 0;
CREATE INDEX tasks_content_key_done ON tasks (content_key) WHERE state = 'done' AND content_key IS NOT NULL;
"""#),
        Migration(version: 7, name: "job_video_encoder", sql: #"""
-- Claims honour CAPS encoders=: an agent is offered a job's video chunks only if it has the
-- encoder they need (libx264, libx265, prores_ks), set when the job is planned. NULL (jobs
-- planned before this migration): any agent may take them, as before.
ALTER TABLE jobs ADD COLUMN video_encoder text;
"""#),
        Migration(version: 8, name: "job_notifications", sql: #"""
-- reel submit --notify URL: the coordinator POSTs a signed document to URL when the job ends.
-- Written with the job; pending until a POST succeeds (delivered) or the retries run out
-- (abandoned). next_attempt_at is when it is due once the job has ended (the first attempt at
-- once: the row's creation time is always past by then).
CREATE TABLE job_notifications (
    job_id          bigint PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    url             text NOT NULL,
    state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'abandoned')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX job_notifications_pending ON job_notifications (next_attempt_at) WHERE state = 'pending';
"""#),
        Migration(version: 9, name: "several_coordinators", sql: #"""
-- Several coordinators on one database (docs/task-lifecycle.md, "Several coordinators").
-- Each running coordinator has a row: where clients reach it, when it started, its last
-- heartbeat (every reaper pass). A graceful shutdown sets stopped_at; a killed one simply stops
-- heartbeating. `reel status` and the console list them.
CREATE TABLE coordinators (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    address        text NOT NULL,
    host           text NOT NULL DEFAULT '',
    started_at     timestamptz NOT NULL DEFAULT now(),
    last_heartbeat timestamptz NOT NULL DEFAULT now(),
    stopped_at     timestamptz
);

-- Wakes across processes (LISTEN reel): "<schema> claimable" when a task may have become
-- claimable (a task queued: planned, released, expired, failed with attempts left, retried,
-- re-queued as damaged; a job resumed or re-prioritised), "<schema> ended <job>" when a job
-- ends. NOTIFY is sent at commit and identical payloads of one transaction are sent once, so a
-- batch costs one message. The schema lets coordinators of different schemas share a server.
CREATE FUNCTION reel_notify_claimable() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM pg_notify('reel', TG_TABLE_SCHEMA || ' claimable');
    RETURN NULL;
END
$fn$;
CREATE FUNCTION reel_notify_job_ended() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM pg_notify('reel', TG_TABLE_SCHEMA || ' ended ' || NEW.id);
    RETURN NULL;
END
$fn$;
CREATE TRIGGER tasks_queued_on_insert AFTER INSERT ON tasks FOR EACH ROW
    WHEN (NEW.state = 'queued') EXECUTE FUNCTION reel_notify_claimable();
CREATE TRIGGER tasks_queued_on_update AFTER UPDATE OF state ON tasks FOR EACH ROW
    WHEN (NEW.state = 'queued' AND OLD.state <> 'queued') EXECUTE FUNCTION reel_notify_claimable();
CREATE TRIGGER jobs_claimable_on_update AFTER UPDATE OF paused, priority ON jobs FOR EACH ROW
    WHEN (OLD.paused IS DISTINCT FROM NEW.paused OR OLD.priority IS DISTINCT FROM NEW.priority)
    EXECUTE FUNCTION reel_notify_claimable();
CREATE TRIGGER jobs_ended_on_update AFTER UPDATE OF state ON jobs FOR EACH ROW
    WHEN (NEW.state IN ('done', 'failed', 'cancelled') AND OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION reel_notify_job_ended();
"""#),
        Migration(version: 10, name: "task_renditions", sql: #"""
-- Incremental re-rendering per rendition of an HLS ladder (docs/incremental-rendering.md):
-- one row per rendition of each ladder video chunk, with its content key (ReelCore's
-- ContentKey.renditionChunks) and where its chunk is: in the task's own result (a ladder
-- archive; source_sha256 NULL) or in another task's stored archive that planning found by the
-- key (source_*). Planning looks renditions up by key; the finaliser takes each rendition
-- from its archive; retention keeps the source archives of the jobs it keeps.
CREATE TABLE task_renditions (
    task_id       bigint NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    position      integer NOT NULL CHECK (position >= 0),
    name          text NOT NULL,
    rendition_key text NOT NULL CHECK (rendition_key ~ '^[0-9a-f]{64}$'),
    source_sha256 text CHECK (source_sha256 ~ '^[0-9a-f]{64}$'),
    source_size   bigint,
    source_key    text,
    PRIMARY KEY (task_id, position),
    CHECK ((source_sha256 IS NULL) = (source_size IS NULL) AND (source_sha256 IS NULL) = (source_key IS NULL))
);
CREATE INDEX task_renditions_key ON task_renditions (rendition_key);
CREATE INDEX task_renditions_source ON task_renditions (source_sha256) WHERE source_sha256 IS NOT NULL;
"""#),
        Migration(version: 11, name: "hot_paths", sql: #"""
-- Hot paths: what claims, results, heartbeats, submits and cancels cost in the database.
--
-- A cancel changes the job's row only; its open tasks are cancelled after the reply, in
-- batches (LifecycleStore.stopOpenTasks). tasks_to_stop marks a cancelled job whose open tasks
-- are not all cancelled yet, so a coordinator that stopped in between finishes the sweep.
ALTER TABLE jobs ADD COLUMN tasks_to_stop boolean NOT NULL DEFAULT false;
CREATE INDEX jobs_tasks_to_stop ON jobs (id) WHERE tasks_to_stop;

-- Events name their task and agent without foreign keys, as tasks.last_agent already does:
-- every claim and every result appends an event, and each key cost a lookup and a row lock
-- per event. Task rows go only with their job (and its events with it); agent ids are never
-- reused, so a forgotten agent's events simply find no name.
ALTER TABLE events DROP CONSTRAINT events_task_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_agent_id_fkey;

-- Every claim asks which agents are quarantined: few or none, found by this index, instead of
-- checking each of the live agents (with 1,000 agents, a 1,000-element array every claim).
CREATE INDEX agents_quarantined ON agents (quarantined_until) WHERE quarantined_until IS NOT NULL;

-- "claimable" once per statement, not once per row: a submit of 15,000 tasks or a retry of
-- them ran the notify function 15,000 times. The update trigger now also sends it, from the
-- transition tables; and a statement that changes no task's done/failed/cancelled membership
-- (a claim, a heartbeat, progress) leaves before the counters' join.
DROP TRIGGER tasks_queued_on_insert ON tasks;
DROP TRIGGER tasks_queued_on_update ON tasks;

CREATE OR REPLACE FUNCTION reel_tasks_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF EXISTS (SELECT 1 FROM new_rows WHERE state = 'queued') THEN
        PERFORM pg_notify('reel', TG_TABLE_SCHEMA || ' claimable');
    END IF;
    UPDATE jobs j SET render_tasks = j.render_tasks + d.n, tasks_done = j.tasks_done + d.done,
                      frames_total = j.frames_total + d.frames, frames_done = j.frames_done + d.frames_done
    FROM (SELECT job_id, count(*) AS n, count(*) FILTER (WHERE state = 'done') AS done,
                 coalesce(sum(frame_end - frame_start) FILTER (WHERE kind = 'video_chunk'), 0) AS frames,
                 coalesce(sum(frame_end - frame_start) FILTER (WHERE kind = 'video_chunk' AND state = 'done'), 0) AS frames_done
          FROM new_rows WHERE kind <> 'finalise' GROUP BY job_id) d
    WHERE j.id = d.job_id;
    RETURN NULL;
END
$fn$;

CREATE OR REPLACE FUNCTION reel_tasks_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF EXISTS (SELECT 1 FROM new_rows WHERE state = 'queued')
       AND EXISTS (SELECT 1 FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.state = 'queued' AND o.state <> 'queued') THEN
        PERFORM pg_notify('reel', TG_TABLE_SCHEMA || ' claimable');
    END IF;
    IF NOT EXISTS (SELECT 1 FROM new_rows WHERE state IN ('done', 'failed', 'cancelled'))
       AND NOT EXISTS (SELECT 1 FROM old_rows WHERE state IN ('done', 'failed', 'cancelled')) THEN
        RETURN NULL;
    END IF;
    UPDATE jobs j SET tasks_done = j.tasks_done + d.done, tasks_failed = j.tasks_failed + d.failed,
                      tasks_cancelled = j.tasks_cancelled + d.cancelled, frames_done = j.frames_done + d.frames
    FROM (SELECT n.job_id,
                 sum((n.state = 'done')::int - (o.state = 'done')::int) AS done,
                 sum((n.state = 'failed')::int - (o.state = 'failed')::int) AS failed,
                 sum((n.state = 'cancelled')::int - (o.state = 'cancelled')::int) AS cancelled,
                 sum(CASE WHEN n.kind = 'video_chunk'
                          THEN ((n.state = 'done')::int - (o.state = 'done')::int) * (n.frame_end - n.frame_start)
                          ELSE 0 END) AS frames
          FROM old_rows o JOIN new_rows n ON n.id = o.id
          WHERE n.kind <> 'finalise' AND n.state IS DISTINCT FROM o.state
            AND (n.state IN ('done', 'failed', 'cancelled') OR o.state IN ('done', 'failed', 'cancelled'))
          GROUP BY n.job_id) d
    WHERE j.id = d.job_id AND (d.done <> 0 OR d.failed <> 0 OR d.cancelled <> 0);
    RETURN NULL;
END
$fn$;
"""#),
        Migration(version: 12, name: "cheap_hash_checks", sql: #"""
-- The same rule for every hex digest column (64 lowercase hex digits), checked without the
-- counted repetition `{64}`: PostgreSQL's regex engine spent ~9 µs a row on '^[0-9a-f]{64}$'
-- and ~0.5 µs on the length plus '^[0-9a-f]+$' (which admits ASCII only, so octets are
-- characters). A check runs on every insert and on every update of the row, so this was
-- ~130 ms of a 14,400-chunk submit and a part of every claim and result.
ALTER TABLE assets DROP CONSTRAINT assets_sha256_check,
    ADD CONSTRAINT assets_sha256_check CHECK (octet_length(sha256) = 64 AND sha256 ~ '^[0-9a-f]+$');
ALTER TABLE job_assets DROP CONSTRAINT job_assets_sha256_check,
    ADD CONSTRAINT job_assets_sha256_check CHECK (octet_length(sha256) = 64 AND sha256 ~ '^[0-9a-f]+$');
ALTER TABLE jobs DROP CONSTRAINT jobs_plan_sha256_check,
    ADD CONSTRAINT jobs_plan_sha256_check CHECK (octet_length(plan_sha256) = 64 AND plan_sha256 ~ '^[0-9a-f]+$');
ALTER TABLE tasks DROP CONSTRAINT tasks_content_key_check,
    ADD CONSTRAINT tasks_content_key_check CHECK (octet_length(content_key) = 64 AND content_key ~ '^[0-9a-f]+$');
ALTER TABLE task_renditions DROP CONSTRAINT task_renditions_rendition_key_check,
    ADD CONSTRAINT task_renditions_rendition_key_check CHECK (octet_length(rendition_key) = 64 AND rendition_key ~ '^[0-9a-f]+$'),
    DROP CONSTRAINT task_renditions_source_sha256_check,
    ADD CONSTRAINT task_renditions_source_sha256_check CHECK (octet_length(source_sha256) = 64 AND source_sha256 ~ '^[0-9a-f]+$');
"""#),
        Migration(version: 13, name: "lean_task_writes", sql: #"""
-- What a submit, a claim and a result write besides their task rows.
--
-- Tasks name their job without a foreign key: a submit of 14,400 tasks spent ~90 ms on the
-- key's per-row lookup and lock of the job row, which the same transaction has already locked
-- (createTasks locks the job first, and fails if it is gone). A job is deleted (deleteJob, ended
-- jobs only) together with its tasks, in one statement.
ALTER TABLE tasks DROP CONSTRAINT tasks_job_id_fkey;
-- (tasks_job_state stays: without it, the claim's "which jobs have queued tasks" walked the
-- claimed tasks' dead entries in tasks_claim_order, 1.6 -> 16 ms a call under 200 agents.)
--
-- What a claim and a result write besides their task row. An agent's current task is the task
-- it holds a lease on (tasks.lease_owner, found by the tasks_owner index), so agents no longer
-- keep a copy of it: every result paid an agents row update to clear it, every claim a foreign
-- key check of it against tasks, and every expiry a statement per lease.
ALTER TABLE agents DROP COLUMN current_task;
-- A lease names a registered agent: the claim takes it from a connected agent's session, and
-- an agent row is only ever deleted when it holds no lease (forgetOfflineAgents), so the key's
-- per-claim check (a lookup and a row lock of the agent) guarded nothing.
ALTER TABLE tasks DROP CONSTRAINT tasks_lease_owner_fkey;
"""#),
        Migration(version: 14, name: "jobs_claim_order", sql: #"""
-- A claim reads the claimable jobs a page at a time, in claim order (priority, then age), and
-- stops at the first page that has tasks for everyone: this index gives that order without
-- sorting every active job (a batch of rows queues thousands, one job each).
CREATE INDEX jobs_claim_order ON jobs (priority DESC, id) WHERE state IN ('queued', 'running', 'finalising') AND NOT paused;
"""#),
        Migration(version: 15, name: "batches", sql: #"""
-- Batches (docs/templates.md, "Batches on a farm"): one job per row of a template's rows,
-- grouped so that the batch is followed as one (`reel status bID`, GET /api/v1/batches/{id}).
-- A batch is one small row; each job names its batch and row in two columns (12 bytes a
-- variant, NULL for a job of its own), and the unique index finds a batch's jobs in row order
-- and refuses a row submitted twice. Claims do not read these columns.
CREATE TABLE batches (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL DEFAULT '',
    rows       integer NOT NULL CHECK (rows >= 1),
    created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE jobs ADD COLUMN batch_id bigint REFERENCES batches (id),
                 ADD COLUMN batch_row integer CHECK (batch_row >= 1),
                 ADD CONSTRAINT jobs_batch_pair_check CHECK ((batch_id IS NULL) = (batch_row IS NULL));
CREATE UNIQUE INDEX jobs_batch_row ON jobs (batch_id, batch_row) WHERE batch_id IS NOT NULL;
"""#),
        Migration(version: 16, name: "events_without_job_key", sql: #"""
-- Events name their job without a foreign key, as they already name their task and agent:
-- every claim and every result appends an event, and the key cost each one a lookup of the
-- job's row and a share lock on it (0.6 ms of a 48-result batch, and share locks that several
-- transactions held at once on the one job everyone claims from). An event's job is the job
-- of a task the same statement has just changed, or a job the caller holds; a job's events
-- are deleted with it (deleteJob), and an event naming a job that is gone is only history.
ALTER TABLE events DROP CONSTRAINT events_job_id_fkey;
"""#),
        Migration(version: 17, name: "claim_turns", sql: #"""
-- Fair share within a priority (ClaimTurns): a job takes a turn when it is planned, and claims
-- take jobs by priority, then turn, then age. A batch's rows take successive turns (the batch's
-- next_turn), so a batch of thousands of rows no longer stands before every job submitted after
-- it. Jobs planned before this keep their order: they all take turn 0, and so go by age (ended
-- ones too, which a retry may bring back). A job without a turn is not planned yet (a batch's
-- rows waiting for its first): it has nothing to claim, and is not in the index.
ALTER TABLE jobs ADD COLUMN claim_turn bigint;
ALTER TABLE batches ADD COLUMN next_turn bigint NOT NULL DEFAULT 0;
UPDATE jobs SET claim_turn = 0 WHERE EXISTS (SELECT 1 FROM tasks t WHERE t.job_id = jobs.id);
DROP INDEX jobs_claim_order;
CREATE INDEX jobs_claim_order ON jobs (priority DESC, claim_turn, id)
    WHERE state IN ('queued', 'running', 'finalising') AND NOT paused AND claim_turn IS NOT NULL;
"""#),
        Migration(version: 18, name: "agent_prices", sql: #"""
-- What agents cost (docs/farm.md, "Cost"): each agent's price an hour per render slot, from
-- the moment it was stated (its `CAPS cost=`, or the coordinator's price table). A row is
-- written when an agent registers with a price other than its latest, never on a claim or a
-- result: a task costs its agent time (tasks.claimed_at to tasks.finished_at) at the price
-- its agent had when it claimed the task, looked up when a job's cost is read. Rows outlive
-- forgotten agents (agent ids are never reused), so a job's cost does not change afterwards.
-- NULL cost_per_hour: the agent named no price from then on.
CREATE TABLE agent_prices (
    agent_id      bigint NOT NULL,
    since         timestamptz NOT NULL DEFAULT now(),
    cost_per_hour double precision CHECK (cost_per_hour >= 0),
    PRIMARY KEY (agent_id, since)
);
"""#),
        Migration(version: 19, name: "job_budgets", sql: #"""
-- Job budgets (docs/farm.md, "Budgets"): an amount of money or of agent-hours (budget_unit),
-- NULL for a job without one. From 90 % of it spent the job is paused with pause_reason
-- 'budget'; an operator's pause is 'operator'. Claims and results of jobs without a budget
-- read neither column; the budget service finds the budgeted jobs still active from the
-- small partial index jobs_budgeted.
ALTER TABLE jobs ADD COLUMN budget double precision CHECK (budget >= 0),
                 ADD COLUMN budget_unit text CHECK (budget_unit IN ('money', 'agent_hours')),
                 ADD COLUMN pause_reason text CHECK (pause_reason IN ('operator', 'budget')),
                 ADD CONSTRAINT jobs_budget_pair_check CHECK ((budget IS NULL) = (budget_unit IS NULL)),
                 ADD CONSTRAINT jobs_pause_reason_when_paused CHECK (paused OR pause_reason IS NULL);
UPDATE jobs SET pause_reason = 'operator' WHERE paused;
CREATE INDEX jobs_budgeted ON jobs (id) WHERE budget IS NOT NULL AND state IN ('queued', 'running', 'finalising');
"""#),
        Migration(version: 20, name: "lean_job_rows", sql: #"""
-- What a job keeps in the database (docs/architecture.md, "What the database keeps"): a batch
-- of thousands of rows is thousands of jobs, so every byte of a job counts.
--
-- A job's documents are written once, apart from its row: the composition as submitted and
-- the settings (with every asset's hash) in job_documents, one row a job that is never
-- updated. The jobs row keeps the state, counters and times, which the lifecycle rewrites
-- about twelve times in a job's life (PostgreSQL writes a new version of the row at each
-- update): with the documents and the plan in it, a row was ~2.7 KB (a variant of a 15 s
-- template: 6.6 KB of jobs table a variant once the old versions piled up); now ~300 bytes.
-- Named by its job without a foreign key, as tasks and events are (migrations 13 and 16):
-- deleteJob deletes it with the job.
CREATE TABLE job_documents (
    job_id      bigint PRIMARY KEY,
    composition text NOT NULL,
    settings    text NOT NULL DEFAULT '{}'
);
INSERT INTO job_documents (job_id, composition, settings) SELECT id, composition, settings FROM jobs;
ALTER TABLE jobs DROP COLUMN composition, DROP COLUMN settings;

-- The render plan is kept once, in its stored document (plan_sha256, which job_assets lists so
-- that retention keeps it as long as the job): jobs planned from now on leave plan empty ('';
-- '{}' still means "not planned yet"). Jobs planned before keep theirs, which is read first.

-- job_assets holds each hash as its 32 bytes, not 64 hex digits: each of a job's rows (its
-- sources and its plan document) and its two index entries were ~100 bytes larger as text.
-- Statements convert at the edge (decode($n, 'hex'), encode(sha256, 'hex')).
ALTER TABLE job_assets DROP CONSTRAINT job_assets_sha256_check;
ALTER TABLE job_assets ALTER COLUMN sha256 TYPE bytea USING decode(sha256, 'hex');
ALTER TABLE job_assets ADD CONSTRAINT job_assets_sha256_check CHECK (octet_length(sha256) = 32);
"""#),
    ]
}
