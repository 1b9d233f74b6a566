/// Every SQL statement Reel runs, in one reviewed place (named, parameterised with `$n`,
/// never built from values). Times leave the database as milliseconds since the Unix epoch,
/// by the database's clock, so lease arithmetic never mixes clocks.
enum Statements {
    /// `timestamptz` → ms since the Unix epoch.
    private static func ms(_ column: String) -> String { "(extract(epoch FROM \(column)) * 1000)::bigint" }
    /// Parameter `$n`, a `FarmClock` reading in milliseconds, as a timestamp.
    private static func at(_ n: Int) -> String { "to_timestamp($\(n)::bigint / 1000.0)" }

    // MARK: Migrations

    static let migrationLock = "SELECT pg_advisory_xact_lock($1::bigint)"
    static let createMigrationsTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version    integer PRIMARY KEY,
            name       text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now())
        """
    static let appliedMigrations = "SELECT version FROM schema_migrations ORDER BY version"
    static let recordMigration = "INSERT INTO schema_migrations (version, name) VALUES ($1::integer, $2)"

    // MARK: Jobs

    static let insertJob = """
        INSERT INTO jobs (state, composition, plan, settings, priority) VALUES ($1, $2, $3, $4, $5::integer) RETURNING id
        """
    /// A job's tasks in one statement: `$2…$7` are parallel arrays (kind, ordinal, frames,
    /// spec, attempts).
    /// Parallel arrays, one element per task; a task with a result (`$9…$11` not NULL) is
    /// created done with it (reused: never rendered), which the insert trigger counts.
    static let insertTasks = """
        INSERT INTO tasks (job_id, kind, ordinal, frame_start, frame_end, spec, max_attempts, content_key,
                           state, reused, result_sha256, result_size, result_key, progress_frames, finished_at)
        SELECT $1::bigint, x.kind, x.ordinal, x.frame_start, x.frame_end, x.spec, x.max_attempts, x.content_key,
               CASE WHEN x.result_sha256 IS NULL THEN 'queued' ELSE 'done' END, x.result_sha256 IS NOT NULL,
               x.result_sha256, x.result_size, x.result_key,
               CASE WHEN x.result_sha256 IS NULL THEN 0 ELSE x.frame_end - x.frame_start END,
               CASE WHEN x.result_sha256 IS NULL THEN NULL ELSE now() END
        FROM unnest($2::text[], $3::integer[], $4::bigint[], $5::bigint[], $6::text[], $7::integer[], $8::text[],
                    $9::text[], $10::bigint[], $11::text[])
             AS x(kind, ordinal, frame_start, frame_end, spec, max_attempts, content_key, result_sha256, result_size, result_key)
        """
    /// The number of job `$1`'s tasks done from a reused result.
    private static let reusedTaskCount = "(SELECT count(*) FROM tasks WHERE job_id = $1::bigint AND reused)"
    /// `tasks_reused` of job `$1` recounted (a reused result found damaged is rendered after all).
    static let countReusedTasks = """
        UPDATE jobs SET tasks_reused = \(reusedTaskCount) WHERE id = $1::bigint
        """
    /// After planning job `$1` with reused tasks: count them, and leave their frames out of
    /// the run's speed (they were not rendered by this run).
    static let recordReusedAtPlanning = """
        UPDATE jobs SET tasks_reused = \(reusedTaskCount), run_frames_base = frames_done
        WHERE id = $1::bigint
        """
    /// The newest stored result of a done task per content key in `$1` (any job).
    static let resultsByContentKey = """
        SELECT DISTINCT ON (content_key) content_key, result_sha256, result_size, result_key FROM tasks
        WHERE content_key = ANY($1::text[]) AND state = 'done' AND result_sha256 IS NOT NULL AND result_key IS NOT NULL
        ORDER BY content_key, finished_at DESC NULLS LAST, id DESC
        """
    static let insertJobAsset = "INSERT INTO job_assets (job_id, sha256) VALUES ($1::bigint, $2) ON CONFLICT DO NOTHING"

    /// A waiting job whose every asset is stored becomes queued.
    static let releaseWaitingJob = """
        UPDATE jobs SET state = 'queued', error = NULL, updated_at = now()
        WHERE id = $1::bigint AND state = 'waiting'
          AND NOT EXISTS (SELECT 1 FROM job_assets ja LEFT JOIN assets a ON a.sha256 = ja.sha256
                          WHERE ja.job_id = jobs.id AND a.sha256 IS NULL)
        """

    static let jobState = "SELECT state FROM jobs WHERE id = $1::bigint FOR NO KEY UPDATE"

    /// Claim, step 1 (`JobStore.claimTasks`): which of the agents `$2` are quarantined (they
    /// get nothing, and do not count as "another live agent" for a task someone failed), and
    /// the jobs with a queued task of the kinds in `$1`, in claim order (priority, then age):
    /// active, unpaused, with whether every render task is done (only then is a finalise task
    /// claimable) and the encoder its video chunks need. Always at least one row (job columns
    /// NULL when none), so the quarantine answer comes in the same round trip. Few rows: one per
    /// job, not per task.
    static let claimableJobs = """
        WITH quarantine AS (
            SELECT coalesce(array_agg(id), '{}') AS ids FROM agents WHERE id = ANY($2::bigint[]) AND quarantined_until > now()
        )
        SELECT q.ids AS quarantined, j.id, j.priority, j.rendered, j.video_encoder
        FROM quarantine q LEFT JOIN (
            SELECT id, priority, tasks_done = render_tasks AS rendered, video_encoder FROM jobs
            WHERE state IN ('queued', 'running', 'finalising') AND NOT paused
              AND EXISTS (SELECT 1 FROM tasks t WHERE t.job_id = jobs.id AND t.state = 'queued' AND t.kind = ANY($1::text[]))
        ) j ON true
        ORDER BY j.priority DESC, j.id
        """
    /// Claim, step 2, per job in claim order until enough: up to `$5` claimable tasks of job `$1`
    /// (priority `$4`) of the kinds in `$2` (a finalise task only if `$3`, every render task
    /// done), in the job's order (audio → chunks → finalise, ordinal) straight from the
    /// `tasks_claim_order` index (a plain read: the lease statement locks what it leases).
    /// Returned with the agents that failed each one, for `ClaimPolicy`, which decides who gets what.
    static let claimCandidatesOfJob = """
        WITH candidate AS (
            SELECT t.id, t.job_id, t.kind, t.ordinal, $4::integer AS priority
            FROM tasks t
            WHERE t.job_id = $1::bigint AND t.state = 'queued' AND t.kind = ANY($2::text[])
              AND (t.kind <> 'finalise' OR $3::boolean)
            ORDER BY (CASE t.kind WHEN 'audio' THEN 0 WHEN 'video_chunk' THEN 1 ELSE 2 END), t.ordinal, t.id
            LIMIT $5::integer
        )
        SELECT c.id, c.job_id, c.kind, c.ordinal, c.priority,
               coalesce((SELECT array_agg(DISTINCT f.agent_id) FROM task_failures f
                         WHERE f.task_id = c.id AND f.agent_id IS NOT NULL), '{}') AS failed_agents
        FROM candidate c
        """
    /// Claim, step 3, in one statement: lease task `$1[i]` to agent `$2[i]` for `$3` seconds
    /// from the farm clock's `$4` under a new epoch; record it as each agent's current task (a
    /// claim is also a sign of life); append one `claimed` event per lease. Tasks are updated
    /// before agents (the store's lock order). Returns each lease with its job's state, so the
    /// caller marks jobs running only when one was still queued.
    /// The tasks are locked first with `SKIP LOCKED` (a claim never waits on a task another
    /// transaction holds, so it can neither stall nor deadlock) and leased only if still queued.
    static let leaseTasks = """
        WITH locked AS (
            SELECT id FROM tasks WHERE id = ANY($1::bigint[]) AND state = 'queued' FOR UPDATE SKIP LOCKED
        ), leased AS (
            UPDATE tasks t
            SET state = 'leased', lease_owner = x.agent, last_agent = x.agent, claimed_at = now(),
                lease_expires_at = \(at(4)) + $3::double precision * interval '1 second',
                epoch = t.epoch + 1, attempts = t.attempts + 1, progress_frames = 0, updated_at = now()
            FROM unnest($1::bigint[], $2::bigint[]) AS x(task, agent), locked l, jobs j
            WHERE t.id = x.task AND l.id = x.task AND t.state = 'queued' AND j.id = t.job_id
            RETURNING t.id, t.job_id, t.kind, t.ordinal, t.frame_start, t.frame_end, t.spec, t.epoch, t.attempts,
                      t.lease_owner, \(ms("t.lease_expires_at")) AS expires_ms, j.plan_sha256, j.plan_size, j.state AS job_state
        ), holders AS (
            UPDATE agents a SET current_task = l.id, last_heartbeat = now(),
                                state = CASE WHEN a.state = 'offline' THEN 'online' ELSE a.state END
            FROM leased l WHERE a.id = l.lease_owner
        ), claim_events AS (
            INSERT INTO events (job_id, task_id, agent_id, kind, message)
            SELECT l.job_id, l.id, l.lease_owner, 'claimed', 'epoch ' || l.epoch || ', attempt ' || l.attempts FROM leased l
        )
        SELECT * FROM leased
        """
    /// After a claim commits, in a transaction of its own (a claim holds task locks and must
    /// never wait for a job row): the jobs `$1` start running, those in `$2` (their finalise
    /// task was claimed) finalising.
    static let markJobsClaimed = """
        UPDATE jobs SET state = CASE WHEN id = ANY($2::bigint[]) THEN 'finalising' ELSE 'running' END,
                        started_at = coalesce(started_at, now()), run_started_at = coalesce(run_started_at, now()),
                        updated_at = now()
        WHERE id = ANY($1::bigint[]) AND (state = 'queued' OR (state = 'running' AND id = ANY($2::bigint[])))
        """
    /// Locks the job of task `$1` (lock order: job, then tasks, then agents); no row when the
    /// task does not exist.
    static let lockJobOfTask = """
        SELECT j.id FROM jobs j WHERE j.id = (SELECT t.job_id FROM tasks t WHERE t.id = $1::bigint) FOR NO KEY UPDATE OF j
        """
    static let clearAgentTask = "UPDATE agents SET current_task = NULL WHERE id = $1::bigint AND current_task = $2::bigint"

    /// The lease fence used by every holder operation: task, epoch and owner all match and
    /// the task is still leased.
    private static let fence = "id = $1::bigint AND epoch = $2::bigint AND lease_owner = $3::bigint AND state = 'leased'"

    /// The holder's sign of life, in the same statement as a heartbeat or progress (after the
    /// task: the store's lock order), whether or not the lease still holds.
    private static let holderAlive = """
        alive AS (
            UPDATE agents SET last_heartbeat = now(), state = CASE WHEN state = 'offline' THEN 'online' ELSE state END
            WHERE id = $3::bigint
        )
        """
    /// Renewal (for `$4` seconds from the farm clock's `$5`) additionally requires the lease not
    /// to have expired (an expired lease is lost even before the expirer has re-queued it).
    /// One statement, one round trip.
    static let renewLease = """
        WITH renewed AS (
            UPDATE tasks SET lease_expires_at = \(at(5)) + $4::double precision * interval '1 second', updated_at = now()
            WHERE \(fence) AND lease_expires_at > \(at(5))
            RETURNING \(ms("lease_expires_at")) AS expires_ms
        ), \(holderAlive)
        SELECT expires_ms FROM renewed
        """
    /// The job of the task whose lease `$1…$3` still holds (no row when it does not).
    static let jobOfLease = "SELECT job_id FROM tasks WHERE \(fence)"
    static let recordProgress = """
        WITH progressed AS (
            UPDATE tasks SET progress_frames = $4::bigint, updated_at = now() WHERE \(fence) RETURNING job_id
        ), \(holderAlive)
        SELECT job_id FROM progressed
        """
    /// Completion is accepted under the current epoch even if the lease just expired but was
    /// not yet re-queued: nobody else can hold the task, so the result is still the one.
    static let completeTask = """
        UPDATE tasks SET state = 'done', result_sha256 = $4, result_size = $5::bigint, result_key = $6,
                         lease_owner = NULL, lease_expires_at = NULL, finished_at = now(), updated_at = now(),
                         progress_frames = frame_end - frame_start, error = NULL
        WHERE \(fence)
        RETURNING job_id, kind, result_key, frame_end - frame_start AS frames
        """
    static let finishJob = """
        UPDATE jobs SET state = 'done', output_key = $2, finished_at = now(), updated_at = now()
        WHERE id = $1::bigint AND state IN ('running', 'finalising')
        """
    static let touchJob = "UPDATE jobs SET updated_at = now() WHERE id = $1::bigint"
    static let failTask = """
        UPDATE tasks SET state = CASE WHEN attempts < max_attempts THEN 'queued' ELSE 'failed' END,
                         error = $4, lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
                         finished_at = CASE WHEN attempts < max_attempts THEN NULL ELSE now() END
        WHERE \(fence)
        RETURNING job_id, state, max_attempts - attempts AS attempts_left
        """
    /// Handing a task back does not use up an attempt.
    static let releaseTask = """
        UPDATE tasks SET state = 'queued', attempts = greatest(attempts - 1, 0), lease_owner = NULL,
                         lease_expires_at = NULL, updated_at = now()
        WHERE \(fence)
        RETURNING job_id
        """
    static let failJob = """
        UPDATE jobs SET state = 'failed', paused = false, error = $2, finished_at = now(), updated_at = now()
        WHERE id = $1::bigint AND state NOT IN ('done', 'failed', 'cancelled')
        """
    /// When a job ends early, its other unfinished tasks stop (holders get LOST).
    static let cancelOpenTasks = """
        UPDATE tasks SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
        WHERE job_id = $1::bigint AND state IN ('queued', 'leased')
        """
    /// Jobs with a lease that has run out by the farm clock's `$1`, in id order (`expireLeases`
    /// handles one job per transaction, locking the job first).
    static let jobsWithExpiredLeases = """
        SELECT DISTINCT job_id FROM tasks WHERE state = 'leased' AND lease_expires_at <= \(at(1)) ORDER BY job_id
        """
    /// Every lease of job `$1` expired by the farm clock's `$2`: re-queued while attempts
    /// remain, else failed.
    static let expireLeasesOfJob = """
        UPDATE tasks t
        SET state = CASE WHEN t.attempts < t.max_attempts THEN 'queued' ELSE 'failed' END,
            error = CASE WHEN t.attempts < t.max_attempts THEN t.error ELSE 'lease expired on the last attempt' END,
            lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
        FROM (SELECT id, lease_owner AS old_owner FROM tasks
              WHERE job_id = $1::bigint AND state = 'leased' AND lease_expires_at <= \(at(2))
              FOR UPDATE SKIP LOCKED) expired
        WHERE t.id = expired.id
        RETURNING t.id, t.job_id, t.epoch, expired.old_owner, t.state
        """
    /// The leases agent `$1` holds (to shorten them when its connection closes).
    static let leasesOfAgent = "SELECT id FROM tasks WHERE lease_owner = $1::bigint AND state = 'leased' ORDER BY id"
    /// A holder's connection closed: its lease on `$1` ends within `$3` seconds of the farm
    /// clock's `$4` unless it comes back and heartbeats (which renews the lease as usual).
    static let shortenLease = """
        UPDATE tasks SET lease_expires_at = least(lease_expires_at, \(at(4)) + $3::double precision * interval '1 second'), updated_at = now()
        WHERE id = $1::bigint AND lease_owner = $2::bigint AND state = 'leased'
        RETURNING \(ms("lease_expires_at")) AS expires_ms
        """
    static let cancelJob = """
        UPDATE jobs SET state = 'cancelled', paused = false, finished_at = now(), updated_at = now()
        WHERE id = $1::bigint AND state NOT IN ('done', 'failed', 'cancelled')
        """
    /// Retry: failed and cancelled tasks get a fresh set of attempts.
    static let requeueTasksForRetry = """
        UPDATE tasks SET state = 'queued', attempts = 0, error = NULL, progress_frames = 0, finished_at = NULL,
                         updated_at = now()
        WHERE job_id = $1::bigint AND state IN ('failed', 'cancelled')
        """
    static let retryJob = """
        UPDATE jobs SET state = 'queued', error = NULL, finished_at = NULL, updated_at = now(),
                        run_started_at = NULL, run_frames_base = frames_done
        WHERE id = $1::bigint AND state IN ('failed', 'cancelled')
        """

    /// A job's progress from its row's counters plus its leased tasks (at most one per agent
    /// slot): the same cost for 10 tasks as for 100,000.
    static let jobSummaryColumns = """
        j.id, j.state, j.error, j.output_key, j.settings, j.priority, j.paused, j.video_encoder,
        \(ms("j.created_at")) AS created_ms, \(ms("j.started_at")) AS started_ms,
        \(ms("j.updated_at")) AS updated_ms, \(ms("j.finished_at")) AS finished_ms,
        \(ms("j.run_started_at")) AS run_started_ms, j.run_frames_base,
        j.render_tasks, j.tasks_done, j.tasks_failed, j.tasks_cancelled, j.frames_total, j.frames_done, j.tasks_reused,
        l.leased, l.frames_in_progress
        """
    private static let leasedOfJob = """
        LEFT JOIN LATERAL (
            SELECT count(*) AS leased,
                   coalesce(sum(least(t.progress_frames, t.frame_end - t.frame_start)) FILTER (WHERE t.kind = 'video_chunk'), 0)
                       AS frames_in_progress
            FROM tasks t WHERE t.job_id = j.id AND t.state = 'leased' AND t.kind <> 'finalise') l ON true
        """
    static let jobSummary = """
        SELECT \(jobSummaryColumns) FROM jobs j \(leasedOfJob) WHERE j.id = $1::bigint
        """
    /// Recent jobs, newest first.
    static let recentJobSummaries = """
        SELECT \(jobSummaryColumns) FROM (SELECT * FROM jobs ORDER BY id DESC LIMIT $1::integer) j \(leasedOfJob) ORDER BY j.id DESC
        """
    static let jobDocuments = "SELECT composition, plan, settings FROM jobs WHERE id = $1::bigint"
    static let tasksOfJob = """
        SELECT id, kind, ordinal, frame_start, frame_end, state, attempts, epoch, result_sha256, result_size, result_key
        FROM tasks WHERE job_id = $1::bigint ORDER BY CASE kind WHEN 'audio' THEN 0 WHEN 'video_chunk' THEN 1 ELSE 2 END, ordinal
        """

    // MARK: Agents

    static let registerAgent = """
        INSERT INTO agents (name, host, capabilities, state, last_heartbeat) VALUES ($1, $2, $3, 'online', now())
        ON CONFLICT (name) DO UPDATE SET host = excluded.host, capabilities = excluded.capabilities,
                                         state = 'online', last_heartbeat = now()
        RETURNING id
        """
    static let setAgentState = "UPDATE agents SET state = $2, current_task = CASE WHEN $2 = 'offline' THEN NULL ELSE current_task END WHERE id = $1::bigint"
    static let listAgents = """
        SELECT id, name, host, capabilities, state, \(ms("last_heartbeat")) AS heartbeat_ms,
               (extract(epoch FROM now() - last_heartbeat) * 1000)::bigint AS age_ms, current_task,
               CASE WHEN quarantined_until > now() THEN \(ms("quarantined_until")) END AS quarantined_ms, last_error,
               (SELECT count(*) FROM task_failures f WHERE f.agent_id = agents.id) AS failures
        FROM agents ORDER BY name
        """

    // MARK: Events

    static let appendEvent = """
        INSERT INTO events (job_id, task_id, agent_id, kind, message) VALUES ($1::bigint, $2::bigint, $3::bigint, $4, $5)
        """
    static let listEvents = """
        SELECT id, job_id, task_id, agent_id, kind, message, \(ms("at")) AS at_ms FROM events
        WHERE ($1::bigint IS NULL OR job_id = $1::bigint) AND id > $2::bigint ORDER BY id LIMIT $3::integer
        """
    /// The newest event of one kind for one job (the job's loudness figures, for `STATUS`).
    static let latestEventOfKind = """
        SELECT message FROM events WHERE job_id = $1::bigint AND kind = $2 ORDER BY id DESC LIMIT 1
        """

    // MARK: Assets

    static let recordAsset = """
        INSERT INTO assets (sha256, size, stored_key) VALUES ($1, $2::bigint, $3)
        ON CONFLICT (sha256) DO NOTHING
        """
    static let asset = "SELECT sha256, size, stored_key FROM assets WHERE sha256 = $1"
    static let missingAssets = """
        SELECT h FROM unnest($1::text[]) AS h WHERE NOT EXISTS (SELECT 1 FROM assets a WHERE a.sha256 = h) ORDER BY h
        """
    // MARK: Planning (coordinator)

    /// Jobs released from `waiting` that have no tasks yet: the coordinator plans them (after
    /// their assets arrived, or after a restart interrupted planning).
    static let unplannedJobs = """
        SELECT j.id FROM jobs j WHERE j.state = 'queued' AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.job_id = j.id)
        ORDER BY j.id
        """
    static let lockJob = "SELECT id FROM jobs WHERE id = $1::bigint FOR NO KEY UPDATE"
    static let jobHasTasks = "SELECT 1 FROM tasks WHERE job_id = $1::bigint LIMIT 1"
    static let setJobPlan = """
        UPDATE jobs SET plan = $2, plan_sha256 = $3, plan_size = $4::bigint, video_encoder = $5, updated_at = now() WHERE id = $1::bigint
        """
    /// Pause (`$2` true) or resume a job that has not ended; returns it when it changed.
    static let setJobPaused = """
        UPDATE jobs SET paused = $2::boolean, updated_at = now()
        WHERE id = $1::bigint AND paused <> $2::boolean RETURNING id
        """
    static let setJobPriority = "UPDATE jobs SET priority = $2::integer, updated_at = now() WHERE id = $1::bigint"
    static let adoptPlanDocument = """
        UPDATE jobs SET plan_sha256 = $2, plan_size = $3::bigint WHERE id = $1::bigint AND plan_sha256 IS NULL
        """
    static let taskLabels = "SELECT id, job_id, frame_start, frame_end FROM tasks WHERE id = ANY($1::bigint[])"
    static let jobStateCounts = "SELECT state, count(*) AS n FROM jobs GROUP BY state"
    static let taskStateCounts = "SELECT state, count(*) AS n FROM tasks GROUP BY state"

    static let waitingJobsForAsset = "SELECT job_id FROM job_assets ja JOIN jobs j ON j.id = ja.job_id WHERE ja.sha256 = $1 AND j.state = 'waiting'"

    // MARK: Quarantine and failure history (issue 8)

    static let recordTaskFailure = """
        INSERT INTO task_failures (task_id, agent_id, agent_name, message)
        VALUES ($1::bigint, $2::bigint, (SELECT name FROM agents WHERE id = $2::bigint), $3)
        """
    /// Who failed a task and why, oldest first (for the job's failure message).
    static let taskFailures = "SELECT agent_name, message FROM task_failures WHERE task_id = $1::bigint ORDER BY id"
    static let taskLabel = "SELECT kind, ordinal FROM tasks WHERE id = $1::bigint"
    /// The agent's FAILs since `$2` (ms since the Unix epoch), and the database's now and the
    /// agent's previous quarantine end, for `QuarantinePolicy`.
    static let agentFailuresSince = """
        SELECT \(ms("f.at")) AS at_ms FROM task_failures f
        WHERE f.agent_id = $1::bigint AND f.at > to_timestamp($2::double precision / 1000) ORDER BY f.at
        """
    static let agentQuarantineState = """
        SELECT \(ms("now()")) AS now_ms, \(ms("quarantined_until")) AS until_ms FROM agents WHERE id = $1::bigint
        """
    static let quarantineAgent = """
        UPDATE agents SET quarantined_until = to_timestamp($2::double precision / 1000), last_error = $3 WHERE id = $1::bigint
        """
    static let setAgentLastError = "UPDATE agents SET last_error = $2 WHERE id = $1::bigint"
    /// Agents offline since before `$1` (ms) and holding no lease; `$2` (the finaliser row) is kept.
    static let forgetOfflineAgents = """
        DELETE FROM agents a
        WHERE a.state = 'offline' AND a.last_heartbeat < to_timestamp($1::double precision / 1000) AND a.name <> $2
          AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.lease_owner = a.id)
        RETURNING a.name
        """

    // MARK: Stored files: verification, retention, deletion (issue 8)

    static let storedAssets = "SELECT sha256, size, stored_key FROM assets WHERE sha256 = ANY($1::text[])"
    static let forgetAsset = "DELETE FROM assets WHERE sha256 = $1"
    /// A queued job not yet planned goes back to waiting (an asset file turned out missing);
    /// `$2` says what to do about it.
    static let returnJobToWaiting = """
        UPDATE jobs SET state = 'waiting', error = $2, updated_at = now()
        WHERE id = $1::bigint AND state = 'queued' AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.job_id = jobs.id)
        """
    /// A done render task whose stored result is missing or damaged is rendered again: queued
    /// with a fresh set of attempts (its next claim bumps the epoch).
    static let requeueDamagedTask = """
        UPDATE tasks SET state = 'queued', attempts = 0, result_sha256 = NULL, result_size = NULL, result_key = NULL,
                         progress_frames = 0, finished_at = NULL, error = $2, updated_at = now(), reused = false
        WHERE id = $1::bigint AND state = 'done' AND kind <> 'finalise'
        RETURNING job_id
        """
    static let reopenFinalisingJob = """
        UPDATE jobs SET state = 'running', updated_at = now() WHERE id = $1::bigint AND state = 'finalising'
        """

    /// Whether jobs that ended before `$1` (ms; NULL keeps every ended job) still count as
    /// needing their files: unfinished jobs always do.
    private static func stillNeeds(_ job: String) -> String {
        """
        (\(job).state NOT IN ('done', 'failed', 'cancelled') OR $1::double precision IS NULL
         OR coalesce(\(job).finished_at, \(job).updated_at) >= to_timestamp($1::double precision / 1000))
        """
    }
    /// Done jobs whose output is older than the cutoff `$1` (ms).
    static let expiredOutputs = """
        SELECT id, output_key FROM jobs
        WHERE state = 'done' AND output_key IS NOT NULL AND finished_at < to_timestamp($1::double precision / 1000)
        ORDER BY id
        """
    static let clearOutput = "UPDATE jobs SET output_key = NULL, updated_at = now() WHERE id = $1::bigint AND output_key = $2"
    /// Chunk results still needed: tasks of unfinished jobs, and of failed or cancelled jobs
    /// ended after the cutoff `$1` (a retry reuses them). A done job needs none: its output is
    /// the product, and a result deleted here is simply rendered again if ever needed.
    /// Chunk results still needed: unfinished jobs', failed or cancelled jobs' ended after `$1`,
    /// done jobs' finished after `$2` (for reuse). A NULL cutoff keeps all.
    static let neededResultHashes = """
        SELECT DISTINCT t.result_sha256 AS h FROM tasks t JOIN jobs j ON j.id = t.job_id
        WHERE t.result_sha256 IS NOT NULL AND t.kind <> 'finalise'
          AND CASE WHEN j.state = 'done'
                   THEN $2::double precision IS NULL OR coalesce(j.finished_at, j.updated_at) >= to_timestamp($2::double precision / 1000)
                   ELSE \(stillNeeds("j")) END
        """
    static let leasedEpochs = "SELECT id, epoch FROM tasks WHERE id = ANY($1::bigint[]) AND state = 'leased'"
    /// Assets still needed: those of unfinished jobs and of jobs ended after the cutoff `$1`.
    static let neededAssetHashes = """
        SELECT DISTINCT ja.sha256 AS h FROM job_assets ja JOIN jobs j ON j.id = ja.job_id WHERE \(stillNeeds("j"))
        """
    /// Forgets the asset `$2` unless a job still needs it (cutoff `$1`); returns whether it is
    /// now unneeded (its file may go).
    static let forgetUnneededAsset = """
        WITH needed AS (SELECT 1 FROM job_assets ja JOIN jobs j ON j.id = ja.job_id WHERE ja.sha256 = $2 AND \(stillNeeds("j"))),
             gone AS (DELETE FROM assets WHERE sha256 = $2 AND NOT EXISTS (SELECT 1 FROM needed) RETURNING 1)
        SELECT NOT EXISTS (SELECT 1 FROM needed) AS unneeded
        """
    static let jobOutputKey = "SELECT output_key FROM jobs WHERE id = $1::bigint"
    static let jobResultHashes = """
        SELECT DISTINCT result_sha256 AS h FROM tasks WHERE job_id = $1::bigint AND result_sha256 IS NOT NULL AND kind <> 'finalise'
        """
    static let deleteJob = "DELETE FROM jobs WHERE id = $1::bigint"
    static let referencedResultHashes = "SELECT DISTINCT result_sha256 AS h FROM tasks WHERE result_sha256 = ANY($1::text[])"
}

// MARK: Batched completions (issue 7)

extension Statements {
    /// The jobs of tasks `$1`, locked in id order (the store's lock order: jobs first, lowest
    /// id first), and touched (`updated_at`: now() is the transaction's start either way).
    static let lockAndTouchJobsOfTasks = """
        WITH locked AS (
            SELECT id FROM jobs WHERE id IN (SELECT job_id FROM tasks WHERE id = ANY($1::bigint[])) ORDER BY id FOR NO KEY UPDATE
        )
        UPDATE jobs j SET updated_at = now() FROM locked WHERE j.id = locked.id
        """
    /// Completes render tasks under their leases: `$1…$6` are parallel arrays (task, epoch,
    /// agent, sha256, size, key). Only rows whose fence matches change; the others are stale.
    /// A task named twice changes once. In the same statement, tasks before agents: each
    /// completing agent no longer holds its task, and one `completed` event per task.
    static let completeTasks = """
        WITH completed AS (
            UPDATE tasks t SET state = 'done', result_sha256 = x.sha256, result_size = x.size, result_key = x.key,
                               lease_owner = NULL, lease_expires_at = NULL, finished_at = now(), updated_at = now(),
                               progress_frames = t.frame_end - t.frame_start, error = NULL
            FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::text[])
                 AS x(task, epoch, agent, sha256, size, key)
            WHERE t.id = x.task AND t.epoch = x.epoch AND t.lease_owner = x.agent AND t.state = 'leased' AND t.kind <> 'finalise'
            RETURNING t.id, t.job_id, t.kind, t.frame_end - t.frame_start AS frames, x.agent, x.size, x.sha256
        ), released AS (
            UPDATE agents a SET current_task = NULL FROM completed c WHERE a.id = c.agent AND a.current_task = c.id
        ), logged AS (
            INSERT INTO events (job_id, task_id, agent_id, kind, message)
            SELECT c.job_id, c.id, c.agent, 'completed', c.size || ' bytes sha256 ' || c.sha256 FROM completed c
        )
        SELECT id, job_id, kind, frames FROM completed
        """
    /// Which of jobs `$1` have every render task done (their finalise task is claimable).
    static let jobsRendered = """
        SELECT id FROM jobs WHERE id = ANY($1::bigint[]) AND tasks_done = render_tasks AND state IN ('queued', 'running')
        """
}
