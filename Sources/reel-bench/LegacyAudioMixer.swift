// The audio mixer as it was before its rewrite per block (commit 58dfc25), kept here only so that
// ops/bench-mixer.sh can show the new mixer against it on the same machine: per sample, a
// `Rational` time, a search of the ramps with `last(where:)`, and `tanh`. Not used by Reel.
import Foundation
import ReelCore
import ReelMedia

/// Mixes the plan's audio tracks into the export format, block by block: each segment's
/// source is read at exact sample positions, scaled by its track's volume curve, summed,
/// then limited.
///
/// Sample `n` of the output is composition time `n / sampleRate`; a segment occupies output
/// samples `[round(at·sr), round((at+duration)·sr))` and reads its source from
/// `round(sourceStart·sr)`. Any block `[start, start+count)` can be mixed on its own, in any
/// order, with the same result. Used from one thread at a time.
final class LegacyAudioMixer {
    let plan: RenderPlan
    private let media: MediaSources
    let sampleRate: Int
    let channels: Int
    /// Total output samples: the composition duration at the export rate.
    let sampleCount: Int64
    private var sources: [SegmentKey: AudioSampleSource] = [:]
    private var scratch: [UnsafeMutablePointer<Float>] = []
    private var scratchCapacity = 0

    private struct SegmentKey: Hashable { let track: Int; let segment: Int }

    /// `media` gives the byte-range sources of assets this machine reads remotely.
    init(plan: RenderPlan, media: MediaSources = .local) {
        self.plan = plan
        self.media = media
        sampleRate = plan.export.audio.sampleRate
        channels = plan.export.audio.channels
        sampleCount = plan.duration.scaled(to: Int64(plan.export.audio.sampleRate))
    }

    deinit { scratch.forEach { $0.deallocate() } }

    /// Whether the composition has any audio to mix (no audio track ⇒ no audio stream).
    var hasAudio: Bool { !plan.audioTracks.isEmpty }

    /// Mixes output samples `[start, start+count)` into `out[channel]` (overwrites).
    func mix(start: Int64, count: Int, into out: [UnsafeMutablePointer<Float>]) throws {
        precondition(out.count == channels)
        for ch in 0..<channels { out[ch].update(repeating: 0, count: count) }
        ensureScratch(count)
        let end = start + Int64(count)
        let sr = Int64(sampleRate)
        for track in plan.audioTracks {
            for (index, segment) in track.segments.enumerated() {
                let segStart = segment.at.scaled(to: sr)
                let segEnd = (segment.at + segment.duration).scaled(to: sr)
                let key = SegmentKey(track: track.id, segment: index)
                if segEnd <= start { sources[key] = nil; continue }   // finished: close its file
                let lo = max(start, segStart), hi = min(end, segEnd)
                guard lo < hi else { continue }
                let source = try self.source(key, segment)
                let n = Int(hi - lo)
                try source.read(start: segment.sourceStart.scaled(to: sr) + (lo - segStart), count: n, into: scratch)
                let offset = Int(lo - start)
                for i in 0..<n {
                    let gain = legacyGain(track, atSample: lo + Int64(i), sampleRate: sampleRate)
                    for ch in 0..<channels { out[ch][offset + i] += scratch[ch][i] * gain }
                }
            }
        }
        for ch in 0..<channels { LegacySoftLimiter.apply(out[ch], count: count) }
    }

    private func source(_ key: SegmentKey, _ segment: PlannedSegment) throws -> AudioSampleSource {
        if let s = sources[key] { return s }
        guard let asset = plan.assets[segment.asset] else {
            throw LegacyMixerError()
        }
        let s = try AudioSampleSource(try media.location(of: asset.url), sampleRate: sampleRate, channels: channels)
        sources[key] = s
        return s
    }

    private func ensureScratch(_ count: Int) {
        guard count > scratchCapacity else { return }
        scratch.forEach { $0.deallocate() }
        scratch = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: count) }
        scratchCapacity = count
    }
}

/// A stateless soft limiter: samples below the knee pass unchanged; above it they approach
/// full scale along a tanh curve, so sums of loud tracks never wrap or hard-clip.
///
/// Stateless on purpose: a sample's output depends only on its input, so any block of the mix
/// can be rendered independently (chunked audio) with bit-identical results.
enum LegacySoftLimiter {
    /// −1 dBFS.
    static let knee: Float = 0.891

    @inline(__always) static func limit(_ x: Float) -> Float {
        let m = abs(x)
        guard m > knee else { return x }
        let headroom = 1 - knee
        let y = knee + headroom * Float(tanh(Double((m - knee) / headroom)))
        return x < 0 ? -y : y
    }

    static func apply(_ buffer: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { buffer[i] = limit(buffer[i]) }
    }
}

struct LegacyMixerError: Error {}

/// `PlannedAudioTrack.gain(atSample:sampleRate:)` and `RampedValue` as they were.
func legacyGain(_ track: PlannedAudioTrack, atSample n: Int64, sampleRate: Int) -> Float {
    let time = Rational(n, Int64(sampleRate))
    guard let ramp = track.volumeRamps.last(where: { $0.start <= time }) else { return Float(track.volume) }
    if time >= ramp.end { return Float(ramp.to) }
    return Float(ramp.from + (ramp.to - ramp.from) * ((time - ramp.start) / ramp.duration).seconds)
}
