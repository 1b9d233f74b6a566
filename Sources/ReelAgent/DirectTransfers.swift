import Foundation
import ReelObjectStore
import ReelProtocol
import Synchronization

/// What one connection learned about direct transfers (proto/PROTOCOL.md §4.5): whether its
/// coordinator hands out presigned URLs at all, and the source URLs it handed out, reused until
/// they are about to expire. A new connection starts afresh.
final class DirectTransferState: Sendable {
    private struct State {
        var unsupported = false
        var sources: [String: DirectURL] = [:]
    }
    private let state = Mutex(State())

    var unsupported: Bool { state.withLock { $0.unsupported } }
    func markUnsupported() { state.withLock { $0.unsupported = true; $0.sources = [:] } }
    /// A known source URL with more than `margin` ms left at `nowMillis`.
    func source(_ sha256: String, nowMillis: Int64, margin: Int64) -> DirectURL? {
        state.withLock { state in
            guard let url = state.sources[sha256], url.expiresAtMillis - margin > nowMillis else { return nil }
            return url
        }
    }
    func remember(_ url: DirectURL, for sha256: String) { state.withLock { $0.sources[sha256] = url } }
    func forget(_ sha256: String) { state.withLock { _ = $0.sources.removeValue(forKey: sha256) } }
}

extension CoordinatorSession {
    /// A source URL is asked for again when less than this is left of it.
    static let sourceURLMargin: Int64 = 30_000

    /// Exactly `length` bytes from `offset` of the source `sha256` (`size` bytes): through a
    /// presigned `GET` when the coordinator hands them out (asked once per source and reused
    /// until it nears expiry; a 403 — expired or refused — makes it ask again and read once
    /// more), else with `FETCH` over this connection.
    func readSource(sha256: String, offset: Int64, length: Int, size: Int64) async throws -> [UInt8] {
        if !direct.unsupported {
            for attempt in 0..<2 {
                guard let url = try await sourceURL(sha256, fresh: attempt > 0) else { break }
                guard url.total == size else {
                    throw AgentError.protocolViolation("SOURCEURL \(sha256): the store holds \(url.total) bytes, not \(size)")
                }
                do {
                    let bytes = try await transfer.get(url: url.url, headers: url.headers, range: offset..<(offset + Int64(length)))
                    guard bytes.count == length else {
                        throw AgentError.protocolViolation("GET of source \(sha256) [\(offset), +\(length)) gave \(bytes.count) bytes")
                    }
                    return bytes
                } catch let error as ObjectStoreError where error.code == .accessDenied && attempt == 0 {
                    direct.forget(sha256)  // expired or refused: ask for a new URL and read again
                } catch let error as ObjectStoreError {
                    throw AgentError.io("cannot read source \(sha256) from the object store: \(error.message)")
                }
            }
        }
        return try await fetch(sha256: sha256, offset: offset, length: length, size: size)
    }

    /// A presigned GET for the source (a remembered one unless `fresh`), or `nil` when the
    /// coordinator hands out none (then remembered for this connection).
    private func sourceURL(_ sha256: String, fresh: Bool) async throws -> DirectURL? {
        if !fresh, let known = direct.source(sha256, nowMillis: Self.nowMillis(), margin: Self.sourceURLMargin) { return known }
        do {
            let reply = try await client.request(.sourceURL(sha256: sha256), timeout: requestTimeout)
            guard case .url(let url) = reply, url.method == "GET" else { throw unexpected(reply, "SOURCEURL") }
            direct.remember(url, for: sha256)
            return url
        } catch let error as ReelProtocolError where error.meansNoDirectTransfers {
            direct.markUnsupported()
            return nil
        }
    }

    /// What the coordinator said to `RESULTURL`.
    enum ResultURLReply: Equatable { case upload(DirectURL), accepted, unsupported }

    /// `RESULTURL`: a presigned PUT bound to the result's SHA-256, `accepted` when the store
    /// already held it, or `unsupported` (then remembered for this connection).
    func resultURL(_ task: TaskAssignment, sha256: String, total: Int64) async throws -> ResultURLReply {
        guard !direct.unsupported else { return .unsupported }
        do {
            let reply = try await client.request(.resultURL(task: task.task, epoch: task.epoch, sha256: sha256, total: total),
                                                 timeout: requestTimeout)
            switch reply {
            case .url(let url) where url.method == "PUT" && url.total == total: return .upload(url)
            case .accepted(let id) where id == task.task: return .accepted
            default: throw unexpected(reply, "RESULTURL")
            }
        } catch let error as ReelProtocolError where error.meansNoDirectTransfers {
            direct.markUnsupported()
            return .unsupported
        }
    }

    /// What the coordinator said to `RESULTPARTS`.
    enum ResultPartsReply: Equatable { case parts(BlobUpload), upload(DirectURL), accepted, unknownVerb, unsupported }

    /// `RESULTPARTS`: a multipart upload to send the parts of (`PARTS`), a single PUT, `accepted`,
    /// `unknownVerb` from a coordinator that predates it (ask `RESULTURL`), or `unsupported`.
    func resultParts(_ task: TaskAssignment, sha256: String, total: Int64) async throws -> ResultPartsReply {
        guard !direct.unsupported else { return .unsupported }
        do {
            let reply = try await client.request(.resultParts(task: task.task, epoch: task.epoch, sha256: sha256, total: total),
                                                 timeout: requestTimeout)
            switch reply {
            case .parts(let hash, let upload, let partSize, let size, let have) where hash == sha256 && size == total:
                return .parts(BlobUpload(id: upload, total: total, partSize: partSize, held: have))
            case .url(let url) where url.method == "PUT" && url.total == total: return .upload(url)
            case .accepted(let id) where id == task.task: return .accepted
            default: throw unexpected(reply, "RESULTPARTS")
            }
        } catch let error as ReelProtocolError where error.code == .malformed && error.message.hasPrefix("unknown verb") {
            return .unknownVerb
        } catch let error as ReelProtocolError where error.meansNoDirectTransfers {
            direct.markUnsupported()
            return .unsupported
        }
    }

    /// `PARTURL` for part `part` of the result's upload, under the task's lease.
    func resultPartURL(_ task: TaskAssignment, sha256: String, upload: String, part: Int, partSHA256: String,
                       length: Int64) async throws -> DirectPartUpload.PartURL {
        let request = PartURLRequest(sha256: sha256, upload: upload, part: part, partSHA256: partSHA256, length: length,
                                     task: task.task, epoch: task.epoch)
        let reply = try await client.request(.partURL(request), timeout: requestTimeout)
        guard case .url(let url) = reply, url.method == "PUT", url.total == length else { throw unexpected(reply, "PARTURL") }
        return DirectPartUpload.PartURL(url: url.url, headers: url.headers)
    }

    /// `RESULTDONE`: the coordinator checks the uploaded result (completing its multipart
    /// `upload` first, if any) and counts it (`ERR` thrown).
    func resultDone(_ task: TaskAssignment, sha256: String, total: Int64, upload: UploadedParts? = nil) async throws {
        let reply = try await client.request(.resultDone(task: task.task, epoch: task.epoch, sha256: sha256, total: total, upload: upload),
                                             timeout: requestTimeout)
        guard case .accepted(let id) = reply, id == task.task else { throw unexpected(reply, "RESULTDONE") }
    }

    static func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}

/// Sends a rendered result straight to the object store through a presigned `PUT` bound to its
/// SHA-256 (proto/PROTOCOL.md §4.5), then has the coordinator check and count it. A 403 (the URL
/// expired before the upload started) makes it ask for a new URL once.
struct DirectResultUpload {
    let session: CoordinatorSession

    /// - Returns: `false` when the coordinator hands out no URLs (send the result with
    ///   `RESULTPART` instead); `true` once the result is accepted.
    /// - Throws: the coordinator's refusal (`ReelProtocolError`); a store failure that outlasted
    ///   the transfer's retries as `ERR internal`, which the delivery retries like the
    ///   coordinator's own trouble.
    func send(_ pending: PendingResult) async throws -> Bool {
        switch try await session.resultParts(pending.assignment, sha256: pending.sha256, total: pending.byteCount) {
        case .unsupported: return false
        case .accepted: return true
        case .unknownVerb: return try await sendWhole(pending, first: nil)
        case .upload(let url): return try await sendWhole(pending, first: url)
        case .parts(let upload):
            try await sendParts(pending, upload)
            return true
        }
    }

    /// A large result in parts (proto/PROTOCOL.md §4.5, "Uploads in parts"): the parts the store
    /// lacks, then `RESULTDONE upload=`. A failure here is thrown as `ERR internal`, which the
    /// delivery retries: its `RESULTPARTS` then finds the upload again and sends only the
    /// parts still missing.
    func sendParts(_ pending: PendingResult, _ upload: BlobUpload) async throws {
        let session = self.session, assignment = pending.assignment, sha256 = pending.sha256
        let report: DirectPartUpload.Report
        do {
            report = try await DirectPartUpload(transfer: session.transfer).send(file: pending.path, upload: upload) { part, partSHA256, length, _ in
                try await session.resultPartURL(assignment, sha256: sha256, upload: upload.id, part: part, partSHA256: partSHA256, length: length)
            }
        } catch let error as ObjectStoreError {
            throw ReelProtocolError(.internal, "the result's upload in parts to the object store failed: \(error.message)")
        }
        try await session.resultDone(assignment, sha256: sha256, total: pending.byteCount,
                                     upload: UploadedParts(id: upload.id, partSHA256s: report.partSHA256s))
    }

    /// The result with one presigned `PUT` (`first`, or asked for with `RESULTURL`).
    private func sendWhole(_ pending: PendingResult, first: DirectURL?) async throws -> Bool {
        var given = first
        for attempt in 0..<2 {
            let url: DirectURL
            if let known = given {
                url = known
                given = nil
            } else {
                switch try await session.resultURL(pending.assignment, sha256: pending.sha256, total: pending.byteCount) {
                case .unsupported: return false
                case .accepted: return true
                case .upload(let fresh): url = fresh
                }
            }
            do {
                try await session.transfer.put(url: url.url, headers: url.headers, file: pending.path)
            } catch let error as ObjectStoreError where error.code == .accessDenied && attempt == 0 {
                continue
            } catch let error as ObjectStoreError {
                throw ReelProtocolError(.internal, "the result's upload to the object store failed: \(error.message)")
            }
            try await session.resultDone(pending.assignment, sha256: pending.sha256, total: pending.byteCount)
            return true
        }
        throw ReelProtocolError(.internal, "the object store refused two presigned uploads of the result in a row")
    }
}
