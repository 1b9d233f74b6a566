import Foundation
import ReelCore

/// The audio task of a plan with `export.audio.loudness`: the mix, normalised to the target
/// as one programme.
///
/// 1. **Measure** the whole mix (`LoudnessAnalysis`, libebur128: BS.1770-4 integrated loudness
///    with EBU R128 gating, loudness range, true peak).
/// 2. **Encode** the mix times one gain (target − measured), through a `TruePeakLimiter`
///    whose ceiling starts `ceilingMargin` below the target's true peak.
/// 3. **Check** the encoded audio as it will be delivered (decoded and measured), in the
///    export's codec: AAC, Opus or PCM (which changes nothing but the rounding to 16 bits, so
///    it meets the target at the first encoding). AAC and Opus change a programme a little: it drops the top octave at lower bit rates (K-weighting counts it,
///    so noisy material measures up to about half a LU quieter) and can put inter-sample peaks
///    above what went in. When the delivered loudness misses the target by more than
///    `loudnessTolerance`, the gain is corrected by the miss (scaled by
///    how much the last correction moved the loudness, when the limiter holds it back); when the delivered true peak is
///    above the target's, the ceiling is lowered by the excess (and 0.1 dB); and the mix is
///    encoded again, at most `maximumEncodings` times in all. The steps depend only on the
///    samples, so a render gives the same bytes every time.
/// 4. **Deliver** what the last encoding made, even when it still misses the target (a target
///    the material cannot reach, such as a loud level under a low true-peak ceiling): the file
///    is usable and another render would give the same bytes, so the job is not failed; the
///    report it carries says how far off it is, and the finaliser's loudness line carries a
///    `LoudnessMiss` warning with the measured and target figures (`reel status`, `reel events`).
///
/// Loudness is a property of the whole programme, never of a piece of it: this works because
/// the audio is one task that sees the whole mix. If audio is ever split into chunks, the
/// measurement must become a task of its own that runs before them, and the chunks must all
/// apply its gain (and carry the limiter's state across their joins).
///
/// The figures go into the result file's `comment` tag (`LoudnessTag`), so they travel with the
/// result wherever it is stored or reused, and the finaliser reports them.
enum NormalisedAudio {
    static let ceilingMargin = 0.5
    static let maximumEncodings = 4
    /// How far the delivered integrated loudness may miss the target before it is encoded again.
    static let loudnessTolerance = LoudnessTarget.integratedTolerance

    static func render(_ plan: RenderPlan, target: LoudnessTarget, to path: String, media: MediaSources) throws -> ChunkArtifact {
        let measuring = AudioMixer(plan: plan, media: media)
        precondition(measuring.hasAudio, "renderAudio on a plan without audio tracks")
        let before = try LoudnessAnalysis.measure(measuring)
        let container = plan.audioTaskContainer
        let encoded = AtomicFile.temporaryPath(for: path) + ".encoded.\(container)"
        defer { unlink(encoded) }

        var gain = LoudnessReport.gain(for: before, target: target)
        var ceiling = target.truePeak - ceilingMargin
        var after: LoudnessMeasurement
        var encodings = 0
        var previous: (gain: Double, loudness: Double)?
        while true {
            let mixer = AudioMixer(plan: plan, media: media)
            try encode(mixer, codec: plan.export.audio.audioCodec ?? .aac, bitRate: plan.export.audio.bitRate, container: container,
                       gain: gain, ceiling: ceiling, to: encoded)
            encodings += 1
            after = try LoudnessAnalysis.measure(path: encoded, sampleRate: mixer.sampleRate, channels: mixer.channels, duration: plan.duration)
            // The same test as the warning an output that still misses after the last encoding
            // is delivered with (`LoudnessMiss`, reported by the finaliser).
            guard let miss = LoudnessMiss(target: target, delivered: after), encodings < maximumEncodings else { break }
            if let over = miss.loudness, let loudness = after.integrated {
                let loudnessMiss = -over
                // dLoudness/dGain is 1 until the limiter works hard (then less): the secant of
                // the last two encodings, kept sensible, says how far to move.
                var slope = 1.0
                if let previous, abs(gain - previous.gain) > 0.01 {
                    slope = min(1.5, max(0.2, (loudness - previous.loudness) / (gain - previous.gain)))
                }
                previous = (gain, loudness)
                gain += loudnessMiss / slope
            }
            if let peakExcess = miss.peakExcess { ceiling -= peakExcess + 0.1 }
        }
        let report = LoudnessReport(target: target, before: before, gain: gain, ceiling: ceiling, after: after)
        let partial = AtomicFile.temporaryPath(for: path)
        defer { unlink(partial) }
        try remux(encoded, to: partial, fileType: container, tags: ["comment": LoudnessTag.text(report)])
        try AtomicFile.commit(partial, to: path)
        return try ChunkArtifact.measuring(kind: .audio, frames: FrameRange(start: 0, end: plan.frameCount), path: path)
    }

    /// One pass over the mix: × `gain` dB, limited to `ceiling` dBTP, encoded in `codec` into a
    /// `container` file (`RenderPlan.audioTaskContainer`: AAC in MP4, Opus in Ogg, PCM in WAV).
    static func encode(_ mixer: AudioMixer, codec: AudioCodec, bitRate: Int, container: String,
                       gain: Double, ceiling: Double, to path: String) throws {
        let encoder = try AudioEncoder(codec: codec, sampleRate: mixer.sampleRate, channels: mixer.channels, bitRate: bitRate)
        let writer = try MovieWriter(path: path, fileType: container, faststart: false, video: nil, audio: encoder)
        try process(mixer, gain: gain, ceiling: ceiling) { planes, count in
            for packet in try encoder.encode(planar: planes, count: count) { try writer.write(audio: packet) }
        }
        for packet in try encoder.finish() { try writer.write(audio: packet) }
        try writer.finish()
    }

    /// The whole mix × `gain` dB through a `TruePeakLimiter` at `ceiling` dBTP, handed to `output`
    /// in blocks, in order, sample-aligned with the mix (the limiter's latency is taken out).
    static func process(_ mixer: AudioMixer, gain: Double, ceiling: Double,
                        output: ([UnsafePointer<Float>], Int) throws -> Void) throws {
        let limiter = TruePeakLimiter(channels: mixer.channels, sampleRate: mixer.sampleRate, ceilingDBTP: ceiling)
        let block = LoudnessAnalysis.block
        let buffers = PlanarBuffers(channels: mixer.channels, capacity: block)
        let factor = Float(pow(10, gain / 20))
        // The limiter's output lags by `latency`: its first `latency` samples are dropped and
        // as many samples past the end (silence) are fed to flush it.
        let total = mixer.sampleCount + Int64(limiter.latency)
        var position: Int64 = 0
        var skip = limiter.latency
        while position < total {
            let n = Int(min(Int64(block), total - position))
            let mixed = Int(max(0, min(Int64(n), mixer.sampleCount - position)))
            if mixed > 0 { try mixer.mix(start: position, count: mixed, into: buffers.planes) }
            for plane in buffers.planes {
                for i in 0..<mixed { plane[i] *= factor }
                for i in mixed..<n { plane[i] = 0 }
            }
            limiter.process(buffers.readOnly, buffers.planes, count: n)
            let dropped = min(skip, n)
            skip -= dropped
            if n > dropped { try output(buffers.planes.map { UnsafePointer($0 + dropped) }, n - dropped) }
            position += Int64(n)
        }
    }

    /// Copies the audio of `source` into a new `fileType` file at `path` with `tags`.
    static func remux(_ source: String, to path: String, fileType: String, tags: [String: String]) throws {
        let reader = try PacketReader(path: source, kind: "audio")
        let writer = try MovieWriter(path: path, fileType: fileType, faststart: false, video: nil, audio: reader.parameters, metadata: tags)
        while let packet = try reader.next() { try writer.write(audio: packet) }
        try writer.finish()
    }
}

/// How an audio result carries its `LoudnessReport`s: the file's `comment` tag holds
/// `reel-loudness:` and, as JSON, the report (one audio output) or an array of the reports of
/// every output in order (`export.audioOutputs`). Results written before outputs carried
/// several reports hold a single report, and still read.
public enum LoudnessTag {
    static let prefix = "reel-loudness:"

    static func text(_ reports: [LoudnessReport]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = reports.count == 1 ? try? encoder.encode(reports[0]) : try? encoder.encode(reports)
        return prefix + String(decoding: json ?? Data(), as: UTF8.self)
    }

    static func text(_ report: LoudnessReport) -> String { text([report]) }

    /// The reports in the file at `path`, in output order: none when it has none.
    public static func read(path: String) throws -> [LoudnessReport] {
        guard let comment = try ContainerTags.read(path: path)["comment"], comment.hasPrefix(prefix) else { return [] }
        let json = Data(comment.dropFirst(prefix.count).utf8)
        if let reports = try? JSONDecoder().decode([LoudnessReport].self, from: json) { return reports }
        return [try JSONDecoder().decode(LoudnessReport.self, from: json)]
    }
}
