import Foundation
import ReelObjectStore
import ReelProtocol
import ReelStore
import ReelScheduling

// Direct transfers with an object store (proto/PROTOCOL.md §4.5): the coordinator hands out
// presigned URLs and checks what was written with a HeadObject; it never carries the bytes.
extension CoordinatorHandler {
    /// `SOURCEURL`: a presigned GET of a stored source (or plan document).
    func sourceURL(sha256: String) async throws -> Message {
        guard storage.isRemote else { throw noDirect("read sources with FETCH") }
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.notFound, "no source \(sha256)") }
        guard let info = try await storage.blobs.info(.asset(sha256: sha256)) else { throw ReelProtocolError(.notFound, "no source \(sha256)") }
        return .url(try presigned(.asset(sha256: sha256), .read, total: info.size, readWith: "read sources with FETCH"))
    }

    /// `RESULTURL`: fenced and renewing like a `RESULTPART`; a result already stored by content
    /// completes the task at once, else a PUT bound to the result's SHA-256.
    func resultURL(task: Int64, epoch: Int64, sha256: String, total: Int64, peer: Peer) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.checksumMismatch, "sha256 must be 64 lower-case hex digits") }
        guard storage.isRemote else { throw noDirect("upload results with RESULTPART") }
        let lease = try await renewedLease(task: task, epoch: epoch, peer: peer)
        let key = BlobKey.result(sha256: sha256)
        if let info = try await storage.blobs.info(key), info.size == total, info.sha256 == nil || info.sha256 == sha256 {
            return try await complete(lease, result: TaskResult(sha256: sha256, size: total, key: storage.storedKey(key)), peer: peer)
        }
        return .url(try presigned(key, .write(sha256: sha256), total: total, readWith: "upload results with RESULTPART"))
    }

    /// `RESULTDONE`: counts the result only when the store holds `total` bytes under its content
    /// key (and the SHA-256 the store checked, where it reports one), under the lease.
    func resultDone(task: Int64, epoch: Int64, sha256: String, total: Int64, peer: Peer) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.checksumMismatch, "sha256 must be 64 lower-case hex digits") }
        guard storage.isRemote else { throw noDirect("upload results with RESULTPART") }
        let lease = try await renewedLease(task: task, epoch: epoch, peer: peer)
        let key = BlobKey.result(sha256: sha256)
        try await verifyUploaded(key, sha256: sha256, total: total)
        return try await complete(lease, result: TaskResult(sha256: sha256, size: total, key: storage.storedKey(key)), peer: peer)
    }

    /// `ASSETURL`: a PUT bound to the asset's SHA-256, or `STORED` when the store holds it.
    func assetURL(sha256: String, total: Int64) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.badRange, "sha256 must be 64 lower-case hex digits") }
        guard storage.isRemote else { throw noDirect("upload assets with PUT") }
        let key = BlobKey.asset(sha256: sha256)
        if let info = try await storage.blobs.info(key), info.size == total, info.sha256 == nil || info.sha256 == sha256 {
            return try await assetStored(sha256: sha256, total: total)
        }
        return .url(try presigned(key, .write(sha256: sha256), total: total, readWith: "upload assets with PUT"))
    }

    /// `ASSETDONE`: checks the uploaded asset as `RESULTDONE` checks a result, then records it
    /// and releases the jobs that waited for it, as the `PUT` that completes an asset does.
    func assetDone(sha256: String, total: Int64) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.badRange, "sha256 must be 64 lower-case hex digits") }
        guard storage.isRemote else { throw noDirect("upload assets with PUT") }
        try await verifyUploaded(.asset(sha256: sha256), sha256: sha256, total: total)
        return try await assetStored(sha256: sha256, total: total)
    }

    /// `OUTPUTURL`: a presigned GET of a done job's output.
    func outputURL(job: Int64) async throws -> Message {
        guard storage.isRemote else { throw noDirect("read outputs with OUTPUT") }
        let key = try await outputKey(job: job)
        guard let info = try await storage.blobs.info(key) else { throw ReelProtocolError(.notFound, "job \(job)'s output is not in the storage") }
        return .url(try presigned(key, .read, total: info.size, readWith: "read outputs with OUTPUT"))
    }

    // MARK: Helpers

    private func assetStored(sha256: String, total: Int64) async throws -> Message {
        let path = storage.storedKey(.asset(sha256: sha256))
        let released = try await pool.run { try $0.assets.stored(sha256: sha256, size: total, storedKey: path) }
        for job in released { await splitter.split(job: job) }
        return .stored(sha256: sha256, have: total, total: total)
    }

    /// What the store says of an object uploaded through a presigned PUT: present, `total`
    /// bytes, and the declared SHA-256 when the store reports a full-object checksum. (The PUT
    /// was bound to `x-amz-checksum-sha256`, so the store refused other bytes; the coordinator
    /// reads none of them.)
    private func verifyUploaded(_ key: BlobKey, sha256: String, total: Int64) async throws {
        let info: BlobInfo?
        do {
            info = try await storage.blobs.info(key)
        } catch let error as ObjectStoreError {
            throw ReelProtocolError(.internal, "cannot check \(key) in the object store: \(error.message)")
        }
        guard let info else { throw ReelProtocolError(.notFound, "\(key) is not in the store; upload it (again) before saying it is done") }
        guard info.size == total else {
            throw ReelProtocolError(.checksumMismatch, "\(key) holds \(info.size) bytes, not the declared \(total); upload it again")
        }
        if let stored = info.sha256, stored != sha256 {
            throw ReelProtocolError(.checksumMismatch, "\(key) has SHA-256 \(stored), not \(sha256); upload it again")
        }
    }

    /// The lease `task`/`epoch` names, renewed (a direct upload keeps its lease as parts do).
    private func renewedLease(task: Int64, epoch: Int64, peer: Peer) async throws -> Lease {
        guard let agent = agentID(peer) else { throw ReelProtocolError(.staleEpoch, "task \(task): this connection holds no lease (send CAPS)") }
        let lease = Lease(task: task, epoch: epoch, agent: agent)
        let leaseSeconds = configuration.leaseSeconds
        do {
            _ = try await pool.run { try $0.lifecycle.renew(lease, leaseSeconds: leaseSeconds) }
        } catch StoreError.staleEpoch {
            throw ReelProtocolError(.staleEpoch, "task \(task) is no longer held under epoch \(epoch) by \(peer.name)")
        }
        return lease
    }

    private func presigned(_ key: BlobKey, _ access: BlobAccess, total: Int64, readWith fallback: String) throws -> DirectURL {
        let expires = configuration.presignExpirySeconds
        let request: PresignedRequest?
        do {
            request = try storage.blobs.presign(key, access, expires: expires)
        } catch let error as ObjectStoreError {
            throw ReelProtocolError(.internal, "cannot presign \(key): \(error.message)")
        }
        guard let request else { throw noDirect(fallback) }
        metrics.presignedURLs.increment()
        return DirectURL(method: request.method, url: request.url, headers: request.headers,
                         expiresAtMillis: request.expiresAt.epochSeconds * 1000, total: total)
    }

    private func noDirect(_ fallback: String) -> ReelProtocolError {
        ReelProtocolError(.noDirect, "the coordinator stores in a local directory; \(fallback)")
    }
}
