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
        if let stored = try await acceptIfStored(task: task, epoch: epoch, sha256: sha256, total: total, peer: peer) { return stored }
        return .url(try presigned(.result(sha256: sha256), .write(sha256: sha256), total: total, readWith: "upload results with RESULTPART"))
    }

    /// `RESULTDONE`: counts the result only when the store holds `total` bytes under its content
    /// key (and the SHA-256 the store checked, where it reports one), under the lease.
    func resultDone(task: Int64, epoch: Int64, sha256: String, total: Int64, upload: UploadedParts?, peer: Peer) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.checksumMismatch, "sha256 must be 64 lower-case hex digits") }
        guard storage.isRemote else { throw noDirect("upload results with RESULTPART") }
        let lease = try await renewedLease(task: task, epoch: epoch, peer: peer)
        let key = BlobKey.result(sha256: sha256)
        if let upload { try await completeParts(key, upload: upload, total: total, partSize: resultPartSize(total)) }
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
        // One PUT is checked by the store against the plain SHA-256 it is bound to; a larger
        // asset is named by its tree hash (AssetAddress) and goes up in parts.
        guard AssetAddress.partSize(total: total) == nil else {
            throw ReelProtocolError(.malformed, "an asset of \(total) bytes (over \(AssetAddress.basePartSize)) goes up in parts: ask ASSETPARTS")
        }
        return .url(try presigned(key, .write(sha256: sha256), total: total, readWith: "upload assets with PUT"))
    }

    /// `ASSETDONE`: checks the uploaded asset as `RESULTDONE` checks a result, then records it
    /// and releases the jobs that waited for it, as the `PUT` that completes an asset does. An
    /// asset in parts is checked by its name, the tree hash of its parts' SHA-256s, which the
    /// store checked part by part (`AssetAddress`): none of its bytes are read back.
    func assetDone(sha256: String, total: Int64, upload: UploadedParts?) async throws -> Message {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.badRange, "sha256 must be 64 lower-case hex digits") }
        guard storage.isRemote else { throw noDirect("upload assets with PUT") }
        if let upload {
            guard let partSize = AssetAddress.partSize(total: total) else {
                throw ReelProtocolError(.malformed, "an asset of \(total) bytes goes up in one PUT (ASSETURL), not in parts")
            }
            try await completeParts(.asset(sha256: sha256), upload: upload, total: total, partSize: partSize)
        }
        try await verifyUploaded(.asset(sha256: sha256), sha256: sha256, total: total)
        return try await assetStored(sha256: sha256, total: total)
    }

    /// `ASSETPARTS`: as `ASSETURL`, but an asset named by its tree hash (larger than
    /// `AssetAddress.basePartSize`) is uploaded in parts of its layout (`PARTS`: the upload,
    /// found again if one is in progress, and the parts it holds).
    func assetParts(sha256: String, total: Int64) async throws -> Message {
        guard let partSize = AssetAddress.partSize(total: total) else { return try await assetURL(sha256: sha256, total: total) }
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.badRange, "sha256 must be 64 lower-case hex digits") }
        guard storage.isRemote else { throw noDirect("upload assets with PUT") }
        let key = BlobKey.asset(sha256: sha256)
        if let info = try await storage.blobs.info(key), info.size == total, info.sha256 == nil || info.sha256 == sha256 {
            return try await assetStored(sha256: sha256, total: total)
        }
        return try await openParts(key, sha256: sha256, total: total, partSize: partSize, readWith: "upload assets with PUT")
    }

    /// What `RESULTURL` and `RESULTPARTS` do first: check the hash, refuse without an object
    /// store, fence and renew the lease, and complete the task at once (`ACCEPTED`) when the
    /// store already holds the result by content. nil: the result must be uploaded.
    private func acceptIfStored(task: Int64, epoch: Int64, sha256: String, total: Int64, peer: Peer) async throws -> Message? {
        guard CoordinatorStorage.isValidHash(sha256) else { throw ReelProtocolError(.checksumMismatch, "sha256 must be 64 lower-case hex digits") }
        guard storage.isRemote else { throw noDirect("upload results with RESULTPART") }
        let lease = try await renewedLease(task: task, epoch: epoch, peer: peer)
        let key = BlobKey.result(sha256: sha256)
        guard let info = try await storage.blobs.info(key), info.size == total, info.sha256 == nil || info.sha256 == sha256 else { return nil }
        return try await complete(lease, result: TaskResult(sha256: sha256, size: total, key: storage.storedKey(key)), peer: peer)
    }

    /// `RESULTPARTS`: as `RESULTURL` (fenced, renewing, `ACCEPTED` for a stored result), but a
    /// result larger than the part size is uploaded in parts (`PARTS`).
    func resultParts(task: Int64, epoch: Int64, sha256: String, total: Int64, peer: Peer) async throws -> Message {
        guard total > configuration.directPartSize else { return try await resultURL(task: task, epoch: epoch, sha256: sha256, total: total, peer: peer) }
        if let stored = try await acceptIfStored(task: task, epoch: epoch, sha256: sha256, total: total, peer: peer) { return stored }
        return try await openParts(.result(sha256: sha256), sha256: sha256, total: total, partSize: resultPartSize(total),
                                   readWith: "upload results with RESULTPART")
    }

    /// `PARTURL`: a presigned PUT of one part of an upload, bound to the part's SHA-256. An
    /// agent's is fenced by its lease and renews it, and is of its result, or of the job's
    /// output when the lease is a finalise task's (`FINALPARTS`); a client's is an asset's.
    func partURL(_ request: PartURLRequest, peer: Peer) async throws -> Message {
        guard CoordinatorStorage.isValidHash(request.sha256) else { throw ReelProtocolError(.badRange, "sha256 must be 64 lower-case hex digits") }
        let key: BlobKey
        switch (peer.role, request.task, request.epoch) {
        case (.agent, let task?, let epoch?):
            guard storage.isRemote else { throw noDirect("upload results with RESULTPART") }
            let lease = try await renewedLease(task: task, epoch: epoch, peer: peer)
            if try await pool.run({ try $0.lifecycle.kindOfLease(lease) }) == .finalise {
                key = try await finaliseOutputKey(task: task, epoch: epoch, peer: peer)
            } else {
                key = .result(sha256: request.sha256)
            }
        case (.client, nil, nil):
            guard storage.isRemote else { throw noDirect("upload assets with PUT") }
            key = .asset(sha256: request.sha256)
        case (.agent, _, _):
            throw ReelProtocolError(.malformed, "PARTURL from an agent names its result's lease (task= and epoch=)")
        default:
            throw ReelProtocolError(.malformed, "PARTURL from a client names an asset, without task= or epoch=")
        }
        guard request.length > 0, request.length <= Int64(5) << 30 else {
            throw ReelProtocolError(.badRange, "PARTURL: a part is 1 byte to 5 GiB, not \(request.length)")
        }
        let upload = BlobUpload(id: request.upload, total: request.length, partSize: request.length, held: [])
        let presigned: PresignedRequest?
        do {
            presigned = try storage.blobs.presignPart(key, upload: upload, part: request.part, sha256: request.partSHA256,
                                                      expires: configuration.presignExpirySeconds)
        } catch let error as ObjectStoreError {
            throw ReelProtocolError(.internal, "cannot presign part \(request.part) of \(key): \(error.message)")
        }
        guard let presigned else { throw noDirect("upload with PUT or RESULTPART") }
        metrics.presignedURLs.increment()
        return .url(DirectURL(method: presigned.method, url: presigned.url, headers: presigned.headers,
                              expiresAtMillis: presigned.expiresAt.epochSeconds * 1000, total: request.length))
    }

    /// `OUTPUTURL`: a presigned GET of a done job's output.
    func outputURL(job: Int64) async throws -> Message {
        guard storage.isRemote else { throw noDirect("read outputs with OUTPUT") }
        let key = try await outputKey(job: job)
        guard let info = try await storage.blobs.info(key) else { throw ReelProtocolError(.notFound, "job \(job)'s output is not in the storage") }
        return .url(try presigned(key, .read, total: info.size, readWith: "read outputs with OUTPUT"))
    }

    // MARK: Helpers

    /// The part size of a result or output of `total` bytes uploaded in parts: the
    /// coordinator's `directPartSize`, raised to S3's limits. (Assets have a layout of their
    /// own, `AssetAddress.partSize`.)
    func resultPartSize(_ total: Int64) -> Int64 {
        BlobUpload.partSize(total: total, preferred: configuration.directPartSize)
    }

    /// The multipart upload of `key` (found again, or started) in parts of `partSize`, as a
    /// `PARTS` reply.
    func openParts(_ key: BlobKey, sha256: String, total: Int64, partSize: Int64, readWith fallback: String) async throws -> Message {
        let upload: BlobUpload?
        do {
            upload = try await storage.blobs.openUpload(key, total: total, partSize: partSize)
        } catch let error as ObjectStoreError {
            throw ReelProtocolError(.internal, "cannot start an upload of \(key) in the object store: \(error.message)")
        }
        guard let upload else { throw noDirect(fallback) }
        if !upload.held.isEmpty {
            logger.info("resuming a multipart upload", metadata: [
                "key": "\(key)", "parts": "\(upload.partCount)", "held": "\(upload.held.count)"])
        }
        return .parts(sha256: sha256, upload: upload.id, partSize: upload.partSize, total: total, have: upload.held)
    }

    /// Completes the multipart upload `upload` of `key` (`total` bytes, in the part size
    /// `openParts` chose), the store checking every part against its SHA-256.
    func completeParts(_ key: BlobKey, upload: UploadedParts, total: Int64, partSize: Int64) async throws {
        let layout = BlobUpload(id: upload.id, total: total, partSize: partSize, held: [])
        do {
            guard upload.partSHA256s.count == layout.partCount else {
                throw ReelProtocolError(.malformed, "\(key) is \(layout.partCount) parts of \(layout.partSize) bytes, "
                                        + "not the \(upload.partSHA256s.count) whose SHA-256s were sent")
            }
            try await storage.blobs.completeUpload(key, upload: layout, partSHA256s: upload.partSHA256s)
        } catch let error as ObjectStoreError where error.code == .notFound {
            throw ReelProtocolError(.notFound, error.message)
        } catch let error as ObjectStoreError where error.code == .integrity {
            throw ReelProtocolError(.checksumMismatch, error.message)
        } catch let error as ObjectStoreError {
            throw ReelProtocolError(.internal, "cannot complete the upload of \(key) in the object store: \(error.message)")
        }
    }

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
    func verifyUploaded(_ key: BlobKey, sha256: String, total: Int64) async throws {
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
    func renewedLease(task: Int64, epoch: Int64, peer: Peer) async throws -> Lease {
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
