import ReelScheduling
// The task and job lifecycle: every statement that changes a task's or a job's state, its
// lease, attempts or epoch. This file is where the farm's transition rules are written, once;
// `LifecycleStore` runs these statements (in the store's lock order) and nothing else writes
// `tasks.state`, `jobs.state` or a lease. Each rule has its counterpart in the independent
// model (`ReelLifecycleModel`'s `TaskLifecycle`, `JobLifecycle`, `FarmModel`, named in each
// comment) that `ModelBasedStoreTests` holds these statements to (docs/task-lifecycle.md).

extension Statements {
    // MARK: Claims (model: `FarmModel.claim`, `TaskLifecycle.claim`, `JobLifecycle.taskClaimed`)

    /// Claim, step 1 (`LifecycleStore.claimTasks`): which agents are quarantined (they get
    /// nothing, and do not count as "another live agent" for a task someone failed: read from
    /// the `agents_quarantined` index, few rows or none, rather than checking every live agent
    /// on every claim, which cost a 1,000-element array a claim with 1,000 agents), and
    /// the jobs with a queued task of the kinds in `$1`, in claim order (priority, then age):
    /// active, unpaused, with whether every render task is done (only then is a task that ends
    /// the job claimable) and the encoder its video chunks need. Always at least one row (job
    /// columns NULL when none), so the quarantine answer comes in the same round trip. At most
    /// `LifecycleStore.jobsPageSize` jobs (written into the statement, so that its generic plan
    /// knows it): `claimableJobsAfter` reads on when they are not enough.
    static let claimableJobs = """
        WITH quarantine AS (
            SELECT coalesce(array_agg(id), '{}') AS ids FROM agents WHERE quarantined_until > now()
        )
        SELECT q.ids AS quarantined, j.id, j.priority, j.claim_turn, j.rendered, j.video_encoder
        FROM quarantine q LEFT JOIN (\(claimableJobsPage(after: false))) j ON true
        ORDER BY j.priority DESC, j.claim_turn, j.id
        """
    /// Claim, step 1 continued, when the first page of jobs left agents without a task: the
    /// next page of claimable jobs after the job of priority `$2`, turn `$4` and id `$3`, in claim order.
    static let claimableJobsAfter = claimableJobsPage(after: true)
    /// Up to `LifecycleStore.jobsPageSize` claimable jobs in claim order (priority, then turn, then age: `ClaimPolicy`),
    /// from the `jobs_claim_order` index: a claim reads the first few jobs, not every active one
    /// (a batch queues thousands). A job without a turn has not been planned: nothing to claim.
    /// Whether a job has a queued task is its first entry in `tasks_claim_order` (a scalar
    /// subquery in that index's order, so that it is planned as that index probe: as `EXISTS`
    /// it became a semi-join that PostgreSQL, its statistics saying a fresh job's tasks are
    /// all queued, ran as a sequential scan of the tasks from the start of the table, through
    /// every task claimed since: 6.5 ms a claim with 1,000 agents on one 14,400-chunk job).
    static func claimableJobsPage(after: Bool) -> String {
        """
        SELECT id, priority, claim_turn, tasks_done = render_tasks AS rendered, video_encoder FROM jobs
        WHERE state IN \(activeJobStates) AND NOT paused AND claim_turn IS NOT NULL
          \(after ? "AND (priority < $2::integer OR (priority = $2::integer AND (claim_turn, id) > ($4::bigint, $3::bigint)))" : "")
          AND (SELECT t.id FROM tasks t WHERE t.job_id = jobs.id AND t.state = 'queued' AND t.kind = ANY($1::text[])
               ORDER BY t.job_id, \(claimRank("t.kind")), t.ordinal, t.id LIMIT 1) IS NOT NULL
        ORDER BY priority DESC, claim_turn, id
        LIMIT \(LifecycleStore.jobsPageSize)
        """
    }
    /// A job planned now takes its turn among the jobs of its priority (`ClaimTurns`; model:
    /// `FarmModel.submit`): a job of its own the head's (the lowest turn of the jobs there that
    /// accept claims, 0 when none), a batch's row the turn after its batch's previous row and
    /// not before the head (the batch's `next_turn` advances). Job `$1`, locked by the caller.
    static let assignClaimTurn = "\(claimTurnOfJob) UPDATE jobs SET claim_turn = \(claimTurn) WHERE id = $1::bigint"
    /// `assignClaimTurn`'s parts, for statements that plan a job (`setJobRenderPlan`): the CTEs
    /// (`WITH head …, unit …`) and the turn they give job `$1`.
    static let claimTurn = "coalesce((SELECT turn FROM unit), (SELECT turn FROM head))"
    static let claimTurnOfJob = """
        WITH head AS (
            SELECT coalesce((SELECT h.claim_turn FROM jobs h
                             WHERE h.priority = j.priority AND h.state IN \(activeJobStates) AND NOT h.paused
                               AND h.claim_turn IS NOT NULL AND h.id <> j.id
                             ORDER BY h.claim_turn LIMIT 1), 0) AS turn, j.batch_id
            FROM jobs j WHERE j.id = $1::bigint
        ), unit AS (
            UPDATE batches b SET next_turn = greatest(b.next_turn, head.turn) + 1
            FROM head WHERE b.id = head.batch_id
            RETURNING b.next_turn - 1 AS turn
        )
        """
    /// Claim, step 2, per job in claim order until enough: up to `limit` claimable tasks of job
    /// `$1` (priority `$4`) of the kinds in `$2` (one that ends the job only if `$3`, every render
    /// task done), in the job's order (`TaskKind.claimRank`, ordinal) straight from the
    /// `tasks_claim_order` index (a plain read: the lease statement locks what it leases).
    /// Returned with the agents that failed each one, for `ClaimPolicy`, which decides who gets what.
    /// The limit is written into the statement, one of `claimCandidatesLimits`: the dispatcher's
    /// connection runs generic plans (planned once, not at every claim), and a generic plan
    /// of `LIMIT $n` guesses a tenth of the job's tasks, for which sorting them all looked
    /// cheaper than the index (11 ms a call on a 14,400-chunk job).
    static func claimCandidatesOfJob(limit: Int) -> String {
        claimCandidatesOfJobStatements[claimCandidatesLimits.firstIndex(of: limit)!]
    }
    /// The limits `claimCandidatesOfJob` is prepared with; a claim asks for the first at least as
    /// large as it needs (`claimCandidatesLimit`: a batch of claims is at most a few hundred).
    static let claimCandidatesLimits = [16, 64, 256, 1_024, 4_096]
    static func claimCandidatesLimit(atLeast wanted: Int) -> Int {
        claimCandidatesLimits.first { $0 >= wanted } ?? claimCandidatesLimits.last!
    }
    static let claimCandidatesOfJobStatements = claimCandidatesLimits.map { claimCandidatesOfJobText.replacingOccurrences(of: "LIMIT $5", with: "LIMIT \($0)") }
    private static let claimCandidatesOfJobText = """
        WITH candidate AS (
            SELECT t.id, t.job_id, t.kind, t.ordinal, $4::integer AS priority
            FROM tasks t
            WHERE t.job_id = $1::bigint AND t.state = 'queued' AND t.kind = ANY($2::text[])
              AND (t.kind NOT IN \(jobEndingKinds) OR $3::boolean)
            ORDER BY \(claimRank("t.kind")), t.ordinal, t.id
            LIMIT $5
        )
        SELECT c.id, c.job_id, c.kind, c.ordinal, c.priority,
               coalesce((SELECT array_agg(DISTINCT f.agent_id) FROM task_failures f
                         WHERE f.task_id = c.id AND f.agent_id IS NOT NULL), '{}') AS failed_agents
        FROM candidate c
        """
    /// Claim, step 3, in one statement: lease task `$1[i]` to agent `$2[i]` for `$3` seconds
    /// from the farm clock's `$4` under the next epoch, using up one attempt; count the claim as
    /// its agent's sign of life (an offline agent is online again; the heartbeat time is written
    /// when older than a second, so agents claiming back to back do not rewrite their row on
    /// every claim); append one `claimed` event per lease. Tasks are updated before agents (the store's lock order). Returns each lease with
    /// its job's state, so the caller marks jobs running only when one was still queued, and,
    /// for a ladder chunk some of whose renditions are reused, the names of those it encodes
    /// (a JSON array; NULL: every rendition, or no ladder), so the `TASK` needs no query of its own.
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
            UPDATE agents a SET last_heartbeat = now(), state = CASE WHEN a.state = 'offline' THEN 'online' ELSE a.state END
            FROM (SELECT DISTINCT lease_owner FROM leased) l
            WHERE a.id = l.lease_owner AND (a.state = 'offline' OR a.last_heartbeat < now() - interval '1 second')
        ), claim_events AS (
            INSERT INTO events (job_id, task_id, agent_id, kind, message)
            SELECT l.job_id, l.id, l.lease_owner, 'claimed', 'epoch ' || l.epoch || ', attempt ' || l.attempts FROM leased l
        )
        SELECT l.*,
               (SELECT CASE WHEN count(*) = count(*) FILTER (WHERE r.source_sha256 IS NULL) THEN NULL
                            ELSE coalesce(json_agg(r.name ORDER BY r.position) FILTER (WHERE r.source_sha256 IS NULL), '[]')::text END
                FROM task_renditions r WHERE r.task_id = l.id) AS renditions_to_encode
        FROM leased l
        """
    /// After a claim commits, in a transaction of its own (a claim holds task locks and must
    /// never wait for a job row): the jobs `$1` start running, those in `$2` (a task that ends
    /// the job was claimed) finalising. A coordinator that stopped between a claim and this
    /// leaves the job queued until its next claim (at the latest its finalise claim) marks it.
    static let markJobsClaimed = """
        UPDATE jobs SET state = CASE WHEN id = ANY($2::bigint[]) THEN 'finalising' ELSE 'running' END,
                        started_at = coalesce(started_at, now()), run_started_at = coalesce(run_started_at, now()),
                        updated_at = now()
        WHERE id = ANY($1::bigint[]) AND (state = 'queued' OR (state = 'running' AND id = ANY($2::bigint[])))
        """

    // MARK: The holder's operations, fenced (model: `TaskLifecycle.renew`, `.complete`, `.fail`, `.release`)

    /// Locks the job of task `$1` (lock order: job, then tasks, then agents); no row when the
    /// task does not exist.
    static let lockJobOfTask = """
        SELECT j.id FROM jobs j WHERE j.id = (SELECT t.job_id FROM tasks t WHERE t.id = $1::bigint) FOR NO KEY UPDATE OF j
        """
    /// The lease fence of every holder operation: task `$1`, epoch `$2` and owner `$3` all
    /// match and the task is still leased (model: `TaskLifecycle.check`).
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
    /// to have run out, the reconnect grace of a disconnected holder included (an expired lease
    /// is lost even before the expirer has re-queued it). A holder that reconnected renews
    /// this way. One statement, one round trip.
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
    static let kindOfLease = "SELECT kind FROM tasks WHERE \(fence)"
    /// Frames done, from the holder (it does not renew the lease).
    static let recordProgress = """
        WITH progressed AS (
            UPDATE tasks SET progress_frames = $4::bigint, updated_at = now() WHERE \(fence) RETURNING job_id
        ), \(holderAlive)
        SELECT job_id FROM progressed
        """
    /// The jobs of tasks `$1`, locked in id order (the store's lock order: jobs first, lowest
    /// id first), and touched (`updated_at`: now() is the transaction's start either way).
    /// Returns those with a budget (no row for a job without one): their results are checked
    /// against it after the commit, while a result of a job without a budget costs nothing more.
    static let lockAndTouchJobsOfTasks = """
        WITH locked AS (
            SELECT id FROM jobs WHERE id IN (SELECT job_id FROM tasks WHERE id = ANY($1::bigint[])) ORDER BY id FOR NO KEY UPDATE
        )
        UPDATE jobs j SET updated_at = now() FROM locked WHERE j.id = locked.id
        RETURNING CASE WHEN j.budget IS NOT NULL THEN j.id END AS budgeted
        """
    /// Completes tasks under their leases: `$1…$6` are parallel arrays (task, epoch, agent,
    /// sha256, size, key), one element per distinct lease. Only rows whose fence matches change;
    /// the others are stale. Accepted under the current epoch even if the lease just ran out but
    /// was not yet re-queued: nobody else can hold the task, so the result is still the one.
    /// In the same statement, tasks before agents: each completing agent no longer holds its
    /// task, one `completed` event per task, and a completed task that ends its job completes
    /// the job, whose output is that task's result.
    static let completeTasks = """
        WITH completed AS (
            UPDATE tasks t SET state = 'done', result_sha256 = x.sha256, result_size = x.size, result_key = x.key,
                               lease_owner = NULL, lease_expires_at = NULL, finished_at = now(), updated_at = now(),
                               progress_frames = t.frame_end - t.frame_start, error = NULL
            FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::text[])
                 AS x(task, epoch, agent, sha256, size, key)
            WHERE t.id = x.task AND t.epoch = x.epoch AND t.lease_owner = x.agent AND t.state = 'leased'
            RETURNING t.id, t.job_id, t.kind, t.frame_end - t.frame_start AS frames, x.epoch, x.agent, x.size, x.sha256, x.key
        ), logged AS (
            INSERT INTO events (job_id, task_id, agent_id, kind, message)
            SELECT c.job_id, c.id, c.agent, 'completed', c.size || ' bytes sha256 ' || c.sha256 FROM completed c
        ), finished AS (
            UPDATE jobs j SET state = 'done', paused = false, pause_reason = NULL, output_key = c.key, finished_at = now(), updated_at = now()
            FROM completed c WHERE j.id = c.job_id AND c.kind IN \(jobEndingKinds) AND j.state IN ('running', 'finalising')
            RETURNING j.id
        )
        SELECT c.id, c.job_id, c.kind, c.frames, c.epoch, c.agent, c.job_id IN (SELECT id FROM finished) AS job_done
        FROM completed c
        """
    /// Which of jobs `$1` have every render task done (a task that ends the job is claimable).
    static let jobsRendered = """
        SELECT id FROM jobs WHERE id = ANY($1::bigint[]) AND tasks_done = render_tasks AND state IN ('queued', 'running')
        """
    /// A failed attempt: queued again while attempts remain, else failed (and so must its job).
    static let failTask = """
        UPDATE tasks SET state = CASE WHEN attempts < max_attempts THEN 'queued' ELSE 'failed' END,
                         error = $4, lease_owner = NULL, lease_expires_at = NULL, updated_at = now(),
                         finished_at = CASE WHEN attempts < max_attempts THEN NULL ELSE now() END
        WHERE \(fence)
        RETURNING job_id, kind, ordinal, state = 'failed' AS exhausted, max_attempts - attempts AS attempts_left
        """
    /// Handing a task back (draining, a claim that ended before its task was sent, the finaliser
    /// waiting for re-rendered results) does not use up an attempt.
    static let releaseTask = """
        UPDATE tasks SET state = 'queued', attempts = greatest(attempts - 1, 0), lease_owner = NULL,
                         lease_expires_at = NULL, updated_at = now()
        WHERE \(fence)
        RETURNING job_id
        """

    // MARK: Expiry and disconnection (model: `TaskLifecycle.expire`, `.holderDisconnected`, `FarmModel.expireLeases`)

    /// Jobs with a lease that has run out by the farm clock's `$1`, in id order (`expireLeases`
    /// handles one job per transaction, locking the job first).
    static let jobsWithExpiredLeases = """
        SELECT DISTINCT job_id FROM tasks WHERE state = 'leased' AND lease_expires_at <= \(at(1)) ORDER BY job_id
        """
    /// Every lease of job `$1` run out by the farm clock's `$2`: re-queued while attempts
    /// remain, else failed (and so must its job). The attempt is used up.
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
    /// clock's `$4` (the reconnect grace) unless it comes back and heartbeats first, which
    /// renews the lease as usual.
    static let shortenLease = """
        UPDATE tasks SET lease_expires_at = least(lease_expires_at, \(at(4)) + $3::double precision * interval '1 second'), updated_at = now()
        WHERE id = $1::bigint AND lease_owner = $2::bigint AND state = 'leased'
        RETURNING \(ms("lease_expires_at")) AS expires_ms
        """

    // MARK: Damaged results (model: `FarmModel.resultsDamaged`, `TaskLifecycle.resultLost`)

    /// The done render tasks among `$2` of job `$1` whose stored results are missing or damaged
    /// are rendered again: queued with a fresh set of attempts (the agent did nothing wrong; the
    /// next claim bumps the epoch), one `requeued` event each with the reason `$3`.
    static let requeueDamagedTasks = """
        WITH requeued AS (
            UPDATE tasks SET state = 'queued', attempts = 0, result_sha256 = NULL, result_size = NULL, result_key = NULL,
                             progress_frames = 0, finished_at = NULL, error = $3, updated_at = now(), reused = false
            WHERE job_id = $1::bigint AND id = ANY($2::bigint[]) AND state = 'done' AND kind NOT IN \(jobEndingKinds)
            RETURNING id
        ), logged AS (
            INSERT INTO events (job_id, task_id, kind, message) SELECT $1::bigint, id, 'requeued', $3 FROM requeued
        )
        SELECT id FROM requeued
        """
    /// A finalising job whose render tasks were re-queued runs again.
    static let reopenFinalisingJob = """
        UPDATE jobs SET state = 'running', updated_at = now() WHERE id = $1::bigint AND state = 'finalising'
        """

    // MARK: Operator actions on jobs (model: `JobLifecycle.cancel`, `.retry`, `.setPaused`, `.setPriority`)

    /// Locks job `$1` and reads its state (lock order: job first); no row when there is no such job.
    static let lockedJobState = "SELECT state FROM jobs WHERE id = $1::bigint FOR NO KEY UPDATE"
    /// Cancels a job that has not ended; returns it when it did. One row whatever the job's
    /// size: its open tasks are cancelled after the reply (`stopOpenTasks`, flagged by
    /// `tasks_to_stop`); until then none of them is claimed, since claims read only active jobs.
    static let cancelJob = """
        UPDATE jobs SET state = 'cancelled', paused = false, pause_reason = NULL, finished_at = now(), updated_at = now(), tasks_to_stop = true
        WHERE id = $1::bigint AND state NOT IN \(terminalJobStates) RETURNING id
        """
    /// Up to `$2` open tasks of job `$1`, cancelled while it has ended with `tasks_to_stop` set:
    /// the job is locked first (the store's lock order), the tasks with `SKIP LOCKED` (a task a
    /// heartbeat or result holds right now is left for the next batch). The flag is cleared
    /// with the batch that leaves no open task. Returns how many it cancelled.
    static let stopOpenTasks = """
        WITH job AS (
            SELECT id FROM jobs WHERE id = $1::bigint AND state IN \(terminalJobStates) AND tasks_to_stop FOR NO KEY UPDATE
        ), open AS (
            SELECT t.id FROM tasks t JOIN job ON t.job_id = job.id WHERE t.state IN ('queued', 'leased')
            LIMIT $2::integer FOR UPDATE OF t SKIP LOCKED
        ), stopped AS (
            UPDATE tasks t SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
            FROM open WHERE t.id = open.id RETURNING t.id
        ), finished AS (
            UPDATE jobs j SET tasks_to_stop = false FROM job
            WHERE j.id = job.id AND NOT EXISTS (SELECT 1 FROM tasks o WHERE o.job_id = job.id AND o.state IN ('queued', 'leased')
                                                                      AND o.id NOT IN (SELECT id FROM stopped))
        )
        SELECT count(*) AS stopped FROM stopped
        """
    /// The ended jobs whose open tasks are still to be cancelled (a coordinator stopped between
    /// a cancel's reply and its sweep).
    static let jobsWithTasksToStop = "SELECT id FROM jobs WHERE tasks_to_stop ORDER BY id"
    /// When a job ends early (cancelled or failed), its unfinished tasks stop (holders get LOST).
    static let cancelOpenTasks = """
        UPDATE tasks SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL, updated_at = now()
        WHERE job_id = $1::bigint AND state IN ('queued', 'leased')
        """
    /// Retries a failed or cancelled job; returns it when it did. Its current run starts anew.
    static let retryJob = """
        UPDATE jobs SET state = 'queued', error = NULL, finished_at = NULL, updated_at = now(),
                        run_started_at = NULL, run_frames_base = frames_done, tasks_to_stop = false
        WHERE id = $1::bigint AND state IN ('failed', 'cancelled') RETURNING id
        """
    /// Retry: failed and cancelled tasks get a fresh set of attempts (done tasks keep their results).
    static let requeueTasksForRetry = """
        UPDATE tasks SET state = 'queued', attempts = 0, error = NULL, progress_frames = 0, finished_at = NULL,
                         updated_at = now()
        WHERE job_id = $1::bigint AND state IN ('failed', 'cancelled')
        """
    /// The operator pauses (`$2` true) or resumes job `$1` (locked) if it has not ended; returns
    /// whether that changed it (no row: it has ended, or it is paused by its budget and `$2` is
    /// false: only raising its budget resumes it, `setJobBudget`). A pause of a paused job keeps
    /// its reason; a new pause is the operator's (model: `JobLifecycle.setPaused`).
    static let setJobPaused = """
        UPDATE jobs SET paused = $2::boolean, updated_at = CASE WHEN paused <> $2::boolean THEN now() ELSE updated_at END,
                        pause_reason = CASE WHEN NOT $2::boolean THEN NULL ELSE coalesce(pause_reason, 'operator') END
        FROM (SELECT paused AS was, pause_reason AS why FROM jobs WHERE id = $1::bigint) before
        WHERE id = $1::bigint AND state NOT IN \(terminalJobStates) AND ($2::boolean OR before.why IS DISTINCT FROM 'budget')
        RETURNING before.was <> $2::boolean AS changed
        """
    /// Sets the priority of job `$1` if it has not ended; returns it when it did.
    static let setJobPriority = """
        UPDATE jobs SET priority = $2::integer, updated_at = now() WHERE id = $1::bigint AND state NOT IN \(terminalJobStates) RETURNING id
        """

    // MARK: Budgets (model: `JobLifecycle.setBudget`, `.applyBudget`, `FarmModel.applyBudget`, `TaskLifecycle.handBack`)

    /// Sets job `$1`'s budget to `$2` in unit `$3` (`JobBudget.Unit`) if it has not ended;
    /// returns it when it did. The caller then applies the rule (`LifecycleStore.setBudget`).
    static let setJobBudget = """
        UPDATE jobs SET budget = $2::double precision, budget_unit = $3, updated_at = now()
        WHERE id = $1::bigint AND state NOT IN \(terminalJobStates) RETURNING id
        """
    /// The budget rule's pause (90 % spent) of job `$1`, locked by the caller, if it has not
    /// ended: no new claims, its leases run on. Returns it when that changed its pause (a job
    /// paused by the operator is now paused by its budget).
    static let budgetPauseJob = """
        UPDATE jobs SET paused = true, pause_reason = 'budget', updated_at = now()
        WHERE id = $1::bigint AND state NOT IN \(terminalJobStates) AND pause_reason IS DISTINCT FROM 'budget' RETURNING id
        """
    /// Job `$1`, paused by its budget, resumes (its budget was raised above 90 % of what it spent).
    static let budgetResumeJob = """
        UPDATE jobs SET paused = false, pause_reason = NULL, updated_at = now()
        WHERE id = $1::bigint AND state NOT IN \(terminalJobStates) AND pause_reason = 'budget' RETURNING id
        """
    /// The budget rule at 100 %: job `$1`'s (locked by the caller) leased render tasks are
    /// handed back, as a release is, un-attempted (queued, the attempt not counted, their holders
    /// learn `LOST`), so that raising the budget renders them again and the output is the same;
    /// a leased finalise task runs on (the chunks it joins are paid for). Tasks locked first,
    /// without waiting (a task a result holds right now completes instead). One `handed_back`
    /// event each. Returns each with the holder it had.
    static let handBackRunningChunks = """
        WITH running AS (
            SELECT id, lease_owner AS holder FROM tasks
            WHERE job_id = $1::bigint AND state = 'leased' AND kind NOT IN \(jobEndingKinds) FOR UPDATE SKIP LOCKED
        ), handed AS (
            UPDATE tasks t SET state = 'queued', attempts = greatest(t.attempts - 1, 0), lease_owner = NULL,
                               lease_expires_at = NULL, updated_at = now()
            FROM running r WHERE t.id = r.id AND t.state = 'leased'
            RETURNING t.id, t.epoch, r.holder
        ), logged AS (
            INSERT INTO events (job_id, task_id, agent_id, kind, message)
            SELECT $1::bigint, h.id, h.holder, 'handed_back', 'budget spent' FROM handed h
        )
        SELECT id, epoch, holder FROM handed ORDER BY id
        """

    // MARK: Assets and planning (model: `JobLifecycle.assetsArrived`, `.fail`)

    /// A waiting job whose every asset is stored becomes queued (`job_assets` holds each hash
    /// as its 32 bytes, `assets` as hex).
    static let releaseWaitingJob = """
        UPDATE jobs SET state = 'queued', error = NULL, updated_at = now()
        WHERE id = $1::bigint AND state = 'waiting'
          AND NOT EXISTS (SELECT 1 FROM job_assets ja LEFT JOIN assets a ON a.sha256 = encode(ja.sha256, 'hex')
                          WHERE ja.job_id = jobs.id AND a.sha256 IS NULL)
        """
    /// The waiting jobs that read asset `$1` (hex).
    static let waitingJobsForAsset = """
        SELECT job_id FROM job_assets ja JOIN jobs j ON j.id = ja.job_id WHERE ja.sha256 = decode($1, 'hex') AND j.state = 'waiting'
        """
    /// A queued job not yet split into tasks goes back to waiting (an asset file turned out
    /// missing); `$2` says what to do about it.
    static let returnJobToWaiting = """
        UPDATE jobs SET state = 'waiting', error = $2, updated_at = now()
        WHERE id = $1::bigint AND state = 'queued' AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.job_id = jobs.id)
        """
    /// A job that has not ended fails with `$2` (its composition cannot be rendered, or a task
    /// used its last attempt); the caller cancels its open tasks.
    static let failJob = """
        UPDATE jobs SET state = 'failed', paused = false, pause_reason = NULL, error = $2, finished_at = now(), updated_at = now()
        WHERE id = $1::bigint AND state NOT IN \(terminalJobStates)
        """
}
