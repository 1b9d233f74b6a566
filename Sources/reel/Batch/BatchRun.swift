import Foundation
import ReelCore
import ReelMedia
import ReelProtocol

/// The rendering part of `reel batch`: the farm on this machine started once (`LocalFarm`,
/// as `reel render` starts it), one job per row, at most `jobs` in flight, each row's result
/// recorded in the manifest as it finishes.
///
/// The first row renders alone until one is done: its chunks are then stored, and every later
/// row is planned after them, so what the rows share (an intro, an outro, a background) is
/// found by its content key and reused instead of rendered again. A row whose media cannot be
/// read, whose job fails or whose output cannot be written fails alone; with `failFast` the
/// first failure cancels the rows in flight (they stay pending) and starts no other.
struct BatchRun {
    /// A row to render: its entry in the manifest and what it renders.
    struct Item: Sendable {
        var entry: Int
        var row: Int
        var output: String
        var valid: BatchPlan.ValidRow
    }

    /// How one row ended.
    enum Result: Sendable {
        /// `agentSeconds`: nil from a coordinator that does not report it.
        case done(durationSeconds: Double, bytes: Int64, agentSeconds: Double?, reusedChunks: Int, chunks: Int, job: Int64)
        case failed(String, job: Int64?)
        /// Cancelled before it finished (`--fail-fast`, Ctrl-C): still pending.
        case stopped
    }

    var templateName: String
    var templateDirectory: String
    var items: [Item]
    var agents: Int
    var jobs: Int
    var chunkSeconds: Rational
    var encoderThreads: Int
    var noCache: Bool
    var database: String?
    var failFast: Bool
    var quiet: Bool

    /// Renders every item, recording each in `files`. On Ctrl-C or SIGTERM the jobs in flight are
    /// cancelled and deleted and the farm stopped (`LocalFarm.tearDown`); the manifest keeps
    /// every row finished until then.
    /// - Returns: whether `failFast` stopped the batch.
    func run(_ files: ManifestFiles) async throws -> Bool {
        let farm = LocalFarm(home: AllInOneRender.dataHome)
        let work = Task { try await self.renderAll(on: farm, files: files) }
        Interruption.shared.whenInterrupted { work.cancel() }
        let outcome = await work.result
        // Whatever ended the work, the rows finished until then are in the manifest.
        var written: (any Error)?
        do { try await files.finish() } catch { written = error }
        let interrupted = Interruption.shared.isInterrupted
        await farm.tearDown(interrupted: interrupted)
        if interrupted { throw InterruptedError() }
        let stopped = try outcome.get()
        if let written { throw written }
        return stopped
    }

    private func renderAll(on farm: LocalFarm, files: ManifestFiles) async throws -> Bool {
        let (client, connection) = try await farm.start(agents: agents, chunkSeconds: chunkSeconds, database: database,
                                                        databaseHint: "or point reel batch at a database with --database/DATABASE_URL")
        await client.close()
        let progress = BatchProgress(total: items.count, quiet: quiet)
        defer { progress.finish() }
        return try await withThrowingTaskGroup(of: (Item, Result).self) { group in
            var next = 0, inFlight = 0
            var anyDone = false, stopped = false
            while true {
                // One row at a time until one is done, then up to `jobs`.
                // (Once cancelled — Ctrl-C — nothing new starts; the rows in flight come back stopped.)
                while !stopped, !Task.isCancelled, next < items.count, inFlight < (anyDone ? jobs : 1) {
                    let item = items[next]
                    next += 1
                    inFlight += 1
                    progress.rowStarted()
                    group.addTask { (item, await self.render(item, farm: farm, connection: connection)) }
                }
                guard inFlight > 0, let (item, result) = try await group.next() else { break }
                inFlight -= 1
                if case .done = result { anyDone = true }
                try await Self.record(result, of: item, in: files, progress: progress)
                if case .failed = result, failFast, !stopped {
                    stopped = true
                    group.cancelAll()
                    await Self.cancel(farm.jobs, farm: farm, connection: connection)
                }
            }
            return stopped
        }
    }

    /// Records how a row ended in the manifest (now or a moment later: `ManifestFiles`) and on
    /// the progress bar. Shared with `reel submit --batch` (`FarmBatchRun`).
    static func record(_ result: Result, of item: Item, in files: ManifestFiles, progress: BatchProgress) async throws {
        var entry = await files.manifest.entries[item.entry]
        switch result {
        case .done(let duration, let bytes, let agentSeconds, let reused, let chunks, let job):
            entry.status = .done
            entry.durationSeconds = duration; entry.bytes = bytes; entry.agentSeconds = agentSeconds
            entry.reusedChunks = reused; entry.chunks = chunks; entry.job = job; entry.error = nil
            progress.rowFinished(row: item.row, failed: false, detail: "\(item.output), \(agentSeconds.map { String(format: "%.2f", $0) } ?? "?") agent-s, "
                                 + "\(reused) of \(chunks) chunks reused")
        case .failed(let error, let job):
            entry.status = .failed
            entry.error = error; entry.job = job
            progress.rowFinished(row: item.row, failed: true, detail: error.escapingControlCharacters)
        case .stopped:
            progress.rowFinished(row: item.row, failed: false, stopped: true, detail: "")
        }
        try await files.record(entry, at: item.entry)
    }

    /// A row's job ended as `state`: a done job's output is downloaded to the row's path and
    /// its figures make the result; any other end is the row's failure. Shared with `reel
    /// submit --batch`.
    static func collect(job: Int64, state: String, error: String?, agentSeconds: Double?, tasks: TaskCounts, output: String,
                        durationSeconds: Double, via client: ReconnectingClient<OperatorClient>) async throws -> Result {
        guard state == "done" else { return .failed("the render failed: \(error ?? state)", job: job) }
        try await OutputDownload.run(job: job, to: output, via: client, quiet: true)
        guard let bytes = regularFileSize(output) else { return .failed("\(output) is missing after its download", job: job) }
        return .done(durationSeconds: durationSeconds, bytes: bytes, agentSeconds: agentSeconds,
                     reusedChunks: tasks.reused, chunks: tasks.total, job: job)
    }

    /// Cancels `jobs` on the farm (the rows in flight when `--fail-fast` stops the batch).
    private static func cancel(_ jobs: [Int64], farm: LocalFarm, connection: ConnectionOptions) async {
        guard !jobs.isEmpty else { return }
        do {
            let client = try await OperatorClient.connect(connection)
            for job in jobs {
                try? await client.cancel(job: job)
                farm.noteJobEnded(job)
            }
            await client.close()
        } catch {
            Terminal.error("could not cancel job(s) \(jobs.map(String.init).joined(separator: ", ")): \(error)")
        }
    }

    /// Renders one row on the farm: probes its media, submits its composition, follows the job
    /// and downloads the output to the row's path. Never throws: what goes wrong is the row's.
    private func render(_ item: Item, farm: LocalFarm, connection: ConnectionOptions) async -> Result {
        let resolved = item.valid.resolved
        var submitted: Int64?
        do {
            let plan: RenderPlan
            do {
                plan = try CompositionLoader.plan(resolved.composition, directory: templateDirectory, outputFileType: item.valid.fileType)
            } catch let error as CompositionError {
                return .failed(error.problems.map { resolved.relabel($0).description }.joined(separator: "; "), job: nil)
            }
            try makeFolder(URL(fileURLWithPath: item.output).deletingLastPathComponent().path, what: "the output's folder")
            try requireWritableOutput(item.output)
            let assets = try AssetManifest(composition: resolved.composition, directory: templateDirectory)
            try Task.checkCancellation()
            let client = try await OperatorClient.connect(connection)
            let following = ReconnectingClient(client, options: connection)
            do {
                let settings = JobSettings(chunkSeconds: chunkSeconds, encoderThreads: encoderThreads, name: "\(templateName) row \(item.row)",
                                           fileType: item.valid.fileType, noCache: noCache ? true : nil, chunkAtEdges: true)
                let job = try await SubmitCommand.submitAndUpload(SubmitRequest(composition: resolved.text, assets: assets.entries, settings: settings),
                                                                  manifest: assets, client: client, quiet: true) { job in
                    submitted = job
                    farm.noteJob(job)
                }
                let final = try await JobWaiter(client: following, job: job, quiet: true, reuploadAssets: {
                    try await following.perform { try await SubmitCommand.upload(assets, hashes: assets.files.keys.sorted(), client: $0, quiet: true) }
                }).waitUntilFinished()
                let result = try await Self.collect(job: job, state: final.state, error: final.error, agentSeconds: final.agentSeconds,
                                                    tasks: final.tasks, output: item.output, durationSeconds: plan.duration.seconds,
                                                    via: following)
                farm.noteJobEnded(job)
                await following.close()
                return result
            } catch {
                await following.close()
                throw error
            }
        } catch is CancellationError {
            return .stopped
        } catch where Task.isCancelled {
            return .stopped
        } catch let error as UserError {
            return .failed(error.description, job: submitted)
        } catch let error as CompositionError {
            return .failed(error.problems.map(\.description).joined(separator: "; "), job: submitted)
        } catch {
            return .failed("\(error)", job: submitted)
        }
    }
}
