import Foundation
import ServiceLifecycle
import Logging
import ReelCore
import ReelObjectStore
import ReelStore
import ReelScheduling

/// What one sweep deleted.
public struct SweepReport: Hashable, Sendable {
    public var outputs = 0
    public var results = 0
    public var assets = 0
    public var abandonedUploads = 0
    public var temporaries = 0
    public var agents: [String] = []
    public var bytesFreed: Int64 = 0
    /// Another coordinator was sweeping the same database: this pass did nothing.
    public var skipped = false
}

/// The periodic storage sweep (every `storageSweepInterval`): expires done jobs' outputs,
/// deletes chunk results and assets no job needs any more, abandoned `.partial` uploads (a
/// result's as soon as its lease is gone) and `tmp/` leftovers (`RetentionPolicy`), and
/// forgets agents long offline. The decisions are `StorageSweep`'s (pure); this lists
/// directories, asks the store, deletes. `now` is injected so tests sweep "a week later"
/// without waiting.
public final class StorageSweeper: Service {
    private let worker: StoreWorker
    private let storage: CoordinatorStorage
    private let configuration: CoordinatorConfiguration
    private let logger: Logger
    private let now: @Sendable () -> Int64

    init(worker: StoreWorker, storage: CoordinatorStorage, configuration: CoordinatorConfiguration, logger: Logger,
         now: @escaping @Sendable () -> Int64) {
        self.worker = worker; self.storage = storage; self.configuration = configuration; self.logger = logger; self.now = now
    }

    /// A sweeper on its own database connection, for running a sweep outside a coordinator (tests, tools).
    public convenience init(configuration: CoordinatorConfiguration, logger: Logger = Logger(label: "reel.sweep"),
                            now: @escaping @Sendable () -> Int64 = { StorageSweeper.wallClockMillis() }) throws {
        try self.init(configuration: configuration, objectStore: nil, logger: logger, now: now)
    }

    /// A sweeper of the object store `configuration.objectStore` names (connected first).
    public static func connecting(configuration: CoordinatorConfiguration, logger: Logger = Logger(label: "reel.sweep"),
                                  now: @escaping @Sendable () -> Int64 = { StorageSweeper.wallClockMillis() }) async throws -> StorageSweeper {
        let objectStore = try await configuration.objectStore?.connect(logger: Logger(label: "reel.s3"))
        return try StorageSweeper(configuration: configuration, objectStore: objectStore, logger: logger, now: now)
    }

    private convenience init(configuration: CoordinatorConfiguration, objectStore: (any BlobStore)?, logger: Logger,
                             now: @escaping @Sendable () -> Int64) throws {
        self.init(worker: try StoreWorker(conninfo: configuration.database, label: "sweep"),
                  storage: CoordinatorStorage(root: configuration.storageDirectory, blobs: objectStore), configuration: configuration,
                  logger: logger, now: now)
    }

    public static func wallClockMillis() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Sweeps every `storageSweepInterval` until graceful shutdown.
    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.sweepPeriodically() }
    }

    private func sweepPeriodically() async {
        await PeriodicLoop(every: configuration.storageSweepInterval).run {
            do {
                let report = try await sweep(waiting: false)
                if report != SweepReport() && !report.skipped {
                    logger.info("storage swept", metadata: [
                        "outputs": "\(report.outputs)", "results": "\(report.results)", "assets": "\(report.assets)",
                        "abandonedUploads": "\(report.abandonedUploads)", "temporaries": "\(report.temporaries)",
                        "agentsForgotten": "\(report.agents)", "bytesFreed": "\(report.bytesFreed)"])
                }
            } catch {
                logger.error("storage sweep failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// One pass; returns what it deleted. Several coordinators share a database (and its
    /// storage): a pass runs under the `FarmLock.storageSweep` advisory lock. The periodic pass
    /// (`waiting: false`) is skipped when another coordinator's sweep holds it; an explicit one
    /// waits for it.
    @discardableResult
    public func sweep(waiting: Bool = true) async throws -> SweepReport {
        if waiting {
            try await worker.run { try $0.coordinators.lock(.storageSweep) }
        } else {
            guard try await worker.run({ try $0.coordinators.tryLock(.storageSweep) }) else { return SweepReport(skipped: true) }
        }
        do {
            let report = try await sweepLocked()
            try await worker.run { try $0.coordinators.unlock(.storageSweep) }
            return report
        } catch {
            _ = try? await worker.run { try $0.coordinators.unlock(.storageSweep) }
            throw error
        }
    }

    private func sweepLocked() async throws -> SweepReport {
        let nowMillis = now(), policy = configuration.retention, storage = storage
        let cutoff = policy.endedCutoffMillis(nowMillis: nowMillis)
        var report = SweepReport()
        let outputs = storage.root + "/outputs/"

        // Outputs first: a job's row stops pointing at its file before the file goes.
        if let cutoff {
            for (job, key) in try await worker.run({ try $0.assets.expiredOutputs(before: cutoff) }) {
                try await worker.run { try $0.assets.clearOutput(job: job, key: key) }
                // Only outputs under our own keys are ever deleted.
                if storage.isRemote {
                    if let blob = storage.blobKey(storedKey: key), case .output = blob { report.bytesFreed += await remove(blob) }
                } else if key.hasPrefix(outputs) {
                    report.bytesFreed += Self.remove(key)
                }
                report.outputs += 1
            }
        }

        let doneCutoff = policy.doneChunksCutoffMillis(nowMillis: nowMillis)
        let neededResults = try await worker.run { try $0.assets.neededResultHashes(endedAfter: cutoff, doneEndedAfter: doneCutoff) }
        let resultFiles = try await blobFiles(.results)
        let unneededResults = StorageSweep.resultsToDelete(resultFiles, needed: neededResults, nowMillis: nowMillis, policy: policy)
        for name in unneededResults {
            report.bytesFreed += storage.isRemote ? await remove(.result(sha256: name)) : Self.remove(storage.resultPath(name))
            report.results += 1
        }
        // The preview's remuxed pieces go with their result (they are a cache of it), wherever
        // the results are kept.
        let storedResults = Set(resultFiles.map(\.name)).subtracting(unneededResults)
        for name in CoordinatorStorage.previewsToDelete(storage.list("previews"), storedResults: storedResults) {
            report.bytesFreed += Self.remove(storage.root + "/previews/" + name)
        }

        let neededAssets = try await worker.run { try $0.assets.neededAssetHashes(endedAfter: cutoff) }
        let assets = StorageSweep.assetsToDelete(try await blobFiles(.assets), needed: neededAssets, nowMillis: nowMillis, policy: policy)
        for hash in assets.unneeded {
            // Re-checked in the database, under the upload lock, at the moment of deletion.
            let freed = try await worker.run { store -> Int64? in
                try storage.withUploadLock {
                    try store.assets.forgetIfUnneeded(sha256: hash, endedAfter: cutoff) ? Self.remove(storage.assetPath(hash)) : nil
                }
            }
            // The object store's copy goes after the database forgot it (never before).
            if let freed { report.bytesFreed += storage.isRemote ? await remove(.asset(sha256: hash)) : freed; report.assets += 1 }
        }
        for name in assets.abandonedUploads {
            report.bytesFreed += storage.removePartialUpload(at: storage.root + "/assets/" + name)
            report.abandonedUploads += 1
        }
        // Partial results whose lease is gone (lost, expired after the agent's connection never
        // came back, the job cancelled) can never complete.
        let partialResults = storage.list("results").filter { CoordinatorStorage.partialResult(named: $0.name) != nil }
        if !partialResults.isEmpty {
            let tasks = partialResults.compactMap { CoordinatorStorage.partialResult(named: $0.name)?.task }
            let leased = try await worker.run { try $0.lifecycle.leasedEpochs(tasks: tasks) }
            for name in StorageSweep.abandonedResultUploads(partialResults, leased: leased, nowMillis: nowMillis, policy: policy) {
                report.bytesFreed += storage.removePartialUpload(at: storage.root + "/results/" + name)
                report.abandonedUploads += 1
            }
        }
        for name in StorageSweep.temporariesToDelete(storage.list("tmp"), nowMillis: nowMillis, policy: policy) {
            report.bytesFreed += Self.remove(storage.root + "/tmp/" + name)
            report.temporaries += 1
        }
        if storage.isRemote {
            let uploadCutoff = Date(timeIntervalSince1970: Double(nowMillis) / 1000 - policy.uploadGraceSeconds)
            report.abandonedUploads += try await storage.blobs.removeAbandonedUploads(startedBefore: uploadCutoff)
        }

        if let after = configuration.forgetOfflineAgentsAfterSeconds {
            let finaliser = configuration.finaliserAgentName
            report.agents = try await worker.run { try $0.agents.forgetOffline(before: nowMillis - Int64(after * 1000), keeping: finaliser) }
        }
        return report
    }

    /// The files of a content folder as retention sees them: the directory's (blobs by hash and
    /// uploads in progress), or with an object store its listing of the kind (by hash) and the
    /// directory's uploads in progress.
    private func blobFiles(_ kind: BlobKind) async throws -> [StoredFile] {
        let directory = storage.list(kind.rawValue)
        guard storage.isRemote else { return directory }
        var files = directory.filter { $0.name.hasSuffix(".partial") }
        try await storage.blobs.list(kind) { page in
            files += page.compactMap { blob in
                guard let hash = blob.key.contentSHA256 else { return nil }
                return StoredFile(name: hash, modifiedMillis: Int64((blob.modified ?? Date()).timeIntervalSince1970 * 1000))
            }
        }
        return files
    }

    /// Deletes a blob from the object store and its local copy; returns the bytes it held.
    private func remove(_ key: BlobKey) async -> Int64 {
        let size = (try? await storage.blobs.info(key))?.size ?? 0
        let failed = await storage.delete([key])
        for (key, error) in failed { logger.warning("cannot delete a blob; the next sweep tries again", metadata: ["key": "\(key)", "error": "\(error)"]) }
        return failed.isEmpty ? size : 0
    }

    /// Deletes a file; returns the bytes it held (0 if it was already gone).
    private static func remove(_ path: String) -> Int64 {
        let size = CoordinatorStorage.fileSize(path) ?? 0
        return unlink(path) == 0 ? size : 0
    }
}
