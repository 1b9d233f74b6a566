import Foundation
import ReelScheduling
import ReelStoreTesting
import ReelThreadTesting
import Testing
@testable import ReelStore

/// `TaskKind` is the one list of task kinds: the schema must accept every kind, and the claim
/// order the statements compute from `TaskKind.claimRank` must be the order of the
/// `tasks_claim_order` index, so a claim reads its candidates from the index without sorting.
/// A new kind fails here until its migration adds it to both.
@Suite("TaskKind and the schema agree", .database, .blocking)
struct TaskKindSchemaTests {
    @Test("the tasks table accepts every kind, and a job's tasks come back in claim-rank order")
    func everyKindIsStored() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let kinds = TaskKind.allCases.shuffled()
        let job = try store.jobs.create(NewJob(composition: "{}", tasks: kinds.map { NewTask(kind: $0, ordinal: 0) }))
        #expect(try store.jobs.tasks(ofJob: job).map(\.kind) == TaskKind.allCases.sorted())
    }

    @Test("claim candidates are read in the index's order, without a sort")
    func claimOrderIsTheIndexOrder() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let job = try store.jobs.create(JobStoreTests.job(chunks: 3))
        let db = try schema.connect()
        // Plans on a near-empty table would scan it; the question is which index order matches.
        try db.query("SET enable_seqscan = off")
        try db.query("SET enable_bitmapscan = off")
        let plan = try db.query("EXPLAIN " + Statements.claimCandidatesOfJob(limit: 16), [job, TaskKind.allCases, true, 0]).rows
            .map { $0["QUERY PLAN"] ?? "" }.joined(separator: "\n")
        #expect(plan.contains("tasks_claim_order"), "\(plan)")
        #expect(!plan.contains("Sort"), "the claim order is not the index's order:\n\(plan)")
    }
}
