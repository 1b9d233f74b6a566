import Foundation
import ReelMedia
import ReelProtocol
import ReelStore
import ReelScheduling

// POSTER (proto/PROTOCOL.md §4.2): an agent's picture of a chunk's last frame, for the console.
extension CoordinatorHandler {
    /// Stores `jpeg` as the newest poster of the task's job, if the sender still holds the
    /// task's lease (`LOST` otherwise: a poster of a chunk nobody will deliver shows nothing real).
    func poster(task: Int64, epoch: Int64, jpeg: [UInt8], peer: Peer) async throws -> Message {
        guard jpeg.count <= PosterFrame.maxBytes else {
            throw ReelProtocolError(.malformed, "a poster is at most \(PosterFrame.maxBytes) bytes, not \(jpeg.count)")
        }
        // SOI, then a marker: anything else is not a JPEG and would only break the dashboard's picture.
        guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8, jpeg[2] == 0xFF else {
            throw ReelProtocolError(.malformed, "a poster must be a JPEG image")
        }
        guard let agent = agentID(peer),
              let job = try await pool.run({ try $0.lifecycle.jobOfLease(Lease(task: task, epoch: epoch, agent: agent)) }) else {
            return .lost(task: task)
        }
        try await storage.storePoster(job: job, jpeg: jpeg)
        metrics.bytesIn.increment(by: Int64(jpeg.count))
        return .ok
    }
}
