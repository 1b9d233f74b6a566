import Foundation
import ReelScheduling
import ReelStoreTesting
import Testing
@testable import ReelStore

@Suite("JobStore: jobs of one priority take turns (fair share)", .database, .blocking)
struct ClaimTurnTests {
    /// A job planned as the coordinator plans one (created, then its tasks): `chunks` video
    /// chunks needing `encoder` and a finalise task, as row `row` of `batch` if given.
    static func planned(_ store: FarmStore, chunks: Int = 2, encoder: String = "libx264", batch: Int64? = nil, row: Int = 0,
                        priority: Int = 0) throws -> Int64 {
        let job = try store.jobs.create(NewJob(composition: "{}", tasks: [], priority: priority,
                                               batch: batch.map { BatchRowReference(batch: $0, row: row) }))
        #expect(try store.jobs.createTasks(job: job, renderPlan: "{}", videoEncoder: encoder,
                                           tasks: JobStoreTests.job(chunks: chunks, audio: false).tasks))
        return job
    }

    /// The jobs of `count` claims by `agent`, one at a time, in order.
    static func claims(_ store: FarmStore, _ agent: Int64, _ count: Int, encoders: AgentEncoders = AgentEncoders()) throws -> [Int64?] {
        try (0..<count).map { _ in
            try store.lifecycle.claimTasks(for: [ClaimRequest(agent: agent)], leaseSeconds: 60, kinds: [.videoChunk],
                                           liveAgents: [agent], encoders: encoders)[0]?.jobID
        }
    }

    @Test("a job submitted after a batch of many rows is claimed after the batch's first row, not after its last")
    func aBatchDoesNotStarveALaterJob() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        // More rows than a claim reads jobs at a time (two pages and more).
        let rows = 2 * LifecycleStore.jobsPageSize + 5
        let batch = try store.batches.create(name: "greeting.json", rows: rows)
        let jobs = try (1...rows).map { try Self.planned(store, batch: batch, row: $0) }
        let later = try Self.planned(store)
        // Rows take successive turns; the later job takes the head's turn, so it goes right
        // after the row at the head (older, it goes first at that turn) and before the rest.
        #expect(try Self.claims(store, agent, 6) == [jobs[0], jobs[0], later, later, jobs[1], jobs[1]])
    }

    @Test("two batches take turns row by row; jobs submitted one by one still go in the order they came")
    func batchesInterleave() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let first = try Self.planned(store, chunks: 1), second = try Self.planned(store, chunks: 1)
        let a = try store.batches.create(name: "a.json", rows: 3), b = try store.batches.create(name: "b.json", rows: 3)
        let rowsOfA = try (1...3).map { try Self.planned(store, chunks: 1, batch: a, row: $0) }
        let rowsOfB = try (1...3).map { try Self.planned(store, chunks: 1, batch: b, row: $0) }
        // A higher priority still goes first, whatever its turn.
        let urgent = try Self.planned(store, chunks: 1, priority: 5)
        #expect(try Self.claims(store, agent, 9) == [urgent, first, second, rowsOfA[0], rowsOfB[0], rowsOfA[1], rowsOfB[1],
                                                     rowsOfA[2], rowsOfB[2]])
    }

    @Test("a claim that reads past the first page of jobs finds a job whose turn is later but whose id is lower")
    func pagesFollowTheTurnOrder() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let x264 = try store.agents.register(name: "x264-only", host: "a", capabilities: "{}")
        let encoders = AgentEncoders([x264: ["libx264", "aac"]])
        // A batch of HEVC rows (turns 0, 1, 2, …) with one H.264 row near its end, then a page and
        // more of HEVC jobs of their own (all at the head's turn, 0): in claim order the H.264 row
        // comes after all of those, on a later page, though its id is lower than theirs.
        let rows = 20
        let batch = try store.batches.create(name: "mixed.json", rows: rows)
        var h264Row: Int64 = 0
        for row in 1...rows {
            let job = try Self.planned(store, encoder: row == rows - 2 ? "libx264" : "libx265", batch: batch, row: row)
            if row == rows - 2 { h264Row = job }
        }
        for _ in 0..<(LifecycleStore.jobsPageSize + 4) { _ = try Self.planned(store, encoder: "libx265") }
        #expect(try Self.claims(store, x264, 3, encoders: encoders) == [h264Row, h264Row, nil])
    }
}
