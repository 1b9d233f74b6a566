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

    /// What the coordinator said to `RESULTURL`/`RESULTPARTS`/`FINALURL`/`FINALPARTS`.
    enum UploadReply: Equatable { case parts(BlobUpload), upload(DirectURL), accepted, unknownVerb, unsupported }

    /// Asks where to upload `blob`: in `parts` (`RESULTPARTS`/`FINALPARTS`: a multipart upload
    /// to send the parts of, or a single PUT for a small blob) or whole (`RESULTURL`/`FINALURL`:
    /// a PUT bound to its SHA-256). `accepted` when the store already held a result;
    /// `unknownVerb` from a coordinator that predates the `…PARTS` verbs (ask whole);
    /// `unsupported` when it hands out no URLs (then remembered for this connection).
    func uploadURL(_ blob: DirectBlob, parts: Bool) async throws -> UploadReply {
        guard !direct.unsupported else { return .unsupported }
        let (task, epoch, sha256, total) = (blob.assignment.task, blob.assignment.epoch, blob.sha256, blob.total)
        let request: Message = switch (blob.kind, parts) {
        case (.result, false): .resultURL(task: task, epoch: epoch, sha256: sha256, total: total)
        case (.result, true): .resultParts(task: task, epoch: epoch, sha256: sha256, total: total)
        case (.output, false): .finalURL(task: task, epoch: epoch, sha256: sha256, total: total)
        case (.output, true): .finalParts(task: task, epoch: epoch, sha256: sha256, total: total)
        }
        do {
            let reply = try await client.request(request, timeout: requestTimeout)
            switch reply {
            case .parts(let hash, let upload, let partSize, let size, let have) where parts && hash == sha256 && size == total:
                return .parts(BlobUpload(id: upload, total: total, partSize: partSize, held: have))
            case .url(let url) where url.method == "PUT" && url.total == total: return .upload(url)
            case .accepted(let id) where id == task && blob.kind == .result: return .accepted
            default: throw unexpected(reply, request.verb)
            }
        } catch let error as ReelProtocolError where parts && error.code == .malformed && error.message.hasPrefix("unknown verb") {
            return .unknownVerb
        } catch let error as ReelProtocolError where error.meansNoDirectTransfers {
            direct.markUnsupported()
            return .unsupported
        }
    }

    /// `PARTURL` for part `part` of the blob's upload, under the task's lease (the coordinator
    /// knows from the lease whether it is a result's or a finalise's output).
    func partURL(_ blob: DirectBlob, upload: String, part: Int, partSHA256: String, length: Int64) async throws -> DirectPartUpload.PartURL {
        let request = PartURLRequest(sha256: blob.sha256, upload: upload, part: part, partSHA256: partSHA256, length: length,
                                     task: blob.assignment.task, epoch: blob.assignment.epoch)
        let reply = try await client.request(.partURL(request), timeout: requestTimeout)
        guard case .url(let url) = reply, url.method == "PUT", url.total == length else { throw unexpected(reply, "PARTURL") }
        return DirectPartUpload.PartURL(url: url.url, headers: url.headers)
    }

    /// `RESULTDONE`/`FINALDONE`: the coordinator checks the uploaded blob (completing its
    /// multipart `upload` first, if any) and counts it (`ERR` thrown).
    func uploadDone(_ blob: DirectBlob, upload: UploadedParts? = nil) async throws {
        let (task, epoch, sha256, total) = (blob.assignment.task, blob.assignment.epoch, blob.sha256, blob.total)
        let request: Message = switch blob.kind {
        case .result: .resultDone(task: task, epoch: epoch, sha256: sha256, total: total, upload: upload)
        case .output(let loudness): .finalDone(task: task, epoch: epoch, sha256: sha256, total: total, loudness: loudness, upload: upload)
        }
        let reply = try await client.request(request, timeout: requestTimeout)
        guard case .accepted(let id) = reply, id == task else { throw unexpected(reply, request.verb) }
    }

    static func nowMillis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}

/// A file an agent uploads straight to the object store under its lease: a render task's
/// result (`RESULT…` verbs) or a finalise task's output (`FINAL…` verbs, proto/PROTOCOL.md §4.5.1).
struct DirectBlob: Sendable {
    enum Kind: Sendable, Equatable {
        case result
        /// The job's output, with the loudness figures `FINALDONE` records.
        case output(loudness: String?)
    }
    var kind: Kind
    var assignment: TaskAssignment
    var path: String
    var sha256: String
    var total: Int64

    init(result pending: PendingResult) {
        kind = .result; assignment = pending.assignment; path = pending.path; sha256 = pending.sha256; total = pending.byteCount
    }

    init(output path: String, sha256: String, total: Int64, loudness: String?, for assignment: TaskAssignment) {
        kind = .output(loudness: loudness); self.assignment = assignment; self.path = path; self.sha256 = sha256; self.total = total
    }

    var what: String { kind == .result ? "result" : "output" }
}

/// Sends a rendered result or a finalised output straight to the object store (proto/PROTOCOL.md
/// §4.5 and §4.5.1), then has the coordinator check and count it: a blob larger than the
/// coordinator's part size in parts through presigned part URLs (resumable: asked again, the
/// coordinator finds the upload and the parts the store holds, and only the others are sent),
/// a smaller one with one presigned `PUT` bound to its SHA-256. A 403 (the URL expired before
/// the upload started) makes it ask for a new URL once.
struct DirectUpload {
    let session: CoordinatorSession

    /// - Returns: `false` when the coordinator hands out no URLs (send a result with
    ///   `RESULTPART` instead); `true` once the blob is accepted.
    /// - Throws: the coordinator's refusal (`ReelProtocolError`); a store failure that outlasted
    ///   the transfer's retries as `ERR internal`, which the caller retries like the
    ///   coordinator's own trouble (a retry resumes an upload in parts).
    func send(_ blob: DirectBlob) async throws -> Bool {
        switch try await session.uploadURL(blob, parts: true) {
        case .unsupported: return false
        case .accepted: return true
        case .unknownVerb: return try await sendWhole(blob, first: nil)
        case .upload(let url): return try await sendWhole(blob, first: url)
        case .parts(let upload):
            try await sendParts(blob, upload)
            return true
        }
    }

    /// A large blob in parts (proto/PROTOCOL.md §4.5, "Uploads in parts"): the parts the store
    /// lacks, then `RESULTDONE`/`FINALDONE upload=`. A failure here is thrown as `ERR internal`:
    /// asked again, `RESULTPARTS`/`FINALPARTS` finds the upload and only the missing parts are sent.
    /// - Parameter sent: called after each part is stored (a test can stop the upload there).
    func sendParts(_ blob: DirectBlob, _ upload: BlobUpload, sent: (Int) async throws -> Void = { _ in }) async throws {
        let session = self.session
        let report: DirectPartUpload.Report
        do {
            report = try await DirectPartUpload(transfer: session.transfer).send(file: blob.path, upload: upload, partURL: { part, partSHA256, length, _ in
                try await session.partURL(blob, upload: upload.id, part: part, partSHA256: partSHA256, length: length)
            }, sent: sent)
        } catch let error as ObjectStoreError {
            throw ReelProtocolError(.internal, "the \(blob.what)'s upload in parts to the object store failed: \(error.message)")
        }
        try await session.uploadDone(blob, upload: UploadedParts(id: upload.id, partSHA256s: report.partSHA256s))
    }

    /// The blob with one presigned `PUT` (`first`, or asked for with `RESULTURL`/`FINALURL`).
    private func sendWhole(_ blob: DirectBlob, first: DirectURL?) async throws -> Bool {
        var given = first
        for attempt in 0..<2 {
            let url: DirectURL
            if let known = given {
                url = known
                given = nil
            } else {
                switch try await session.uploadURL(blob, parts: false) {
                case .unsupported: return false
                case .accepted: return true
                case .upload(let fresh): url = fresh
                case .parts, .unknownVerb: throw ReelProtocolError(.internal, "unexpected reply to a whole upload's URL")
                }
            }
            do {
                try await session.transfer.put(url: url.url, headers: url.headers, file: blob.path)
            } catch let error as ObjectStoreError where error.code == .accessDenied && attempt == 0 {
                continue
            } catch let error as ObjectStoreError {
                throw ReelProtocolError(.internal, "the \(blob.what)'s upload to the object store failed: \(error.message)")
            }
            try await session.uploadDone(blob)
            return true
        }
        throw ReelProtocolError(.internal, "the object store refused two presigned uploads of the \(blob.what) in a row")
    }
}
