import ArgumentParser
import Foundation
import ReelCore
import ReelMedia

struct RenderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a composition to an MP4/MOV file, all in one on this machine.",
        discussion: """
            Validates the composition (every problem is listed), then runs the farm on this machine: a \
            PostgreSQL (--database / DATABASE_URL, or a private cluster under your data directory, started \
            or reused), a coordinator on a loopback port and --agents agents. The job is planned as video \
            chunks of whole GOPs (--chunk-seconds) plus one audio task, rendered in parallel and joined \
            without re-encoding. The output appears only when complete. --in-process renders the same chunks \
            with worker threads and no database.
            """)

    @Argument(help: "The composition JSON file (a template too: give its variables with --set), or an editor's timeline (.otio, .edl).")
    var composition: String
    @Option(name: .shortAndLong, help: "The output file (.mp4 or .mov, as the composition's export.fileType says; .mov for ProRes; .webm for VP9 or AV1; .m4a or .wav for sound only).") var output: String
    @OptionGroup(title: "Timelines") var timeline: TimelineOptions
    @OptionGroup(title: "Templates") var template: TemplateOptions
    @Option(help: "Local agents (or worker threads with --in-process). Must be ≥ 1.") var agents: Int = 2
    @Option(help: "Target chunk length in seconds, a decimal or N/D (chunks are whole GOPs, at least one). Must be > 0.")
    var chunkSeconds: String = "10"
    @Option(help: "Encoder threads (x264, x265 or ProRes), fixed per job so every render of a composition gives the same bytes.") var encoderThreads: Int = 4
    @Option(help: "PostgreSQL connection string or URL (default: $DATABASE_URL, else a private cluster).") var database: String?
    @Flag(help: "Render with worker threads in this process, without a database or coordinator.") var inProcess = false
    @Flag(help: "With --in-process: keep the chunk files beside the output (in a .chunks directory).") var keepChunks = false
    @Flag(help: "Render every chunk anew, even those an earlier render already made identically (no reuse; farm mode only).")
    var noCache = false
    @Flag(help: "No progress bar.") var quiet = false

    func validate() throws {
        guard agents >= 1 else { throw ValidationError("--agents must be at least 1") }
        guard let s = Rational(parsing: chunkSeconds), RenderLimits.problem(withChunkSeconds: s) == nil else {
            throw ValidationError("--chunk-seconds must be a number of seconds > 0 and ≤ 3600, like 10 or 2.5")
        }
        guard (1...64).contains(encoderThreads) else { throw ValidationError("--encoder-threads must be 1…64") }
    }

    func run() async throws {
        try await reportingErrorsAsync {
            Interruption.shared.install()
            let input = try CompositionInput.load(composition, timeline: timeline, variables: template.set)
            let seconds = Rational(parsing: chunkSeconds)!
            // The path first, as submit and fetch check it: `-o renders` (a folder that exists)
            // is told it is a folder, not that its name lacks an extension. An HLS output and a
            // PNG sequence are folders: -o DIR/master.m3u8 or -o DIR/frame-%05d.png makes DIR
            // when it is missing (any other name: nothing).
            try HLSOutput.makeFolder(for: output)
            try requireWritableOutput(output)
            let fileType = try OutputContainer.fileType(forOutput: output, export: input.composition.export).mapError { UserError($0.message) }.get()
            if inProcess {
                let plan = try input.plan(outputFileType: fileType)
                let options = LocalRender.Options(workers: agents, chunkSeconds: seconds, encoderThreads: encoderThreads, keepChunks: keepChunks,
                                                  isCancelled: { Interruption.shared.isInterrupted })
                let bar = quiet ? nil : ProgressBar(label: "render \(LocalRender.chunks(for: plan, options: options).count) chunks")
                var loudness: [LoudnessReport] = []
                try Interruption.shared.renderingLocally(to: output) {
                    loudness = try LocalRender.render(plan, to: output, options: options) { bar?.update($0) }.loudness
                }
                print("\(output): \(plan.outputSummary)")
                // Even with --quiet: the file is delivered, but not as asked for (`LoudnessMiss`).
                if let warning = LoudnessReport.warning(of: loudness, outputs: plan.export.audioOutputs) { Terminal.error("\(output): \(warning)") }
                return
            }
            let environmentDatabase = ProcessInfo.processInfo.environment["DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
            try await AllInOneRender(input: input, output: output, fileType: fileType, agents: agents, chunkSeconds: seconds,
                                     encoderThreads: encoderThreads, noCache: noCache, database: database ?? environmentDatabase,
                                     quiet: quiet).run()
        }
    }
}

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a composition (or an editor's timeline) without rendering it.",
        discussion: """
            Prints one line per problem, named by its JSON path (in a timeline: by the item's place and name), \
            and exits 1; or a summary and exits 0. A timeline's markers and disabled items are listed as warnings. \
            A template is checked with its defaults and the --set values (docs/templates.md).
            """)

    @Argument(help: "The composition JSON file (a template too: give its variables with --set), or an editor's timeline (.otio, .edl).")
    var composition: String
    @OptionGroup(title: "Timelines") var timeline: TimelineOptions
    @OptionGroup(title: "Templates") var template: TemplateOptions

    func run() throws {
        try reportingErrors {
            LibAVLogging.quiet() // problems are reported per asset, in Reel's words
            let plan = try CompositionInput.load(composition, timeline: timeline, variables: template.set).plan()
            guard plan.hasPicture else {
                print("ok: sound only (\(plan.export.fileType.displayName) by default), \(TimeFormatting.seconds(plan.duration)), "
                      + "\(plan.audioTracks.count) audio tracks")
                return
            }
            print("ok: \(plan.outputSize), \(plan.frameCount) frames of \(TimeFormatting.seconds(plan.frameDuration)) "
                  + "= \(TimeFormatting.seconds(plan.duration)), "
                  + "\(plan.videoTracks.count) video / \(plan.audioTracks.count) audio tracks, \(plan.overlays.count) overlays"
                  + (plan.subtitleTracks.map { ", \($0.count) subtitle tracks" } ?? ""))
        }
    }
}

extension RenderPlan {
    /// What a finished local render prints after the output's name.
    var outputSummary: String {
        let seconds = String(format: "%.3f", duration.seconds)
        guard hasPicture else { return "sound only (\(export.fileType.displayName), \(export.audio.codec)), \(seconds) s" }
        return "\(outputSize) \(frameCount) frames, \(seconds) s"
    }
}
