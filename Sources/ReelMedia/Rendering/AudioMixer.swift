import Foundation
import ReelCore

/// Mixes the plan's audio tracks into the export format, block by block: each track's segments
/// are read into a track buffer at exact sample positions (the read path), the buffer is
/// scaled by the track's volume curve and added to the mix (the gain path), and the sum is
/// limited.
///
/// Sample `n` of the output is composition time `n / sampleRate`; a segment occupies output
/// samples `[round(at·sr), round((at+duration)·sr))` and reads its source from
/// `round(sourceStart·sr)`. Every sample depends only on its index — the gain curve
/// (`SampleGainCurve`) and the limiter are functions of the sample alone, and a segment that
/// changes speed is stretched whole, from its source range, the first time a block needs it
/// (`SegmentStretcher`) — so any block `[start, start+count)` can be mixed on its own, in any
/// order, with the same result. A ducked track's gain (`DuckEnvelope`) is a function of the sample
/// too: the levels it follows are measured over the whole timeline, in a first pass over the
/// tracks it ducks under, before the first block is mixed. Used from one thread at a time.
public final class AudioMixer {
    public let plan: RenderPlan
    private let media: MediaSources
    public let sampleRate: Int
    public let channels: Int
    /// Total output samples: the composition duration at the export rate.
    public let sampleCount: Int64
    private let tracks: [TrackMix]
    /// Open sources, by track and segment index; closed once the mix has passed their segment.
    private var sources: [SegmentKey: AudioSampleSource] = [:]
    private var trackBuffer: [UnsafeMutablePointer<Float>] = []
    private var gainBuffer: UnsafeMutablePointer<Float>?
    private var capacity = 0
    /// Speed-changed segments, stretched whole on first use (`SegmentStretcher`).
    private var stretchedSegments: [SegmentKey: [[Float]]] = [:]
    /// The dips of ducked tracks, by track index, measured over the whole timeline before the
    /// first block is mixed (`measureDucking`).
    private var duckEnvelopes: [Int: DuckEnvelope]?
    private var duckBuffer: UnsafeMutablePointer<Float>?

    private struct SegmentKey: Hashable { let track: Int; let segment: Int }

    /// One audio track on the output's sample grid.
    private struct TrackMix {
        var segments: [PlacedSegment]
        var gain: SampleGainCurve
    }

    /// A segment on the output's sample grid: output samples `[start, end)` (sorted and
    /// non-overlapping within a track, possibly empty) show source samples from `sourceStart`.
    private struct PlacedSegment {
        var index: Int
        var start: Int64
        var end: Int64
        var sourceStart: Int64

        init(index: Int, _ segment: PlannedSegment, sampleRate: Int) {
            let rate = Int64(sampleRate)
            self.index = index
            start = segment.at.scaled(to: rate)
            end = segment.end.scaled(to: rate)
            sourceStart = segment.sourceStart.scaled(to: rate)
        }

        /// The source sample played at output sample `n`.
        func sourceSample(atOutput n: Int64) -> Int64 { sourceStart + (n - start) }
    }

    /// `media` gives the byte-range sources of assets this machine reads remotely.
    public init(plan: RenderPlan, media: MediaSources = .local) {
        self.plan = plan
        self.media = media
        sampleRate = plan.export.audio.sampleRate
        channels = plan.export.audio.channels
        sampleCount = plan.duration.scaled(to: Int64(plan.export.audio.sampleRate))
        tracks = plan.audioTracks.map { [sampleRate] track in
            TrackMix(segments: track.segments.enumerated().map { PlacedSegment(index: $0.offset, $0.element, sampleRate: sampleRate) },
                     gain: SampleGainCurve(track, sampleRate: sampleRate))
        }
    }

    deinit {
        trackBuffer.forEach { $0.deallocate() }
        gainBuffer?.deallocate()
        duckBuffer?.deallocate()
    }

    /// Whether the composition has any audio to mix (no audio track ⇒ no audio stream).
    public var hasAudio: Bool { !plan.audioTracks.isEmpty }

    /// Mixes output samples `[start, start+count)` into `out[channel]` (overwrites).
    public func mix(start: Int64, count: Int, into out: [UnsafeMutablePointer<Float>]) throws {
        precondition(out.count == channels)
        for ch in 0..<channels { out[ch].update(repeating: 0, count: count) }
        guard count > 0 else { return }
        if duckEnvelopes == nil { duckEnvelopes = try measureDucking() }
        ensureCapacity(count)
        for t in tracks.indices {
            guard try read(track: t, start: start, count: count) else { continue }
            if let envelope = duckEnvelopes![t] { duck(by: envelope, start: start, count: count) }
            addScaled(by: tracks[t].gain, start: start, count: count, into: out)
        }
        for ch in 0..<channels { SoftLimiter.apply(out[ch], count: count) }
        closeSources(endingBefore: start)
    }

    // MARK: - Read path

    /// Fills `trackBuffer` with track `t`'s samples `[start, start+count)` (zeros in gaps).
    /// - Returns: false when no segment of the track plays there (the buffer is not touched).
    private func read(track t: Int, start: Int64, count: Int) throws -> Bool {
        let segments = tracks[t].segments
        let end = start + Int64(count)
        var i = firstSegment(in: segments, endingAfter: start)
        guard i < segments.count, segments[i].start < end else { return false }
        var filled = start  // trackBuffer holds [start, filled)
        while i < segments.count, segments[i].start < end {
            let segment = segments[i]
            let lo = max(start, segment.start), hi = min(end, segment.end)
            i += 1
            guard lo < hi else { continue }
            zero(from: Int(filled - start), to: Int(lo - start))
            let key = SegmentKey(track: t, segment: segment.index)
            let planned = plan.audioTracks[t].segments[segment.index]
            if planned.isTimeScaled {
                let samples = try stretched(key, planned, plan.audioTracks[t].timePitchAlgorithm)
                let from = Int(lo - segment.start), n = Int(hi - lo)
                for ch in 0..<channels {
                    samples[ch].withUnsafeBufferPointer { (trackBuffer[ch] + Int(lo - start)).update(from: $0.baseAddress! + from, count: n) }
                }
            } else {
                try self.source(key).read(start: segment.sourceSample(atOutput: lo), count: Int(hi - lo),
                                          into: trackBuffer.map { $0 + Int(lo - start) })
            }
            filled = hi
        }
        zero(from: Int(filled - start), to: count)
        return true
    }

    /// The index of the first segment whose end is after `sample` (binary search; segment
    /// ends are sorted because the segments are).
    private func firstSegment(in segments: [PlacedSegment], endingAfter sample: Int64) -> Int {
        var lo = 0, hi = segments.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if segments[mid].end <= sample { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    private func zero(from lo: Int, to hi: Int) {
        guard lo < hi else { return }
        for ch in 0..<channels { (trackBuffer[ch] + lo).update(repeating: 0, count: hi - lo) }
    }

    private func source(_ key: SegmentKey) throws -> AudioSampleSource {
        if let s = sources[key] { return s }
        let segment = plan.audioTracks[key.track].segments[key.segment]
        guard let asset = plan.assets[segment.asset] else {
            throw RenderError.internalInconsistency("audio segment refers to unplanned asset \(segment.asset)")
        }
        let s = try AudioSampleSource(try media.location(of: asset.url), sampleRate: sampleRate, channels: channels)
        sources[key] = s
        return s
    }

    /// A speed-changed segment's samples, stretched whole the first time a block needs them.
    private func stretched(_ key: SegmentKey, _ segment: PlannedSegment, _ algorithm: AudioTimePitchAlgorithm) throws -> [[Float]] {
        if let s = stretchedSegments[key] { return s }
        let samples = try SegmentStretcher.render(source: try source(key), segment: segment, algorithm: algorithm, sampleRate: sampleRate)
        sources[key] = nil   // everything it gives is in `samples`
        stretchedSegments[key] = samples
        return samples
    }

    /// Closes the files (and drops the stretched samples) of segments the mix has passed (a
    /// block before them reopens them).
    private func closeSources(endingBefore sample: Int64) {
        for key in sources.keys where tracks[key.track].segments[key.segment].end <= sample {
            sources[key] = nil
        }
        for key in stretchedSegments.keys where tracks[key.track].segments[key.segment].end <= sample {
            stretchedSegments[key] = nil
        }
    }

    // MARK: - Ducking

    /// The envelope of every ducked track, from the levels of the tracks it ducks under.
    private func measureDucking() throws -> [Int: DuckEnvelope] {
        let ducked = plan.audioTracks.indices.filter { plan.audioTracks[$0].duck != nil }
        guard !ducked.isEmpty else { return [:] }
        let indexOfTrack = Dictionary(plan.audioTracks.enumerated().map { ($1.id, $0) }) { first, _ in first }
        var levels: [Int: [Double]] = [:]
        var envelopes: [Int: DuckEnvelope] = [:]
        for t in ducked {
            let duck = plan.audioTracks[t].duck!
            var under: [[Double]] = []
            for u in duck.under.compactMap({ indexOfTrack[$0] }) {
                if levels[u] == nil { levels[u] = try windowLevels(track: u) }
                under.append(levels[u]!)
            }
            envelopes[t] = DuckEnvelope(duck, levels: under, sampleRate: sampleRate)
        }
        sources.removeAll()
        stretchedSegments.removeAll()
        return envelopes
    }

    /// Track `t`'s mean square in each `DuckEnvelope` window, as heard: after its volume curve.
    private func windowLevels(track t: Int) throws -> [Double] {
        let window = DuckEnvelope.windowSamples(sampleRate: sampleRate)
        var levels = [Double](repeating: 0, count: Int((sampleCount + Int64(window) - 1) / Int64(window)))
        let block = window * 100   // blocks start on window boundaries
        ensureCapacity(block)
        let heard = PlanarBuffers(channels: channels, capacity: block)
        var start: Int64 = 0
        while start < sampleCount {
            let count = Int(min(Int64(block), sampleCount - start))
            if try read(track: t, start: start, count: count) {
                for ch in 0..<channels { heard.planes[ch].update(repeating: 0, count: count) }
                addScaled(by: tracks[t].gain, start: start, count: count, into: heard.planes)
                var offset = 0
                while offset < count {
                    let n = min(window, count - offset)
                    var sum = 0.0
                    for ch in 0..<channels {
                        let p = heard.planes[ch] + offset
                        for i in 0..<n { sum += Double(p[i]) * Double(p[i]) }
                    }
                    levels[Int(start) / window + offset / window] = sum / Double(n * channels)
                    offset += n
                }
            }
            start += Int64(count)
            closeSources(endingBefore: start)
        }
        return levels
    }

    /// Scales `trackBuffer` over `[start, start+count)` by the envelope.
    private func duck(by envelope: DuckEnvelope, start: Int64, count: Int) {
        let gains = duckBuffer!
        for i in 0..<count { gains[i] = envelope.gain(atSample: start + Int64(i)) }
        for ch in 0..<channels {
            let x = trackBuffer[ch]
            for i in 0..<count { x[i] *= gains[i] }
        }
    }

    // MARK: - Gain path

    /// Adds `trackBuffer × gain` to `out` over `[start, start+count)`, one linear piece of the
    /// gain curve at a time: a constant piece is one multiply-add per sample; a ramp's gains
    /// are computed once into `gainBuffer` for all channels.
    private func addScaled(by curve: SampleGainCurve, start: Int64, count: Int, into out: [UnsafeMutablePointer<Float>]) {
        let end = start + Int64(count)
        var p = curve.pieceIndex(containing: start)
        var position = start
        while position < end {
            let piece = curve.pieces[p]
            let hi = min(end, piece.end)
            let offset = Int(position - start), n = Int(hi - position)
            if piece.slope == 0 {
                let g = Float(piece.value)
                if g != 0 {
                    for ch in 0..<channels { Self.addScaled(trackBuffer[ch] + offset, by: g, into: out[ch] + offset, count: n) }
                }
            } else {
                let gains = gainBuffer!
                for i in 0..<n { gains[i] = piece.gain(atSample: position + Int64(i)) }
                for ch in 0..<channels { Self.addScaled(trackBuffer[ch] + offset, by: gains, into: out[ch] + offset, count: n) }
            }
            position = hi
            p += 1
        }
    }

    @inline(__always)
    private static func addScaled(_ x: UnsafePointer<Float>, by g: Float, into y: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { y[i] += x[i] * g }
    }

    @inline(__always)
    private static func addScaled(_ x: UnsafePointer<Float>, by g: UnsafePointer<Float>, into y: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { y[i] += x[i] * g[i] }
    }

    private func ensureCapacity(_ count: Int) {
        guard count > capacity else { return }
        trackBuffer.forEach { $0.deallocate() }
        gainBuffer?.deallocate()
        duckBuffer?.deallocate()
        trackBuffer = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: count) }
        gainBuffer = UnsafeMutablePointer<Float>.allocate(capacity: count)
        duckBuffer = UnsafeMutablePointer<Float>.allocate(capacity: count)
        capacity = count
    }
}

/// A stateless soft limiter: samples at or below the knee (−1 dBFS) pass unchanged; above it
/// they approach full scale along a tanh curve, so sums of loud tracks never wrap or hard-clip.
///
/// Stateless on purpose: a sample's output depends only on its input, so any block of the mix
/// can be rendered independently (chunked audio) with bit-identical results.
///
/// Cheap on purpose: a block with no sample above the knee is left as it is after one pass of
/// integer compares, and the curve is a rational function, not `tanh`: Lambert's continued
/// fraction for tanh cut after ten terms (a [9/10] Padé approximant), clamped to 1. Its
/// error against `tanh` is at most 6.3·10⁻⁷ for any argument (largest near 7.4, where it
/// reaches 1), so a limited sample is within 7.1·10⁻⁸ of `knee + headroom·tanh(…)` — about
/// one `Float` step at full scale, −143 dBFS — and rises monotonically to exactly 1.
public enum SoftLimiter {
    /// −1 dBFS.
    public static let knee: Float = 0.891
    private static let headroom: Float = 1 - knee
    private static let kneeBits = knee.bitPattern

    /// The limited value of `x`.
    @inline(__always) public static func limit(_ x: Float) -> Float {
        let m = abs(x)
        // Beyond 16 the curve is 1 to Float precision, and the polynomials stay finite.
        let u = min(max((Double(m) - Double(knee)) / Double(headroom), 0), 16)
        let y = Float(Double(knee) + Double(headroom) * tanhApproximation(u))
        return Float(signOf: x, magnitudeOf: m > knee ? y : m)
    }

    /// tanh(u) for 0 ≤ u ≤ 16, within 6.3·10⁻⁷ (see the type's comment). In `Double`, so the
    /// limited samples rise monotonically to full scale (a `Float` evaluation wobbles by a step).
    @inline(__always) static func tanhApproximation(_ u: Double) -> Double {
        let v = u * u
        let p = 1 + v * (0.142_857_142_857_142_85 + v * (4.678_362_573_099_415e-3 + v * (4.914_246_400_314_511_5e-5
            + v * (1.560_078_222_322_067_2e-7 + v * 7.273_091_945_557_423e-11))))
        let q = 1 + v * (0.476_190_476_190_476_16 + v * (3.007_518_796_992_481e-2 + v * (5.503_955_968_352_253e-4
            + v * (3.276_164_266_876_341_4e-6 + v * 4.800_240_684_067_899e-9))))
        return min(u * p / q, 1)
    }

    /// Limits `buffer[0..<count]` in place.
    public static func apply(_ buffer: UnsafeMutablePointer<Float>, count: Int) {
        // Any sample above the knee (or NaN)? Integer compares on the magnitude's bits vectorise.
        var above: UInt32 = 0
        buffer.withMemoryRebound(to: UInt32.self, capacity: count) { bits in
            for i in 0..<count { above |= (bits[i] & 0x7FFF_FFFF) > kneeBits ? 1 : 0 }
        }
        guard above != 0 else { return }
        for i in 0..<count { buffer[i] = limit(buffer[i]) }
    }
}
