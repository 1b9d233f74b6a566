import Foundation
import ReelCore

/// Loudness measurements of whole programmes: a composition's mix (rendered block by block,
/// never held whole) or a file's first audio stream, decoded at its own rate and channels.
public enum LoudnessAnalysis {
    static let block = 4096

    /// The mix of `mixer`'s plan, as composed (before any normalisation).
    public static func measure(_ mixer: AudioMixer) throws -> LoudnessMeasurement {
        let meter = try LoudnessMeter(channels: mixer.channels, sampleRate: mixer.sampleRate)
        let buffers = PlanarBuffers(channels: mixer.channels, capacity: block)
        var position: Int64 = 0
        while position < mixer.sampleCount {
            let n = Int(min(Int64(block), mixer.sampleCount - position))
            try mixer.mix(start: position, count: n, into: buffers.planes)
            try meter.add(buffers.readOnly, count: n)
            position += Int64(n)
        }
        return try meter.measurement()
    }

    /// The first audio stream of the file at `path`, at its own sample rate and channels (up
    /// to 8; more are down-mixed to 8), from its start to its end.
    public static func measure(path: String) throws -> LoudnessMeasurement {
        let description = try MediaProbe.describe(path: path)
        guard let audio = description.audio, let duration = description.duration else {
            throw MediaError(code: .noStream, message: "no audio stream", context: "measuring the loudness of \(path)")
        }
        return try measure(path: path, sampleRate: audio.sampleRate, channels: min(8, audio.channels), duration: duration)
    }

    /// The first audio stream of `path` decoded at `sampleRate` and `channels`, over `duration`.
    static func measure(path: String, sampleRate: Int, channels: Int, duration: Rational) throws -> LoudnessMeasurement {
        let source = try AudioSampleSource(path: path, sampleRate: sampleRate, channels: channels)
        let meter = try LoudnessMeter(channels: channels, sampleRate: sampleRate)
        let buffers = PlanarBuffers(channels: channels, capacity: block)
        let total = duration.scaled(to: Int64(sampleRate))
        var position: Int64 = 0
        while position < total {
            let n = Int(min(Int64(block), total - position))
            try source.read(start: position, count: n, into: buffers.planes)
            try meter.add(buffers.readOnly, count: n)
            position += Int64(n)
        }
        return try meter.measurement()
    }
}

extension LoudnessAnalysis {
    /// What normalising `plan`'s mix to `target` gives before encoding: the mix is measured,
    /// then measured again through the gain and the true-peak limiter (two passes over the
    /// mix, no picture and no encoder). The delivered figures differ from these only by what
    /// AAC encoding changes (see `NormalisedAudio`).
    public static func preview(_ plan: RenderPlan, target: LoudnessTarget, media: MediaSources = .local) throws -> LoudnessReport {
        let before = try measure(AudioMixer(plan: plan, media: media))
        let gain = LoudnessReport.gain(for: before, target: target)
        let ceiling = target.truePeak - NormalisedAudio.ceilingMargin
        let mixer = AudioMixer(plan: plan, media: media)
        let meter = try LoudnessMeter(channels: mixer.channels, sampleRate: mixer.sampleRate)
        try NormalisedAudio.process(mixer, gain: gain, ceiling: ceiling) { planes, count in try meter.add(planes, count: count) }
        return LoudnessReport(target: target, before: before, gain: gain, ceiling: ceiling, after: try meter.measurement())
    }
}
