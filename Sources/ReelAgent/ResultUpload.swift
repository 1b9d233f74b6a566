import Foundation
import ReelProtocol

/// Sends a rendered result with `RESULTPART`s (proto/PROTOCOL.md §4.2), reading one part at a
/// time from its file: memory stays at one part whatever the result's size. Starts at the
/// bytes the coordinator last said it holds, so an upload cut off by a lost connection or a
/// coordinator restart resumes instead of starting over.
struct ResultUpload {
    let session: CoordinatorSession
    /// Bytes per part (`AgentConfiguration.resultPartBytes`).
    let partBytes: Int

    /// Sends parts from `pending.have` until the coordinator answers `ACCEPTED`, keeping
    /// `pending.have` at what it acknowledged and `pending.leaseExpiresAtMillis` at the lease as
    /// the parts renewed it (a long upload must not look expired to the retry policy). A `bad_range` that says how much it holds (a part
    /// stored whose reply was lost, or a partial upload it no longer has) moves there and carries
    /// on — once without progress in between, so two confused peers cannot loop.
    /// - Throws: the coordinator's refusal (`ReelProtocolError`), a connection failure, or
    ///   `AgentError` when the file cannot be read or a reply makes no sense.
    func send(_ pending: inout PendingResult) async throws {
        guard let file = FileHandle(forReadingAtPath: pending.path) else {
            throw AgentError.io("the rendered result \(pending.path) is gone; it cannot be uploaded")
        }
        defer { try? file.close() }
        var resynchronised = false
        while true {
            let length = Int(min(Int64(partBytes), pending.byteCount - pending.have))
            let bytes = try Self.read(file, at: pending.have, count: length, path: pending.path)
            let reply: CoordinatorSession.PartReply
            do {
                reply = try await session.resultPart(pending.assignment, sha256: pending.sha256, offset: pending.have,
                                                     total: pending.byteCount, bytes: bytes)
            } catch let error as ReelProtocolError {
                guard !resynchronised, let held = error.heldBytes, held <= pending.byteCount, held != pending.have else { throw error }
                pending.have = held
                resynchronised = true
                continue
            }
            switch reply {
            case .accepted:
                return
            case .stored(let have, let expires):
                guard have > pending.have, have < pending.byteCount else {
                    throw AgentError.protocolViolation("STORED have=\(have) after a part [\(pending.have), +\(length)) of \(pending.byteCount) bytes")
                }
                pending.have = have
                pending.leaseExpiresAtMillis = max(pending.leaseExpiresAtMillis, expires)
                resynchronised = false
            }
        }
    }

    /// Exactly `count` bytes of `file` from `offset`.
    private static func read(_ file: FileHandle, at offset: Int64, count: Int, path: String) throws -> [UInt8] {
        try file.seek(toOffset: UInt64(offset))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count, let block = try file.read(upToCount: count - bytes.count), !block.isEmpty {
            bytes += block
        }
        guard bytes.count == count else {
            throw AgentError.io("the rendered result \(path) is shorter than it was (\(offset + Int64(bytes.count)) bytes)")
        }
        return bytes
    }
}
