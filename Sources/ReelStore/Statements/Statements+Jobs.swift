import ReelScheduling
// Job and task records (`JobStore`): creating jobs and their tasks, the job's documents,
// summaries for STATUS, deletion. No state transition here (`Statements+Lifecycle.swift`).

extension Statements {
    /// A job's row, and its documents (composition `$2`, settings `$4`) in `job_documents`,
    /// written once: the row the lifecycle updates many times stays small (migration 20).
    static let insertJob = """
        WITH job AS (
            INSERT INTO jobs (state, plan, priority, batch_id, batch_row, budget, budget_unit)
            VALUES ($1, $3, $5::integer, $6::bigint, $7::integer, $8::double precision, $9) RETURNING id
        ), documents AS (
            INSERT INTO job_documents (job_id, composition, settings) SELECT id, $2, $4 FROM job
        )
        SELECT id FROM job
        """
    /// A job's tasks in one statement: `$2…$11` are parallel arrays, one element per task
    /// (kind, ordinal, frames, spec, attempts, content key, reused result). A task with a
    /// result (`$9…$11` not NULL) is created done with it (reused: never rendered), which the
    /// insert trigger counts.
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
        RETURNING id, kind, ordinal
        """
    /// The renditions of ladder chunk tasks, one row each (`TaskRendition`).
    static let insertTaskRenditions = """
        INSERT INTO task_renditions (task_id, position, name, rendition_key, source_sha256, source_size, source_key)
        SELECT * FROM unnest($1::bigint[], $2::integer[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[])
        """
    /// The renditions of job `$1`'s tasks, by task and position.
    static let renditionsOfJob = """
        SELECT r.task_id, r.position, r.name, r.rendition_key, r.source_sha256, r.source_size, r.source_key
        FROM task_renditions r JOIN tasks t ON t.id = r.task_id WHERE t.job_id = $1::bigint ORDER BY r.task_id, r.position
        """
    /// Job `$1`'s renditions taken from the archives `$2` become their tasks' own (re-encoded).
    static let releaseRenditionSources = """
        UPDATE task_renditions r SET source_sha256 = NULL, source_size = NULL, source_key = NULL
        FROM tasks t WHERE t.id = r.task_id AND t.job_id = $1::bigint AND r.source_sha256 = ANY($2::text[])
        """
    /// The number of job `$1`'s tasks done from a reused result.
    private static let reusedTaskCount = "(SELECT count(*) FROM tasks WHERE job_id = $1::bigint AND reused)"
    /// `tasks_reused` of job `$1` recounted (a reused result found damaged is rendered after all).
    static let countReusedTasks = """
        UPDATE jobs SET tasks_reused = \(reusedTaskCount) WHERE id = $1::bigint
        """
    /// After splitting job `$1` with reused tasks: count them, and leave their frames out of
    /// the run's speed (they were not rendered by this run).
    static let recordReusedAtSplit = """
        UPDATE jobs SET tasks_reused = \(reusedTaskCount), run_frames_base = frames_done
        WHERE id = $1::bigint
        """
    /// Job `$1` reads the content of hash `$2` (hex; stored as its 32 bytes, migration 20).
    static let insertJobAsset = "INSERT INTO job_assets (job_id, sha256) VALUES ($1::bigint, decode($2, 'hex')) ON CONFLICT DO NOTHING"

    /// Jobs released from `waiting` that have no tasks yet: the coordinator splits them (after
    /// their assets arrived, or after a restart interrupted splitting). A batch's rows held
    /// for its first row (`heldForBatchLead`) wait for it.
    static let jobsWithoutTasks = """
        SELECT j.id FROM jobs j WHERE j.state = 'queued' AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.job_id = j.id)
          AND NOT coalesce(\(heldForBatchLead), false)
        ORDER BY j.id
        """
    static let lockJob = "SELECT id FROM jobs WHERE id = $1::bigint FOR NO KEY UPDATE"
    static let jobHasTasks = "SELECT 1 FROM tasks WHERE job_id = $1::bigint LIMIT 1"
    /// The job's render plan (as agents get it), its stored document and the encoder its video
    /// chunks need.
    /// Job `$1`'s render plan, as it is planned: with its turn among the jobs of its priority
    /// (`assignClaimTurn`).
    static let setJobRenderPlan = """
        \(claimTurnOfJob)
        UPDATE jobs SET plan = $2, plan_sha256 = $3, plan_size = $4::bigint, video_encoder = $5, updated_at = now(),
                        claim_turn = \(claimTurn)
        WHERE id = $1::bigint
        """
    static let adoptRenderPlanDocument = """
        UPDATE jobs SET plan_sha256 = $2, plan_size = $3::bigint WHERE id = $1::bigint AND plan_sha256 IS NULL
        """

    /// A job's progress from its row's counters plus its leased tasks (at most one per agent
    /// slot): the same cost for 10 tasks as for 100,000.
    static let jobSummaryColumns = """
        j.id, j.state, j.error, j.output_key, (SELECT d.settings FROM job_documents d WHERE d.job_id = j.id) AS settings, j.priority, j.paused, j.pause_reason, j.budget, j.budget_unit, j.video_encoder,
        \(ms("j.created_at")) AS created_ms, \(ms("j.started_at")) AS started_ms,
        \(ms("j.updated_at")) AS updated_ms, \(ms("j.finished_at")) AS finished_ms,
        \(ms("j.run_started_at")) AS run_started_ms, j.run_frames_base,
        j.render_tasks, j.tasks_done, j.tasks_failed, j.tasks_cancelled, j.frames_total, j.frames_done, j.tasks_reused,
        l.leased, l.frames_in_progress
        """
    static let leasedOfJob = """
        LEFT JOIN LATERAL (
            SELECT count(*) AS leased,
                   coalesce(sum(least(t.progress_frames, t.frame_end - t.frame_start)) FILTER (WHERE t.kind IN \(frameCountingKinds)), 0)
                       AS frames_in_progress
            FROM tasks t WHERE t.job_id = j.id AND t.state = 'leased' AND t.kind NOT IN \(jobEndingKinds)) l ON true
        """
    static let jobSummary = """
        SELECT \(jobSummaryColumns) FROM jobs j \(leasedOfJob) WHERE j.id = $1::bigint
        """
    /// Recent jobs, newest first.
    static let recentJobSummaries = """
        SELECT \(jobSummaryColumns) FROM (SELECT * FROM jobs ORDER BY id DESC LIMIT $1::integer) j \(leasedOfJob) ORDER BY j.id DESC
        """
    /// The time agents spent on job `$1`'s tasks, in milliseconds: for each task an agent
    /// claimed and that has ended, from its latest claim to its end. Reused tasks were never
    /// claimed; a finaliser run by the coordinator itself is not claimed either.
    static let jobAgentMilliseconds = """
        SELECT coalesce(sum(\(ms("finished_at")) - \(ms("claimed_at"))), 0) AS agent_ms FROM tasks
        WHERE job_id = $1::bigint AND claimed_at IS NOT NULL AND finished_at IS NOT NULL AND NOT reused
        """
    /// The agent time of task `t`, in milliseconds: from its latest claim to its end, or to now
    /// while it is leased; NULL for a task no agent holds or held to an end (never claimed,
    /// reused, or queued again after an attempt that failed or expired). A result is uploaded
    /// before it completes its task (`RESULT`, the last `RESULTPART`, or `RESULTDONE` after a
    /// direct upload), so the upload is inside this time in both storage modes.
    /// `now`: the time a leased task counts to (the database's, or a `FarmClock` reading: `at(n)`).
    static func taskAgentMilliseconds(_ t: String, now: String = "now()") -> String {
        """
        CASE WHEN \(t).claimed_at IS NULL OR \(t).reused THEN NULL
             WHEN \(t).finished_at IS NOT NULL THEN greatest(\(ms("\(t).finished_at")) - \(ms("\(t).claimed_at")), 0)
             WHEN \(t).state = 'leased' THEN greatest(\(ms(now)) - \(ms("\(t).claimed_at")), 0) END
        """
    }
    /// The price an hour of the agent that claimed task `t` (its slot's), as it was at the claim
    /// (`agent_prices`), as `price.cost_per_hour`; NULL when it named none.
    static func taskPrice(_ t: String) -> String {
        """
        LEFT JOIN LATERAL (
            SELECT p.cost_per_hour FROM agent_prices p
            WHERE p.agent_id = \(t).last_agent AND p.since <= \(t).claimed_at ORDER BY p.since DESC LIMIT 1) price ON true
        """
    }
    /// What job `$1` cost so far: its tasks' agent time (`taskAgentMilliseconds`), of which
    /// running (leased now), and its cost at each task's agent price (NULL when no task ran on a
    /// priced agent), with the count of tasks whose agent named no price. Read when a job's
    /// status is, never on a claim or a result.
    static let jobCost = costOfJob("$1::bigint")
    static func costOfJob(_ job: String, now: String = "now()") -> String {
        """
        SELECT coalesce(sum(c.agent_ms), 0)::bigint AS agent_ms,
               coalesce(sum(c.agent_ms) FILTER (WHERE c.leased), 0)::bigint AS running_ms,
               sum(c.agent_ms * price.cost_per_hour) / 3600000.0 AS cost,
               count(*) FILTER (WHERE price.cost_per_hour IS NULL) AS unpriced
        FROM (SELECT t.last_agent, t.claimed_at, t.state = 'leased' AS leased, \(taskAgentMilliseconds("t", now: now)) AS agent_ms
              FROM tasks t WHERE t.job_id = \(job)) c
        \(taskPrice("c"))
        WHERE c.agent_ms IS NOT NULL
        """
    }
    /// Job `$1`'s budget (NULL: none), its state and pause, and what it has spent in the
    /// budget's unit (`jobCost`'s figures, its leased tasks counting to the farm clock's `$2`):
    /// money for a money budget (agents without a price cost nothing), agent-milliseconds for
    /// agent-hours. Read only for jobs with a budget: the budget service's checks, a result of
    /// such a job, `BUDGET`.
    static let jobBudgetSpent = """
        SELECT j.budget, j.budget_unit, j.state, j.paused, j.pause_reason,
               CASE WHEN j.budget_unit = 'money' THEN coalesce(c.cost, 0) ELSE c.agent_ms END::double precision AS spent
        FROM jobs j CROSS JOIN LATERAL (\(costOfJob("j.id", now: at(2)))) c
        WHERE j.id = $1::bigint
        """
    /// The jobs with a budget that have not ended (the `jobs_budgeted` index: few rows or none).
    static let budgetedActiveJobs = """
        SELECT id FROM jobs WHERE budget IS NOT NULL AND state IN \(activeJobStates) ORDER BY id
        """

    /// The farm's history for estimates (`reel estimate`): the `$1` most recent done jobs that
    /// agents rendered whole (no chunk reused) and that have a render plan (inline, or only in
    /// its stored document), newest first, with their plan and what they cost (`jobCost`).
    /// Read per estimate, never on a claim.
    static let renderHistory = """
        SELECT j.id, j.plan, j.plan_sha256, j.plan_size, c.agent_ms, c.cost
        FROM (SELECT id, plan, plan_sha256, plan_size FROM jobs
              WHERE state = 'done' AND tasks_reused = 0 AND (plan NOT IN ('{}', '') OR plan_sha256 IS NOT NULL)
              ORDER BY id DESC LIMIT $1::integer) j
        CROSS JOIN LATERAL (\(costOfJob("j.id"))) c
        WHERE c.agent_ms > 0
        ORDER BY j.id DESC
        """
    static let jobDocuments = """
        SELECT d.composition, j.plan, d.settings, j.plan_sha256, j.plan_size FROM jobs j JOIN job_documents d ON d.job_id = j.id
        WHERE j.id = $1::bigint
        """
    static let tasksOfJob = """
        SELECT id, kind, ordinal, frame_start, frame_end, state, attempts, epoch, result_sha256, result_size, result_key
        FROM tasks WHERE job_id = $1::bigint ORDER BY \(claimRank("kind")), ordinal
        """
    static let taskLabels = "SELECT id, job_id, frame_start, frame_end FROM tasks WHERE id = ANY($1::bigint[])"
    /// The farm's work for a scaler, per active job, without reading its queued tasks (a
    /// 15,000-chunk queue is read every few seconds): its open render tasks from the job's
    /// counters (render tasks not done, failed or cancelled: queued or leased), its leased tasks
    /// by kind (the partial index of leased tasks: as many rows as agents at work), and its
    /// queued audio and finalise tasks (a few rows of the `(job_id, kind)` index). On 16 jobs of
    /// 7,200 queued chunks each: 0.8 ms, against 190 ms for counting the tasks themselves.
    static let workload = """
        WITH active AS (
            SELECT id, video_encoder, paused, tasks_done = render_tasks AS rendered,
                   render_tasks - tasks_done - tasks_failed - tasks_cancelled AS open_render
            FROM jobs WHERE state IN \(activeJobStates)
        ), leased AS (
            SELECT t.job_id, t.kind, count(*) AS n FROM tasks t
            WHERE t.state = 'leased' AND t.job_id IN (SELECT id FROM active) GROUP BY t.job_id, t.kind
        )
        SELECT a.video_encoder, a.paused, a.rendered, a.open_render,
               coalesce((SELECT n FROM leased l WHERE l.job_id = a.id AND l.kind = 'video_chunk'), 0) AS video_leased,
               coalesce((SELECT n FROM leased l WHERE l.job_id = a.id AND l.kind = 'audio'), 0) AS audio_leased,
               coalesce((SELECT n FROM leased l WHERE l.job_id = a.id AND l.kind = 'finalise'), 0) AS finalise_leased,
               (SELECT count(*) FROM tasks t WHERE t.job_id = a.id AND t.kind = 'audio' AND t.state = 'queued') AS audio_queued,
               (SELECT count(*) FROM tasks t WHERE t.job_id = a.id AND t.kind = 'finalise' AND t.state = 'queued') AS finalise_queued
        FROM active a
        """
    static let jobStateCounts = "SELECT state, count(*) AS n FROM jobs GROUP BY state"
    static let taskStateCounts = "SELECT state, count(*) AS n FROM tasks GROUP BY state"

    static let jobOutputKey = "SELECT output_key FROM jobs WHERE id = $1::bigint"
    /// Job `$1`'s results, with the ladder archives its chunks took renditions from.
    static let jobResultHashes = """
        SELECT result_sha256 AS h FROM tasks
        WHERE job_id = $1::bigint AND result_sha256 IS NOT NULL AND kind NOT IN \(jobEndingKinds)
        UNION
        SELECT r.source_sha256 FROM task_renditions r JOIN tasks t ON t.id = r.task_id
        WHERE t.job_id = $1::bigint AND r.source_sha256 IS NOT NULL
        """
    /// A job and everything that is its: its tasks (with their failures and renditions, by
    /// their keys' cascade), its events and its documents, which name their job without a
    /// foreign key (migrations 13, 16 and 20), and its notification (cascade).
    static let deleteJob = """
        WITH gone AS (DELETE FROM tasks WHERE job_id = $1::bigint),
             forgotten AS (DELETE FROM events WHERE job_id = $1::bigint),
             documents AS (DELETE FROM job_documents WHERE job_id = $1::bigint)
        DELETE FROM jobs WHERE id = $1::bigint
        """
    /// Those of `$1` some task still has as its result or takes ladder renditions from.
    static let referencedResultHashes = """
        SELECT result_sha256 AS h FROM tasks WHERE result_sha256 = ANY($1::text[])
        UNION
        SELECT source_sha256 FROM task_renditions WHERE source_sha256 = ANY($1::text[])
        """
}
