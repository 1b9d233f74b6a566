import ArgumentParser
import Foundation
import ReelCore
import ReelMedia

/// Options shared by the commands that build a composition for the user.
struct RecipeOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "The output file (.mp4 or .mov; .m4a or .wav for sound only).") var output: String?
    @Option(help: "Export preset: highest, medium or low.") var preset: String = "medium"
    @Option(help: "Render size as WIDTHxHEIGHT (even numbers). Default: the largest width and height of the inputs.")
    var size: String?
    @Flag(help: "Print the composition JSON instead of rendering it (a starting point for your own edits).")
    var printComposition = false
    @Flag(help: "No progress bar.") var quiet = false

    func validate() throws {
        guard ["highest", "medium", "low"].contains(preset) else { throw ValidationError("--preset must be highest, medium or low") }
        if let size {
            // Checked here, in the option's own words: the composition's JSON path would name a
            // key the user never wrote.
            guard let (w, h) = parsedSize(size) else { throw ValidationError("--size must look like 1280x720") }
            let limit = RenderDefaults.maximumDimension
            guard w > 0, h > 0, w % 2 == 0, h % 2 == 0, w <= limit, h <= limit else {
                throw ValidationError("--size \(size): width and height must be even numbers from 2 to \(limit) (H.264 4:2:0 needs even sizes), e.g. 640x360")
            }
        }
        if output == nil && !printComposition { throw ValidationError("give the output file with -o OUT.mp4 (or use --print-composition)") }
    }

    func parsedSize(_ s: String) -> (Int, Int)? {
        let parts = s.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else { return nil }
        return (w, h)
    }

    /// Prints or renders the composition built by a recipe. `soundOnly`: it has no picture (audio
    /// files joined), so `--size` means nothing and no output name means M4A.
    func finish(_ json: [String: Any], soundOnly: Bool = false) throws {
        var root = json
        // The path before its extension: `-o renders` (a folder) is told it is a folder.
        if let output, !printComposition { try requireWritableOutput(output) }
        var export: [String: Any] = ["preset": preset, "optimizeForNetworkUse": true]
        // Printed without -o, the composition leaves the container to the name it is rendered to.
        if output != nil { export["fileType"] = try fileType().rawValue }
        if root["export"] != nil { export = root["export"] as! [String: Any] }
        root["export"] = export
        if let size, let (w, h) = parsedSize(size), !soundOnly {
            var video = root["videoComposition"] as? [String: Any] ?? [:]
            video["renderSize"] = ["width": w, "height": h]
            root["videoComposition"] = video
        }
        let data = try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        if printComposition {
            print(String(decoding: data, as: UTF8.self))
            return
        }
        guard let output else { return }
        Interruption.shared.install()
        let composition = try Composition.parse(Array(data))
        let plan = try CompositionLoader.plan(composition, directory: FileManager.default.currentDirectoryPath)
        let bar = quiet ? nil : ProgressBar(label: "render")
        try Interruption.shared.renderingLocally(to: output) {
            try LocalRender.render(plan, to: output, options: LocalRender.Options(isCancelled: { Interruption.shared.isInterrupted })) { bar?.update($0) }
        }
        print("\(output): \(plan.outputSummary)")
    }

    /// The container `-o`'s extension names.
    func fileType() throws -> FileType {
        guard let output else { return .mp4 }
        return try OutputContainer.fileType(forOutput: output, written: nil).mapError { UserError($0.message) }.get()
    }
}

/// Probes an input and turns a failure into a message naming the file.
func describeInput(_ path: String) throws -> AssetDescription {
    try requireReadableFile(path, what: "the input")
    do { return try MediaProbe.describe(path: path) } catch {
        throw UserError("\(path) is not a media file Reel can read (\(error))")
    }
}

func absolute(_ path: String) -> String {
    URL(fileURLWithPath: path, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath)).standardizedFileURL.path
}

/// Adds a music track trimmed to `total` seconds, or fails if the file has no audio.
func musicTrack(_ path: String, id: Int, total: Rational, assets: inout [String: Any]) throws -> [String: Any] {
    let music = try describeInput(path)
    guard music.audio != nil, let musicDuration = music.duration else { throw UserError("--audio \(path) has no audio track") }
    assets["music"] = ["url": absolute(path)]
    let length = min(total, musicDuration)
    return ["id": id, "mediaType": "audio", "segments": [
        ["asset": "music", "at": 0, "sourceRange": ["start": 0, "duration": length.description]],
    ]]
}

struct ConcatCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "concat",
        abstract: "Join clips one after another (any sizes, frame rates, orientations), optionally replacing the sound with music; or join audio files.",
        discussion: """
            Builds the most common composition — clips in sequence on one video track, each shown upright, \
            fitted and centred in the render size; their own sound in sequence, or --audio MUSIC trimmed to \
            the video's length — and renders it. With --transition fade, wipe or slide, consecutive clips overlap \
            by --transition-seconds on two alternating tracks, with the opacity, crop or transform ramps the \
            transition needs and their sound cross-faded. Audio files (no video) are joined into sound only, with \
            no gap: -o out.m4a (AAC) or out.wav (PCM). A video output name ending in .m4a or .wav keeps only the \
            clips' sound. --print-composition shows the JSON it builds.
            """)

    @Argument(help: "The clips (or audio files), in order.") var clips: [String]
    @Option(help: "Replace the clips' sound with this audio file (trimmed to the video's length).") var audio: String?
    @Option(help: """
        Overlap consecutive clips with a transition: fade (a cross-dissolve), wipe (the next clip is revealed \
        from the left edge to the right) or slide (the next clip pushes the previous one out to the left). \
        The sound cross-fades too.
        """)
    var transition: ConcatTransition?
    @Option(help: "Seconds each transition lasts (a decimal or a fraction; default 1). Each clip must last at least this long on each side that has one.")
    var transitionSeconds: String?
    @OptionGroup var options: RecipeOptions

    func validate() throws {
        guard !clips.isEmpty else { throw ValidationError("give at least one clip") }
        if transitionSeconds != nil && transition == nil { throw ValidationError("--transition-seconds needs --transition fade, wipe or slide") }
    }

    func run() throws {
        if let transition {
            try reportingErrors { try runWithTransitions(transition) }
            return
        }
        try reportingErrors {
            var assets: [String: Any] = [:]
            var videoSegments: [[String: Any]] = []
            var audioSegments: [[String: Any]] = []
            var at = Rational.zero
            let inputs = try clips.map { ($0, try describeInput($0)) }
            // Audio files only: sound in sequence, no picture.
            let soundOnly = inputs.allSatisfy { $0.1.kind == .audio }
            if soundOnly, audio != nil {
                throw UserError("--audio replaces clips' sound; to join audio files, list every one of them as an input")
            }
            for (i, (clip, d)) in inputs.enumerated() {
                guard soundOnly || d.video != nil, let duration = d.duration else {
                    throw UserError(d.kind == .audio ? "\(clip) has no video track: concat joins either clips or audio files, not both"
                                                     : "\(clip) has no video track")
                }
                let id = "clip\(i + 1)"
                assets[id] = ["url": absolute(clip)]
                videoSegments.append(["asset": id, "at": at.description])
                if d.audio != nil { audioSegments.append(["asset": id, "at": at.description]) }
                at += duration
            }
            if soundOnly {
                try options.finish(["formatVersion": 1, "assets": assets, "tracks": [["id": 1, "mediaType": "audio", "segments": audioSegments]]],
                                   soundOnly: true)
                return
            }
            var tracks: [[String: Any]] = [["id": 1, "mediaType": "video", "segments": videoSegments]]
            if let audio {
                tracks.append(try musicTrack(audio, id: 2, total: at, assets: &assets))
            } else if !audioSegments.isEmpty {
                tracks.append(["id": 2, "mediaType": "audio", "segments": audioSegments])
            }
            try options.finish(["formatVersion": 1, "assets": assets, "tracks": tracks])
        }
    }
}

extension ConcatCommand {
    /// Clips overlapping by the transition on two alternating tracks (see `ConcatTransitionPlan`).
    func runWithTransitions(_ transition: ConcatTransition) throws {
        let seconds = try transitionSeconds.map { try parseTime($0, option: "--transition-seconds") } ?? .one
        guard seconds > .zero else { throw UserError("--transition-seconds must be > 0") }
        var assets: [String: Any] = [:]
        var clips: [ConcatTransitionPlan.Clip] = []
        for (i, clip) in self.clips.enumerated() {
            let d = try describeInput(clip)
            guard let video = d.video, let duration = d.duration else { throw UserError("\(clip) has no video track") }
            let id = "clip\(i + 1)"
            assets[id] = ["url": absolute(clip)]
            clips.append(.init(id: id, video: video, duration: duration, hasAudio: d.audio != nil))
        }
        let renderSize = options.size.flatMap(options.parsedSize).map { PixelSize(width: $0.0, height: $0.1) }
            ?? RenderDefaults.renderSize(displaying: clips.map(\.video))!
        let plan = ConcatTransitionPlan(clips: clips, transition: transition, seconds: seconds, renderSize: renderSize)
        if let short = plan.tooShort() {
            throw UserError("\(self.clips[short.index]) lasts \(TimeFormatting.seconds(clips[short.index].duration)), shorter than its transitions "
                            + "(\(TimeFormatting.seconds(short.needs))): give a smaller --transition-seconds")
        }
        var tracks = plan.videoTracks()
        var root: [String: Any] = ["formatVersion": 1, "assets": assets]
        if let audio {
            tracks.append(try musicTrack(audio, id: 3, total: plan.end, assets: &assets))
            root["assets"] = assets
        } else {
            let sound = plan.audio()
            tracks += sound.tracks
            if !sound.mix.isEmpty { root["audioMix"] = sound.mix }
        }
        root["tracks"] = tracks
        root["videoComposition"] = ["renderSize": ["width": renderSize.width, "height": renderSize.height], "instructions": plan.instructions()]
        try options.finish(root)
    }
}

struct SlideshowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slideshow",
        abstract: "Turn still images into a video, optionally with music.",
        discussion: "Each image is shown for --seconds, fitted and centred; --audio adds music trimmed to the slideshow's length.")

    @Argument(help: "The images (PNG, JPEG, …), in order.") var images: [String]
    @Option(help: "Seconds each image is shown (a decimal or a fraction). Must be > 0.") var seconds: String = "3"
    @Option(help: "Music to play under the slideshow (trimmed to its length).") var audio: String?
    @OptionGroup var options: RecipeOptions

    func validate() throws {
        guard !images.isEmpty else { throw ValidationError("give at least one image") }
    }

    func run() throws {
        try reportingErrors {
            let each = try parseTime(seconds, option: "--seconds")
            guard each > .zero else { throw UserError("--seconds must be > 0") }
            var assets: [String: Any] = [:]
            var segments: [[String: Any]] = []
            var at = Rational.zero
            for (i, image) in images.enumerated() {
                let d = try describeInput(image)
                guard d.kind == .still else { throw UserError("\(image) is not a still image") }
                let id = "image\(i + 1)"
                assets[id] = ["url": absolute(image)]
                segments.append(["asset": id, "at": at.description, "duration": each.description])
                at += each
            }
            var tracks: [[String: Any]] = [["id": 1, "mediaType": "video", "segments": segments]]
            if let audio { tracks.append(try musicTrack(audio, id: 2, total: at, assets: &assets)) }
            try options.finish(["formatVersion": 1, "assets": assets, "tracks": tracks])
        }
    }
}
