import ArgumentParser
import Foundation
import ReelCore
import ReelMedia
import ReelProtocol

/// `reel submit`: validate locally, upload only what the coordinator lacks, queue the job.
struct SubmitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Queue a composition on the render farm and print its job id.",
        discussion: """
            Validates the composition on this machine first (every problem is listed), hashes every asset \
            (SHA-256), submits the job and uploads only the assets the coordinator does not already hold, \
            in ranges. Prints the job id alone on stdout, so scripts can capture it: \
            JOB=$(reel submit comp.json). With --wait it then shows the job's progress and, with -o, \
            downloads the result (written under a temporary name, flushed and renamed); it exits 1 with \
            the job's error if the job failed or was cancelled. While waiting and downloading it rides out \
            a coordinator or database restart: it says once that it is reconnecting, retries for up to \
            5 minutes and resumes the download at the byte it reached.
            """)

    @Argument(help: "The composition JSON file.") var composition: String
    @OptionGroup var connection: ConnectionOptions
    @Flag(help: "Wait for the job to finish, showing its progress.") var wait = false
    @Option(name: .shortAndLong, help: "With --wait: where to write the finished output.") var output: String?
    @Option(help: "Target chunk length in seconds, a decimal or N/D (default: the farm's, 10).") var chunkSeconds: String?
    @Option(help: "x264 threads per chunk, fixed for the job (default: the farm's, 4).") var encoderThreads: Int?
    @Option(help: "A name for `reel status` (default: the composition's file name).") var name: String?
    @Option(help: "Priority, -1000…1000: higher runs first (default 0). Change it later with `reel priority JOB N`.")
    var priority: Int?
    @Flag(help: "Render every chunk anew, even those an earlier job already rendered identically (no reuse).") var noCache = false
    @Flag(help: "No progress output.") var quiet = false

    func validate() throws {
        if output != nil && !wait { throw ValidationError("-o needs --wait (or fetch later with `reel fetch JOB -o OUT`)") }
        if let chunkSeconds {
            guard let s = Rational(parsing: chunkSeconds), RenderLimits.problem(withChunkSeconds: s) == nil else {
                throw ValidationError("--chunk-seconds must be a number of seconds > 0 and ≤ 3600, like 10 or 2.5")
            }
        }
        if let encoderThreads, !(1...64).contains(encoderThreads) { throw ValidationError("--encoder-threads must be 1…64") }
        if let priority, !JobPriority.range.contains(priority) { throw ValidationError("--priority must be -1000…1000") }
    }

    func run() async throws {
        try await reportingErrorsAsync {
            try requireReadableFile(composition, what: "the composition")
            if let output { try requireWritableOutput(output) }
            // Before reading or parsing it: one SUBMIT carries at most 64 MiB.
            var info = stat()
            if stat(composition, &info) == 0 { try SubmissionSize.checkComposition(composition, bytes: Int64(info.st_size)) }
            let data = try Data(contentsOf: URL(fileURLWithPath: composition))
            guard let text = String(data: data, encoding: .utf8) else { throw UserError("the composition \(composition) is not UTF-8 text") }
            // With -o, the container follows its extension when the composition names none.
            let export = (try? Composition.parse(Array(data)))?.export ?? ExportOptions()
            let fileType = try output.map {
                try OutputContainer.fileType(forOutput: $0, export: export).mapError { UserError($0.message) }.get()
            }
            // The same validation the coordinator will run, but here every problem is listed at once.
            _ = try CompositionLoader.load(path: composition, outputFileType: fileType)
            let parsed = try Composition.parse(Array(data))
            let directory = URL(fileURLWithPath: composition).deletingLastPathComponent().path
            let manifest = try AssetManifest(composition: parsed, directory: directory)
            let settings = JobSettings(chunkSeconds: chunkSeconds.flatMap(Rational.init(parsing:)), encoderThreads: encoderThreads,
                                       name: name ?? URL(fileURLWithPath: composition).lastPathComponent, fileType: fileType,
                                       priority: priority, noCache: noCache ? true : nil)

            let client = try await OperatorClient.connect(connection)
            let job = try await Self.submitAndUpload(SubmitRequest(composition: text, assets: manifest.entries, settings: settings),
                                                     manifest: manifest, client: client, quiet: quiet)
            // Unbuffered, at once: a script capturing the id must not wait for --wait to finish.
            FileHandle.standardOutput.write(Data("\(job)\n".utf8))
            guard wait else { await client.close(); return }
            // From here the job lives on the farm whatever happens to this process: waiting and
            // downloading ride out coordinator and database restarts (RetryPolicy.window).
            let following = ReconnectingClient(client, options: connection)
            following.giveUpHint = "job \(job) goes on without us: follow it with `reel status \(job)`"
                + (output.map { " and download it with `reel fetch \(job) -o \($0)`" } ?? "")
            let final = try await JobWaiter(client: following, job: job, quiet: quiet).waitUntilFinished()
            switch final.state {
            case "done":
                if let output {
                    try await OutputDownload.run(job: job, to: output, via: following, quiet: quiet)
                    if !quiet {
                        Terminal.error("\(output): \(ClientFormatting.bytes(final.outputBytes ?? 0)), job \(job) done, "
                                       + ClientFormatting.reuse(final.tasks))
                    }
                } else if !quiet {
                    Terminal.error("job \(job) done, " + ClientFormatting.reuse(final.tasks))
                }
                await following.close()
            case "cancelled":
                await following.close()
                throw UserError("job \(job) was cancelled")
            default:
                await following.close()
                throw UserError("job \(job) failed: \(final.error ?? "no reason given (see `reel status \(job)`)")")
            }
        }
    }

    /// `SUBMIT`, then `PUT` every missing hash in ranges; returns the job id.
    /// - Parameter submitted: told the job id as soon as the coordinator has given it, before
    ///   the uploads (so an interrupted `reel render` can cancel a job still waiting for them).
    static func submitAndUpload(_ request: SubmitRequest, manifest: AssetManifest, client: OperatorClient, quiet: Bool,
                                submitted: (Int64) -> Void = { _ in }) async throws -> Int64 {
        let (job, missing) = try await client.submit(request)
        submitted(job)
        let progress = TransferProgress(label: "upload \(missing.count) asset(s)", total: manifest.bytes(of: missing), quiet: quiet)
        var uploaded: Int64 = 0
        for hash in missing {
            guard let path = manifest.files[hash], let entry = manifest.entries.values.first(where: { $0.sha256 == hash }) else {
                throw UserError("the coordinator asked for an asset this submission does not contain (\(hash)); are client and coordinator the same Reel version?")
            }
            let before = uploaded
            try await client.upload(sha256: hash, path: path, size: entry.size) { progress.update(before + $0) }
            uploaded += entry.size
        }
        return job
    }
}
