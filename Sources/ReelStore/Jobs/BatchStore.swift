/// A job's place in a batch: the batch's id and the row it renders (1-based).
public struct BatchRowReference: Hashable, Sendable {
    public var batch: Int64
    public var row: Int
    public init(batch: Int64, row: Int) { self.batch = batch; self.row = row }
}

/// A batch as stored: its name, the rows it was opened with, when.
public struct BatchRecord: Hashable, Sendable {
    public var id: Int64
    public var name: String
    public var rows: Int
    public var createdAtMillis: Int64
}

/// One job of a batch: its row, its summary as `STATUS` reads it, and the time agents spent on it.
public struct BatchJobRecord: Hashable, Sendable {
    public var row: Int
    public var summary: JobSummary
    public var agentMilliseconds: Int64
}

/// Batches: one job per row of a template's rows, grouped under an id (migration 15). A batch
/// is opened with its number of rows; each row's job joins it when it is created
/// (`NewJob.batch`). Nothing here changes a job's state: a batch's state is its jobs'.
public struct BatchStore: Sendable {
    let connection: PGConnection

    /// Opens a batch of `rows` rows; returns its id.
    public func create(name: String, rows: Int) throws -> Int64 {
        try connection.query(Statements.insertBatch, [name, rows]).rows[0].int64("id")
    }

    /// The batch, or nil when there is none with that id.
    public func record(_ id: Int64) throws -> BatchRecord? {
        try connection.query(Statements.batchRecord, [id]).singleRow().map { row in
            BatchRecord(id: try row.int64("id"), name: try row.string("name"), rows: try row.int("rows"),
                        createdAtMillis: try row.int64("created_ms"))
        }
    }

    /// Whether row `row` of batch `batch` has a job already.
    public func isTaken(_ reference: BatchRowReference) throws -> Bool {
        try connection.query(Statements.batchRowTaken, [reference.batch, reference.row]).singleRow() != nil
    }

    /// How many rows of the batch have a job.
    public func jobCount(of batch: Int64) throws -> Int {
        try connection.query(Statements.batchJobCount, [batch]).rows[0].int("n")
    }

    /// Whether the job is a batch's row waiting, unplanned, for the batch's first row to end
    /// (`Statements.heldForBatchLead`).
    public func isHeldForLead(job: Int64) throws -> Bool {
        try connection.query(Statements.jobIsHeldForBatchLead, [job]).singleRow() != nil
    }

    /// The unplanned jobs of the batch whose first row is `job`, once `job` has ended: they
    /// can be planned now. Empty for any other job.
    public func released(byLead job: Int64) throws -> [Int64] {
        try connection.query(Statements.jobsReleasedByBatchLead, [job]).rows.map { try $0.int64("id") }
    }

    /// Every job of the batch, in row order.
    public func jobs(of batch: Int64) throws -> [BatchJobRecord] {
        try connection.query(Statements.batchJobSummaries, [batch]).rows.map { row in
            BatchJobRecord(row: try row.int("batch_row"), summary: try JobStore.summary(row), agentMilliseconds: try row.int64("agent_ms"))
        }
    }
}
