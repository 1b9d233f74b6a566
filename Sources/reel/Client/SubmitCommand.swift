import ArgumentParser
import Foundation
import ReelCore
import ReelMedia
import ReelProtocol
import ReelScheduling

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
            the job's error if the job failed or was cancelled. A source the coordinator lost before the \
            job started is uploaded again (up to 3 times, then it exits 1 with the coordinator's error). While waiting and downloading it rides out \
            a coordinator or database restart: it says once that it is reconnecting, retries for up to \
            5 minutes and resumes the download at the byte it reached.
            """)

    @Argument(help: "The composition JSON file, or an editor's timeline (.otio, .edl); with --batch, the template.") var composition: String
    @OptionGroup var connection: ConnectionOptions
    @OptionGroup(title: "Timelines") var timeline: TimelineOptions
    @Flag(help: "Wait for the job to finish, showing its progress.") var wait = false
    @Option(name: .shortAndLong, help: "With --wait: where to write the finished output.") var output: String?
    @Option(help: "Target chunk length in seconds, a decimal or N/D (default: the farm's, 10).") var chunkSeconds: String?
    @Option(help: "x264 threads per chunk, fixed for the job (default: the farm's, 4).") var encoderThreads: Int?
    @Option(help: "A name for `reel status` (default: the composition's file name).") var name: String?
    @Option(help: "Priority, -1000…1000: higher runs first (default 0). Change it later with `reel priority JOB N`.")
    var priority: Int?
    @Option(help: ArgumentHelp("A budget: money like 12.50 (the agents' prices' currency) or agent-hours like 3.5h. From 90 % spent the job gets no new chunks, from 100 % its running chunks go back to the queue; `reel budget JOB AMOUNT` raises it (docs/farm.md, \"Budgets\").",
                               valueName: "amount")) var budget: String?
    @Flag(help: "Render every chunk anew, even those an earlier job already rendered identically (no reuse).") var noCache = false
    @Flag(help: "No progress output.") var quiet = false
    @Option(help: ArgumentHelp("When the job ends, POST a signed JSON document to this http(s) URL (docs/notifications.md).",
                               valueName: "url")) var notify: String?
    @Option(help: ArgumentHelp("Submit one job per row of this CSV or JSON Lines file, as one batch: COMPOSITION is then a template and -o a pattern like 'out/{{id}}.mp4' (docs/templates.md, \"Batches on a farm\").",
                               valueName: "rows")) var batch: String?
    @Option(help: "With --batch: the folder of manifest.json and manifest.csv (default: the outputs' folder, -o up to its first placeholder).")
    var manifest: String?
    @Flag(help: "With --batch: submit the valid rows and record the invalid ones in the manifest, instead of submitting nothing.")
    var skipInvalid = false
    @Flag(help: "With --batch: a row whose media cannot be read stops the batch before anything is submitted; with --wait, the first row that fails cancels the others.")
    var failFast = false

    func validate() throws {
        if batch != nil {
            if output == nil { throw ValidationError("--batch needs -o with each row's output, like -o 'out/{{id}}.mp4'") }
            if name != nil { throw ValidationError("--name does not go with --batch: each row's job is named after the template and its row") }
        } else {
            if output != nil && !wait { throw ValidationError("-o needs --wait (or fetch later with `reel fetch JOB -o OUT`)") }
            if manifest != nil || skipInvalid || failFast { throw ValidationError("--manifest, --skip-invalid and --fail-fast go with --batch") }
        }
        if let chunkSeconds {
            guard let s = Rational(parsing: chunkSeconds), RenderLimits.problem(withChunkSeconds: s) == nil else {
                throw ValidationError("--chunk-seconds must be a number of seconds > 0 and ≤ 3600, like 10 or 2.5")
            }
        }
        if let encoderThreads, !(1...64).contains(encoderThreads) { throw ValidationError("--encoder-threads must be 1…64") }
        if let priority, !JobPriority.range.contains(priority) { throw ValidationError("--priority must be -1000…1000") }
        if let budget, JobBudget(parsing: budget) == nil { throw ValidationError("--budget '\(budget)' is not a budget: give \(JobBudget.syntax)") }
        if let notify, let problem = JobSettings.problem(withNotifyURL: notify) { throw ValidationError("--notify \(notify): \(problem)") }
    }

    func run() async throws {
        if let batch { return try await runBatch(rows: batch, pattern: output!) }
        try await reportingErrorsAsync {
            try requireReadableFile(composition, what: "the composition")
            if let output { try HLSOutput.makeFolder(for: output); try requireWritableOutput(output) }
            // Before reading or parsing it: one SUBMIT carries at most 64 MiB.
            var info = stat()
            if stat(composition, &info) == 0 { try SubmissionSize.checkComposition(composition, bytes: Int64(info.st_size)) }
            let input = try CompositionInput.load(composition, timeline: timeline)
            // What is sent is the imported composition, or the template with its defaults in place.
            if input.imported != nil || input.template != nil {
                try SubmissionSize.checkComposition(composition, bytes: Int64(input.text.utf8.count))
            }
            let text = input.text
            let parsed = input.composition
            // With -o, the container follows its extension when the composition names none.
            let fileType = try output.map {
                try OutputContainer.fileType(forOutput: $0, export: parsed.export).mapError { UserError($0.message) }.get()
            }
            // The same validation the coordinator will run, but here every problem is listed at once.
            let plan = try input.plan(outputFileType: fileType)
            let manifest = try AssetManifest(composition: parsed, directory: input.directory)
            let settings = JobSettings(chunkSeconds: chunkSeconds.flatMap(Rational.init(parsing:)), encoderThreads: encoderThreads,
                                       name: name ?? input.name, fileType: fileType,
                                       priority: priority, noCache: noCache ? true : nil, notify: notify, budget: budget)

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
            let final = try await JobWaiter(client: following, job: job, quiet: quiet, reuploadAssets: {
                try await following.perform { try await Self.upload(manifest, hashes: manifest.files.keys.sorted(), client: $0, quiet: quiet) }
            }).waitUntilFinished()
            switch final.state {
            case "done":
                // Even with --quiet: the file is delivered, but not as asked for.
                if let warning = ClientFormatting.loudnessWarning(final) { Terminal.error(warning) }
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

    /// `--batch`: every row checked as `reel batch` checks it (nothing is submitted while a row
    /// is invalid, unless --skip-invalid), then one job per row in one batch (`FarmBatchRun`);
    /// the manifest is written as `reel batch` writes it. Prints the batch as `bID`.
    private func runBatch(rows: String, pattern: String) async throws {
        try await reportingErrorsAsync {
            LibAVLogging.quiet()
            let input = try BatchInput.load(template: composition, rows: rows, output: pattern)
            let plan = BatchPlan.make(template: input.template, rows: input.rows, output: input.pattern,
                                      rowsDirectory: input.rowsDirectory, currentDirectory: FileManager.default.currentDirectoryPath)
            try BatchSetup.report(plan, template: composition, rows: rows, output: pattern, skipInvalid: skipInvalid, check: false, action: .submit)
            let (files, queue) = try await BatchSetup.manifest(plan, input: input, template: composition, rows: rows, output: pattern,
                                                               directory: manifest ?? input.pattern.fixedDirectory)
            let settings = JobSettings(chunkSeconds: chunkSeconds.flatMap(Rational.init(parsing:)), encoderThreads: encoderThreads,
                                       priority: priority, noCache: noCache ? true : nil, notify: notify, budget: budget)
            let run = FarmBatchRun(templateName: input.templateName, templateDirectory: input.templateDirectory, items: queue,
                                   settings: settings, connection: connection, wait: wait, failFast: failFast, quiet: quiet)
            let (_, stopped) = try await run.run(files)
            try await files.finish()
            if wait {
                try await BatchSetup.finish(files, stopped: stopped)
            } else if await files.manifest.count(.failed) + files.manifest.count(.invalid) > 0 {
                // Submitted what could be; the rows that could not be are in the manifest.
                throw ExitCode(1)
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
        try await upload(manifest, hashes: missing, client: client, quiet: quiet)
        return job
    }

    /// `PUT`s the assets `hashes` of `manifest` in ranges (one the coordinator holds already
    /// costs one request).
    static func upload(_ manifest: AssetManifest, hashes: [String], client: OperatorClient, quiet: Bool) async throws {
        let progress = TransferProgress(label: "upload \(hashes.count) asset(s)", total: manifest.bytes(of: hashes), quiet: quiet)
        var uploaded: Int64 = 0
        for hash in hashes {
            guard let path = manifest.files[hash], let entry = manifest.entries.values.first(where: { $0.sha256 == hash }) else {
                throw UserError("the coordinator asked for an asset this submission does not contain (\(hash)); are client and coordinator the same Reel version?")
            }
            let before = uploaded
            try await client.upload(sha256: hash, path: path, size: entry.size) { progress.update(before + $0) }
            uploaded += entry.size
        }
    }
}
