/// Checks a parsed composition against the probed assets (docs/composition.md, "Validation") and, when it
/// is valid, resolves every default into a `RenderPlan`.
///
/// All problems are collected, one per broken rule and place, each with the JSON path of the
/// offending value, so `reel validate` lists everything in one run. Pure: the caller probes.
public enum CompositionValidator {
    /// Validates `composition`; `assets` holds the probe result of each asset id (an id
    /// missing from it is reported as not probed).
    public static func validate(_ composition: Composition, assets: [String: AssetResolution]) -> Result<RenderPlan, CompositionError> {
        let run = ValidationRun(composition: composition, resolutions: assets)
        let plan = run.buildPlan()
        if let plan, run.problems.isEmpty { return .success(plan) }
        return .failure(CompositionError(problems: run.problems.isEmpty
            ? [Problem(path: "", message: "composition could not be planned")] : run.problems))
    }

    /// The problems that need no asset knowledge to find: times outside `TimeDomain`. A
    /// coordinator checks them when a job is submitted, before any asset is uploaded.
    public static func timeProblems(_ composition: Composition) -> [Problem] {
        let run = ValidationRun(composition: composition, resolutions: [:])
        _ = run.checkWrittenTimes()
        return run.problems
    }
}

/// One validation pass: the composition, the probe results, and the problems found so far.
/// Each `check…` method validates one area and returns its resolved part of the plan (or
/// nil when it cannot). Used from one thread, for one call.
final class ValidationRun {
    let composition: Composition
    let resolutions: [String: AssetResolution]
    private(set) var problems: [Problem] = []
    /// Assets that probed fine, by id.
    var described: [String: PlannedAsset] = [:]
    /// The common denominator of every time seen so far (`TimeDomain`).
    var timescale = TimeDomain.Timescale()

    init(composition: Composition, resolutions: [String: AssetResolution]) {
        self.composition = composition
        self.resolutions = resolutions
    }

    func report(_ path: String, _ message: String) {
        problems.append(Problem(path: path, message: message))
    }

    func buildPlan() -> RenderPlan? {
        if composition.formatVersion != 1 {
            report("formatVersion", "must be 1 (this Reel reads format version 1), not \(composition.formatVersion)")
        }
        checkAssets()
        // Times outside the exact domain stop validation here: every later check adds and
        // compares them, and the answers would no longer be exact.
        guard checkWrittenTimes() else { return nil }
        includeDefaultFrameDuration()
        let tracks = checkTracks()
        let duration = tracks.duration
        if !composition.tracks.contains(where: { !$0.segments.isEmpty }) {
            report("tracks", "the composition is empty: no segment has a duration")
        }
        let audioTracks = checkAudioMix(tracks: tracks)
        let video = checkVideoComposition(tracks: tracks, duration: duration)
        let colour = checkOutputColour()
        let subtitleTracks = checkSubtitleTracks(tracks.subtitle, duration: duration)
        let captions = checkCaptions(duration: duration, renderSize: video?.renderSize)
        let export = checkExport()
        let audioOutputs = checkAudioOutputs(export, tracks: tracks)
        if export.fileType?.isAudioOnly == true, audioTracks.isEmpty, composition.tracks.contains(where: { !$0.segments.isEmpty }) {
            report("tracks", "an \(export.fileType!.displayName) output holds sound only, but no track is an audio track: add one, "
                   + "or write a video container (mp4, mov)")
        }
        if export.fileType == .png { checkPNGSequence(export, audioTracks: audioTracks.count, subtitleTracks: subtitleTracks.count) }
        guard problems.isEmpty, let video, duration > .zero else { return nil }

        let frameCount = duration.ceilDiv(video.frameDuration)
        guard frameCount <= RenderLimits.maximumFrames else {
            report(tracks.durationPath ?? "tracks",
                   "the composition lasts \(TimeFormatting.seconds(duration)), \(frameCount) frames of \(TimeFormatting.seconds(video.frameDuration)); "
                   + "a job may have at most \(RenderLimits.maximumFrames) frames (24 hours at 60 fps): shorten it or split it into several jobs")
            return nil
        }
        var settings = ExportSettings(resolving: export, frameDuration: video.frameDuration, hasPicture: composition.hasPicture,
                                      transparentBackground: video.instructions.contains { $0.backgroundColor.a < 255 })
        if let audioOutputs {
            checkAudioOutputs(audioOutputs, fileType: settings.fileType)
            guard problems.isEmpty else { return nil }
            settings.audioOutputs = audioOutputs
        }
        if settings.fileType == .hls {
            let ladder = RenditionLadder(resolving: export, renderSize: video.renderSize, frameDuration: video.frameDuration, base: settings.video)
            guard checkLadder(ladder, export: export, renderSize: video.renderSize, frameDuration: video.frameDuration,
                              gopFrames: settings.video.gopFrames) else { return nil }
            settings.ladder = ladder
        }
        var used = Set(tracks.video.flatMap { $0.segments.map(\.asset) } + audioTracks.flatMap { $0.segments.map(\.asset) })
        for overlay in video.overlays { if case .image(let id) = overlay.kind { used.insert(id) } }
        for filter in video.filters + video.instructions.flatMap({ $0.layers.flatMap(\.filters) }) {
            if let id = filter.asset { used.insert(id) }
        }
        return RenderPlan(
            renderSize: video.renderSize,
            // A ladder's renditions set their own sizes: frames are drawn at the render size.
            outputSize: settings.ladder != nil ? video.renderSize : RenderDefaults.outputSize(renderSize: video.renderSize, preset: export.preset),
            frameDuration: video.frameDuration,
            duration: duration,
            frameCount: Int(frameCount),
            assets: described.filter { used.contains($0.key) },
            videoTracks: tracks.video,
            audioTracks: audioTracks,
            instructions: video.instructions,
            overlays: video.overlays,
            export: settings,
            filters: video.filters,
            subtitleTracks: subtitleTracks.isEmpty ? nil : subtitleTracks,
            captions: captions.isEmpty ? nil : captions,
            colour: colour)
    }

    func checkAssets() {
        for id in composition.assets.keys.sorted() {
            let path = "assets.\(id).url"
            switch resolutions[id] {
            case nil: report(path, "was not probed")
            case .unavailable(let reason): report(path, reason)
            case .malformed(let reasons): reasons.forEach { report(path, $0) }
            case .described(_, let description) where description.usabilityProblem != nil:
                report(path, description.usabilityProblem!)
            case .described(let url, let description): described[id] = PlannedAsset(url: url, description: description)
            }
        }
    }

    // MARK: - Shared checks

    /// Reports a start < 0 or a duration ≤ 0; returns whether the range is usable.
    @discardableResult
    func checkRange(_ range: TimeRange, at path: String) -> Bool {
        var ok = true
        if range.start < .zero { report("\(path).start", "must be ≥ 0"); ok = false }
        if range.duration <= .zero { report("\(path).duration", "must be > 0"); ok = false }
        return ok
    }

    /// Checks each ramp's range and values, and that no two ramps overlap; returns the usable
    /// ramps sorted by start. `path` is the ramp array's path, `name` its key (for messages).
    func checkRamps<V>(_ ramps: [RampSpec<V>], at path: String, name: String,
                       values check: (V, String) -> Void = { _, _ in }) -> [Ramp<V>] {
        var usable: [(index: Int, ramp: Ramp<V>)] = []
        for (i, spec) in ramps.enumerated() {
            let rampPath = "\(path)[\(i)]"
            check(spec.from, "\(rampPath).from")
            check(spec.to, "\(rampPath).to")
            if checkRange(spec.timeRange, at: "\(rampPath).timeRange") {
                usable.append((i, Ramp(from: spec.from, to: spec.to, start: spec.timeRange.start, duration: spec.timeRange.duration)))
            }
        }
        usable.sort { ($0.ramp.start, $0.index) < ($1.ramp.start, $1.index) }
        var latest: (index: Int, ramp: Ramp<V>)?
        for entry in usable {
            if let previous = latest, entry.ramp.start < previous.ramp.end {
                report("\(path)[\(entry.index)].timeRange",
                       "overlaps \(name)[\(previous.index)] from \(TimeFormatting.seconds(entry.ramp.start)) to \(TimeFormatting.seconds(min(entry.ramp.end, previous.ramp.end))); ramps of one property must not overlap")
            }
            if latest == nil || entry.ramp.end > latest!.ramp.end { latest = entry }
        }
        return usable.map(\.ramp)
    }

    /// Reports a value outside 0…1.
    func checkUnitInterval(_ value: Double, at path: String) {
        if !(0...1).contains(value) { report(path, "must be between 0 and 1") }
    }
}

extension Composition {
    /// Whether any video track has a media segment (an unusable one included).
    var hasVideoSegments: Bool {
        tracks.contains { track in
            track.mediaType == .video && track.segments.contains { if case .media = $0 { true } else { false } }
        }
    }
}
