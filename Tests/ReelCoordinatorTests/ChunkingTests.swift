import Foundation
import ReelCore
import ReelProtocol
import ReelStoreTesting
import Testing

/// A job's chunks depend on its composition and settings alone, never on the farm: the same
/// composition submitted to an empty farm and to one with several agents online is cut into
/// the same chunks, so a re-render finds every chunk's content key (docs/incremental-rendering.md).
/// (Cutting more chunks when more agents are online made a re-render on a bigger farm reuse
/// nothing.)
@Suite(.database) struct ChunkingTests {
    @Test func theSameCompositionIsCutTheSameWhateverTheAgentsOnline() async throws {
        try await withCoordinator { media, harness, client in
            try await client.upload(media.video)
            try await client.upload(media.audio)
            // Chunks of 10 s: the 2 s test clip is one chunk, whatever the farm.
            let submission = try media.submission(chunkSeconds: 10, withAudio: false)
            guard case .job(let alone, _) = try await client.send(.submit(document: submission)) else { Issue.record("no JOB"); return }
            try await eventually("the first job is planned") { try await client.status(job: alone).tasks.total > 0 }
            let first = try await client.status(job: alone).tasks.total

            var agents: [ReelClient] = []
            for name in ["render-01", "render-02", "render-03", "render-04"] { agents.append(try await harness.agent(name)) }
            guard case .job(let crowded, _) = try await client.send(.submit(document: submission)) else { Issue.record("no JOB"); return }
            try await eventually("the second job is planned") { try await client.status(job: crowded).tasks.total > 0 }
            let second = try await client.status(job: crowded).tasks
            #expect(second.total == first, "4 agents online changed the chunks: \(second.total) tasks instead of \(first)")
            for agent in agents { await agent.close() }
        }
    }
}
