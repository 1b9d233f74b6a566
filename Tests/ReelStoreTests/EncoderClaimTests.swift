import Foundation
import ReelScheduling
import ReelStoreTesting
import ReelThreadTesting
import Testing
@testable import ReelStore

@Suite("JobStore: claims honour each agent's encoders", .database, .blocking)
struct EncoderClaimTests {
    /// A planned job of `chunks` video chunks needing `encoder`, with audio if asked.
    static func plannedJob(_ store: FarmStore, chunks: Int, encoder: String, audio: Bool = false) throws -> Int64 {
        let job = try store.jobs.create(NewJob(composition: "{}", tasks: []))
        #expect(try store.jobs.createTasks(job: job, renderPlan: "{}", videoEncoder: encoder, tasks: JobStoreTests.job(chunks: chunks, audio: audio).tasks))
        return job
    }

    @Test("an agent without the job's encoder gets the next job's chunks, even behind more chunks than one claim reads")
    func anAgentIsNotHeldBackByAJobItCannotRender() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let x264 = try store.agents.register(name: "x264-only", host: "a", capabilities: "{}")
        let x265 = try store.agents.register(name: "with-x265", host: "b", capabilities: "{}")
        let encoders = AgentEncoders([x264: ["libx264", "aac"], x265: ["libx264", "libx265", "aac"]])
        // The older job comes first in claim order and has more chunks (100) than a claim of
        // one or two requests reads (64 more than asked): its candidates alone would fill it.
        let hevc = try Self.plannedJob(store, chunks: 100, encoder: "libx265", audio: true)
        let h264 = try Self.plannedJob(store, chunks: 3, encoder: "libx264")

        let claimed = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: x264), ClaimRequest(agent: x265)], leaseSeconds: 60,
                                           kinds: [.videoChunk, .audio], liveAgents: [x264, x265], encoders: encoders)
        // The x264 agent may take the HEVC job's audio (AAC), which comes first in claim order.
        #expect(claimed[0]?.jobID == hevc && claimed[0]?.kind == .audio)
        #expect(claimed[1]?.jobID == hevc && claimed[1]?.kind == .videoChunk && claimed[1]?.ordinal == 0)

        // With the audio gone, in one batch: the HEVC job's chunks fill the candidates read for
        // the batch, and the claim reads on for the agent that can use none of them.
        let mixed = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: x265), ClaimRequest(agent: x264)], leaseSeconds: 60,
                                         kinds: [.videoChunk, .audio], liveAgents: [x264, x265], encoders: encoders)
        #expect(mixed[0]?.jobID == hevc && mixed[0]?.ordinal == 1)
        #expect(mixed[1]?.jobID == h264 && mixed[1]?.ordinal == 0, "never an HEVC chunk, and not nothing")
        for ordinal in 1..<3 {
            let next = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: x264)], leaseSeconds: 60, kinds: [.videoChunk, .audio],
                                            liveAgents: [x264, x265], encoders: encoders)
            #expect(next[0]?.jobID == h264 && next[0]?.ordinal == ordinal)
        }
        let none = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: x264)], leaseSeconds: 60, kinds: [.videoChunk, .audio],
                                        liveAgents: [x264, x265], encoders: encoders)
        #expect(none[0] == nil, "98 HEVC chunks are queued, none for an agent without libx265")
        let more = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: x265)], leaseSeconds: 60, kinds: [.videoChunk, .audio],
                                        liveAgents: [x264, x265], encoders: encoders)
        #expect(more[0]?.jobID == hevc && more[0]?.ordinal == 2)
    }

    @Test("a claim reads the claimable jobs a page at a time, and reads on past pages of jobs an agent cannot render")
    func jobsAreReadAPageAtATime() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let x264 = try store.agents.register(name: "x264-only", host: "a", capabilities: "{}")
        let encoders = AgentEncoders([x264: ["libx264", "aac"]])
        // More HEVC jobs than one page, each first in claim order, then the one job it can take.
        let pages = 2 * LifecycleStore.jobsPageSize + 3
        for _ in 0..<pages { _ = try Self.plannedJob(store, chunks: 2, encoder: "libx265") }
        let h264 = try Self.plannedJob(store, chunks: 2, encoder: "libx264")
        let claimed = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: x264)], leaseSeconds: 60, kinds: [.videoChunk],
                                                     liveAgents: [x264], encoders: encoders)
        #expect(claimed[0]?.jobID == h264 && claimed[0]?.ordinal == 0, "\(pages) jobs it cannot render do not hide the one it can")
        // A higher priority moves a later job to the front of the first page.
        let urgent = try Self.plannedJob(store, chunks: 2, encoder: "libx264")
        try store.lifecycle.setPriority(job: urgent, 10)
        let next = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: x264)], leaseSeconds: 60, kinds: [.videoChunk],
                                                  liveAgents: [x264], encoders: encoders)
        #expect(next[0]?.jobID == urgent)
    }

    @Test("without encoders (jobs planned before they were recorded, agents that never said) anyone claims, as before")
    func unknownEncodersDoNotRestrict() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let agent = try store.agents.register(name: "a", host: "h", capabilities: "{}")
        let old = try store.jobs.create(JobStoreTests.job(chunks: 1, audio: false))
        let claimed = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: agent)], leaseSeconds: 60, kinds: [.videoChunk],
                                           liveAgents: [agent], encoders: AgentEncoders([agent: ["libx264"]]))
        #expect(claimed[0]?.jobID == old, "no recorded encoder: no restriction")
        let hevc = try Self.plannedJob(store, chunks: 1, encoder: "libx265")
        let other = try store.agents.register(name: "b", host: "h", capabilities: "{}")
        let unsaid = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: other)], leaseSeconds: 60, kinds: [.videoChunk],
                                          liveAgents: [agent, other], encoders: AgentEncoders([agent: ["libx264"]]))
        #expect(unsaid[0]?.jobID == hevc, "an agent missing from the encoders is not held back")
    }

    @Test("a finalise task goes only to an agent with the finalise capability (or to a claimer with no capability list)")
    func finaliseNeedsTheFinaliseCapability() throws {
        let schema = try TestDatabase.Schema()
        let store = try schema.store()
        let renderer = try store.agents.register(name: "renders-only", host: "a", capabilities: "{}")
        let finaliser = try store.agents.register(name: "finalises", host: "b", capabilities: "{}")
        let encoders = AgentEncoders([renderer: ["libx264", "aac"], finaliser: ["libx264", "aac", TaskKind.finaliseCapability]])
        let job = try Self.plannedJob(store, chunks: 1, encoder: "libx264")
        let all = Set(TaskKind.allCases)
        let chunk = try #require(try store.lifecycle.claimTasks(for: [ClaimRequest(agent: renderer)], leaseSeconds: 60, kinds: all,
                                                                liveAgents: [renderer, finaliser], encoders: encoders)[0])
        #expect(chunk.kind == .videoChunk)
        try store.lifecycle.complete(chunk.lease, result: JobStoreTests.result(1))
        let refused = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: renderer)], leaseSeconds: 60, kinds: all,
                                                     liveAgents: [renderer, finaliser], encoders: encoders)
        #expect(refused[0] == nil, "the job's finalise is claimable, but not for an agent that did not say finalise=1")
        let finalise = try store.lifecycle.claimTasks(for: [ClaimRequest(agent: renderer), ClaimRequest(agent: finaliser)], leaseSeconds: 60,
                                                      kinds: all, liveAgents: [renderer, finaliser], encoders: encoders)
        #expect(finalise[0] == nil && finalise[1]?.kind == .finalise && finalise[1]?.jobID == job)
        #expect(try store.jobs.summary(job)?.state == .finalising)
    }
}

