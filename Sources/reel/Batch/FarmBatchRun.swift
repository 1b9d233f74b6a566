import Foundation
import ReelCore
import ReelMedia
import ReelProtocol

/// `reel submit --batch`: a batch's rows as jobs on a running farm, grouped under a batch id
/// the coordinator keeps (`BATCH`, then one `SUBMIT` per row naming it).
///
/// Every row is prepared first — its media probed and hashed, as `reel batch` does just before
/// it renders a row — so a row whose media cannot be read fails alone before anything is
/// submitted (with `failFast`, nothing is submitted). Then the batch is opened and its rows
/// submitted in row order; the coordinator plans the first at once and the others once it has
/// ended, so what the rows share is rendered once and reused. With `wait`, the batch is
/// followed with one `BATCHSTATUS` a second, and each row's output is downloaded as its job
/// ends and recorded in the manifest (`BatchRun.collect`, `BatchRun.record`: the same code and
/// files as `reel batch`).
struct FarmBatchRun {
    var templateName: String
    var templateDirectory: String
    var items: [BatchRun.Item]
    /// Settings every row's job shares (each gets its own name and batch row).
    var settings: JobSettings
    var connection: ConnectionOptions
    var wait: Bool
    var failFast: Bool
    var quiet: Bool

    /// Outputs downloaded at once while following the batch.
    static let downloadsAtOnce = 4

    /// A row ready to submit: its submission and the files it uploads.
    private struct Prepared {
        var item: BatchRun.Item
        var request: SubmitRequest
        var assets: AssetManifest
        var durationSeconds: Double
    }

    /// Submits the rows (and with `wait` follows them to the end).
    /// - Returns: the batch's id (nil when no row could be submitted) and whether `failFast`
    ///   stopped it.
    func run(_ files: ManifestFiles) async throws -> (batch: Int64?, stopped: Bool) {
        let progress = BatchProgress(total: items.count, quiet: quiet || !wait)
        defer { progress.finish() }
        var prepared: [Prepared] = []
        for item in items {
            switch prepare(item) {
            case .success(let row): prepared.append(row)
            case .failure(let error):
                if failFast {
                    throw UserError("row \(item.row): \(error.description); nothing was submitted (--fail-fast)")
                }
                progress.rowStarted()
                try await BatchRun.record(.failed(error.description, job: nil), of: item, in: files, progress: progress)
            }
        }
        guard !prepared.isEmpty else { return (nil, false) }

        let client = try await OperatorClient.connect(connection)
        let batch = try await client.openBatch(NewBatchRequest(name: "\(templateName) × \(prepared.count) rows", rows: prepared.count))
        var jobs: [Int64: Prepared] = [:]
        for row in prepared {
            var request = row.request
            request.settings.batch = BatchMembership(id: batch, row: row.item.row)
            let job = try await SubmitCommand.submitAndUpload(request, manifest: row.assets, client: client, quiet: true)
            jobs[job] = row
            var entry = await files.manifest.entries[row.item.entry]
            entry.job = job
            try await files.record(entry, at: row.item.entry)
        }
        // Unbuffered, at once: a script capturing the id must not wait for --wait to finish.
        FileHandle.standardOutput.write(Data("b\(batch)\n".utf8))
        if !quiet { Terminal.error("batch b\(batch): \(jobs.count) rows submitted; follow it with `reel status b\(batch)`") }
        guard wait else {
            await client.close()
            return (batch, false)
        }
        let following = ReconnectingClient(client, options: connection)
        following.giveUpHint = "batch b\(batch) goes on without us: follow it with `reel status b\(batch) --rows`"
        for _ in jobs { progress.rowStarted() }
        do {
            let stopped = try await follow(batch: batch, jobs: jobs, files: files, progress: progress, via: following)
            await following.close()
            return (batch, stopped)
        } catch {
            await following.close()
            throw error
        }
    }

    /// Probes the row's media (its length, and a clear failure when a file cannot be read) and
    /// hashes its assets.
    private func prepare(_ item: BatchRun.Item) -> Result<Prepared, UserError> {
        let resolved = item.valid.resolved
        do {
            let plan = try CompositionLoader.plan(resolved.composition, directory: templateDirectory, outputFileType: item.valid.fileType)
            let assets = try AssetManifest(composition: resolved.composition, directory: templateDirectory)
            var settings = settings
            settings.name = "\(templateName) row \(item.row)"
            settings.fileType = item.valid.fileType
            return .success(Prepared(item: item, request: SubmitRequest(composition: resolved.text, assets: assets.entries, settings: settings),
                                     assets: assets, durationSeconds: plan.duration.seconds))
        } catch let error as CompositionError {
            return .failure(UserError(error.problems.map { resolved.relabel($0).description }.joined(separator: "; ")))
        } catch let error as UserError {
            return .failure(error)
        } catch {
            return .failure(UserError("\(error)"))
        }
    }

    /// Polls the batch until every row's job has ended and been collected: each row's output
    /// is downloaded and recorded as its job ends, a few at once. With `failFast`, the first
    /// failure cancels every job not ended (those rows stay pending).
    private func follow(batch: Int64, jobs: [Int64: Prepared], files: ManifestFiles, progress: BatchProgress,
                        via client: ReconnectingClient<OperatorClient>) async throws -> Bool {
        var pending = jobs
        var stopped = false
        let failed = ConnectionClosedFlag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            var inFlight = 0
            while !pending.isEmpty {
                if failFast, !stopped, failed.isSet {
                    stopped = true
                    for job in pending.keys.sorted() { try? await client.perform { try await $0.cancel(job: job) } }
                }
                let report = try await client.perform { try await $0.batchStatus(batch, rows: true) }
                for status in report.rowStatuses ?? [] where ClientFormatting.finishedStates.contains(status.state) {
                    guard let row = pending.removeValue(forKey: status.job) else { continue }
                    if stopped, status.state != "done" {
                        try await BatchRun.record(.stopped, of: row.item, in: files, progress: progress)
                        continue
                    }
                    if inFlight >= Self.downloadsAtOnce {
                        try await group.next()
                        inFlight -= 1
                    }
                    inFlight += 1
                    // Each download on a connection of its own (the follower's is busy polling).
                    let item = row.item, duration = row.durationSeconds, connection = connection
                    group.addTask {
                        let result: BatchRun.Result
                        do {
                            let client = ReconnectingClient(try await OperatorClient.connect(connection), options: connection)
                            do {
                                result = try await BatchRun.collect(job: status.job, state: status.state, error: status.error,
                                                                    agentSeconds: status.agentSeconds,
                                                                    tasks: TaskCounts(total: status.chunks, reused: status.reusedChunks),
                                                                    output: item.output, durationSeconds: duration, via: client)
                                await client.close()
                            } catch {
                                await client.close()
                                throw error
                            }
                        } catch {
                            result = .failed("\(error)", job: status.job)
                        }
                        if case .failed = result { failed.set() }
                        try await BatchRun.record(result, of: item, in: files, progress: progress)
                    }
                }
                if !pending.isEmpty { try await Task.sleep(for: .seconds(1)) }
            }
            try await group.waitForAll()
        }
        return stopped
    }
}
