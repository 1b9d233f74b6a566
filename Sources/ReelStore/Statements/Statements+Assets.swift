import ReelScheduling
// Stored files (`AssetStore`): source assets by content hash, task results (reuse by content
// key, retention, garbage collection) and job outputs.

extension Statements {
    static let recordAsset = """
        INSERT INTO assets (sha256, size, stored_key) VALUES ($1, $2::bigint, $3)
        ON CONFLICT (sha256) DO NOTHING
        """
    static let asset = "SELECT sha256, size, stored_key FROM assets WHERE sha256 = $1"
    static let missingAssets = """
        SELECT h FROM unnest($1::text[]) AS h WHERE NOT EXISTS (SELECT 1 FROM assets a WHERE a.sha256 = h) ORDER BY h
        """
    static let storedAssets = "SELECT sha256, size, stored_key FROM assets WHERE sha256 = ANY($1::text[])"
    static let forgetAsset = "DELETE FROM assets WHERE sha256 = $1"

    /// The newest stored result of a done task per content key in `$1` (any job).
    static let resultsByContentKey = """
        SELECT DISTINCT ON (content_key) content_key, result_sha256, result_size, result_key FROM tasks
        WHERE content_key = ANY($1::text[]) AND state = 'done' AND result_sha256 IS NOT NULL AND result_key IS NOT NULL
        ORDER BY content_key, finished_at DESC NULLS LAST, id DESC
        """
    /// For each rendition key in `$1`, the newest stored ladder archive of a done task that
    /// holds it: the task's own result, or the archive its row says the rendition came from.
    static let archivesByRenditionKey = """
        SELECT DISTINCT ON (r.rendition_key) r.rendition_key,
               coalesce(r.source_sha256, t.result_sha256) AS sha256, coalesce(r.source_size, t.result_size) AS size,
               coalesce(r.source_key, t.result_key) AS stored_key
        FROM task_renditions r JOIN tasks t ON t.id = r.task_id
        WHERE r.rendition_key = ANY($1::text[]) AND t.state = 'done' AND t.result_sha256 IS NOT NULL AND t.result_key IS NOT NULL
        ORDER BY r.rendition_key, t.finished_at DESC NULLS LAST, t.id DESC
        """
    /// The epochs under which those of tasks `$1` are leased now.
    static let leasedEpochs = "SELECT id, epoch FROM tasks WHERE id = ANY($1::bigint[]) AND state = 'leased'"

    /// Whether jobs that ended before `$1` (ms; NULL keeps every ended job) still count as
    /// needing their files: unfinished jobs always do.
    private static func stillNeeds(_ job: String) -> String {
        """
        (\(job).state NOT IN \(terminalJobStates) OR $1::double precision IS NULL
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
    /// Chunk results still needed: unfinished jobs', failed or cancelled jobs' ended after `$1`
    /// (a retry reuses them), done jobs' finished after `$2` (for reuse). A NULL cutoff keeps all.
    /// A ladder chunk's renditions taken from other tasks' archives count as its results: an
    /// archive stays while any job kept here takes a rendition from it.
    static let neededResultHashes = """
        WITH kept AS (
            SELECT t.id, t.result_sha256 FROM tasks t JOIN jobs j ON j.id = t.job_id
            WHERE t.kind NOT IN \(jobEndingKinds)
              AND CASE WHEN j.state = 'done'
                       THEN $2::double precision IS NULL OR coalesce(j.finished_at, j.updated_at) >= to_timestamp($2::double precision / 1000)
                       ELSE \(stillNeeds("j")) END)
        SELECT result_sha256 AS h FROM kept WHERE result_sha256 IS NOT NULL
        UNION
        SELECT r.source_sha256 FROM task_renditions r JOIN kept ON kept.id = r.task_id WHERE r.source_sha256 IS NOT NULL
        """
    /// Assets still needed: those of unfinished jobs and of jobs ended after the cutoff `$1`
    /// (hex, as `assets` names them; `job_assets` holds the 32 bytes).
    static let neededAssetHashes = """
        SELECT DISTINCT encode(ja.sha256, 'hex') AS h FROM job_assets ja JOIN jobs j ON j.id = ja.job_id WHERE \(stillNeeds("j"))
        """
    /// Forgets the asset `$2` unless a job still needs it (cutoff `$1`); returns whether it is
    /// now unneeded (its file may go).
    static let forgetUnneededAsset = """
        WITH needed AS (SELECT 1 FROM job_assets ja JOIN jobs j ON j.id = ja.job_id WHERE ja.sha256 = decode($2, 'hex') AND \(stillNeeds("j"))),
             gone AS (DELETE FROM assets WHERE sha256 = $2 AND NOT EXISTS (SELECT 1 FROM needed) RETURNING 1)
        SELECT NOT EXISTS (SELECT 1 FROM needed) AS unneeded
        """
}
