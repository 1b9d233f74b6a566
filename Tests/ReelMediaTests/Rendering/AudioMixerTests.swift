import Foundation
import ReelCore
import Testing
import ReelThreadTesting
@testable import ReelMedia

/// The mixer against a mix computed here, sample by sample, in `Double`, straight from the
/// composition's numbers (segment placement, AVFoundation ramp rules, the limiter's tanh):
/// none of the mixer's span or gain-curve code is used for the expected samples. The sources
/// are 32-bit float WAV files written by the test, so their samples are known exactly.
@Suite("Audio mixer", .blocking)
struct AudioMixerTests {
    static let rate = 48000

    /// A source: `length` stereo samples of a formula.
    struct Source: Sendable {
        var name: String
        var length: Int
        var sample: @Sendable (Int, Int) -> Float  // (index, channel)
    }

    static let sources = [
        Source(name: "a", length: 3 * rate) { i, ch in Float(0.5 * sin(2 * Double.pi * 220 * Double(i) / Double(rate) + Double(ch))) },
        Source(name: "b", length: 3 * rate) { i, ch in Float(0.4 * sin(2 * Double.pi * (330 + Double(ch)) * Double(i) / Double(rate))) },
        Source(name: "c", length: 3 * rate) { i, ch in Float(0.7 * sin(2 * Double.pi * 55 * Double(i) / Double(rate)) * (ch == 0 ? 1 : -1)) },
    ]

    /// A rational written as in the file, with its exact numerator and denominator.
    struct Time {
        var text: String
        var num: Int64
        var den: Int64
        init(_ num: Int64, _ den: Int64 = 1) {
            self.num = num; self.den = den
            text = den == 1 ? "\(num)" : "\"\(num)/\(den)\""
        }
    }

    struct Segment { var source: Int; var at: Time; var sourceStart: Time; var duration: Time }
    struct RampDef { var from: Double; var to: Double; var start: Time; var duration: Time }
    struct Track { var segments: [Segment]; var volume: Double; var ramps: [RampDef] }

    /// Gaps, cuts off the sample grid, a ramp shorter than a sample, touching ramps, and enough
    /// level for the limiter to act.
    static let tracks = [
        Track(segments: [Segment(source: 0, at: Time(0), sourceStart: Time(1, 2), duration: Time(6, 5)),
                         Segment(source: 0, at: Time(1001, 600), sourceStart: Time(9, 10), duration: Time(2))],
              volume: 0.8,
              ramps: [RampDef(from: 0.8, to: 0.2, start: Time(1, 3), duration: Time(1, 7)),
                      RampDef(from: 0.2, to: 1.5, start: Time(10, 21), duration: Time(3, 10)),
                      RampDef(from: 1.5, to: 0.5, start: Time(2), duration: Time(1, 100_000))]),
        Track(segments: [Segment(source: 1, at: Time(1, 4), sourceStart: Time(0), duration: Time(2))],
              volume: 1,
              ramps: [RampDef(from: 0, to: 1, start: Time(1, 4), duration: Time(1, 2)),
                      RampDef(from: 1, to: 0.25, start: Time(2), duration: Time(1, 3))]),
        Track(segments: [Segment(source: 2, at: Time(1, 30), sourceStart: Time(1001, 30000), duration: Time(12, 5))],
              volume: 0.6, ramps: []),
    ]

    static func composition() -> String {
        let assets = sources.map { "\"\($0.name)\": {\"url\": \"\($0.name).wav\"}" }.joined(separator: ", ")
        let trackJSON = tracks.enumerated().map { t, track in
            let segments = track.segments.map {
                "{\"asset\": \"\(sources[$0.source].name)\", \"at\": \($0.at.text), \"sourceRange\": {\"start\": \($0.sourceStart.text), \"duration\": \($0.duration.text)}}"
            }.joined(separator: ", ")
            return "{\"id\": \(t + 1), \"mediaType\": \"audio\", \"segments\": [\(segments)]}"
        }.joined(separator: ", ")
        let mix = tracks.enumerated().map { t, track in
            let ramps = track.ramps.map {
                "{\"from\": \($0.from), \"to\": \($0.to), \"timeRange\": {\"start\": \($0.start.text), \"duration\": \($0.duration.text)}}"
            }.joined(separator: ", ")
            return "{\"track\": \(t + 1), \"volume\": \(track.volume), \"volumeRamps\": [\(ramps)]}"
        }.joined(separator: ", ")
        return """
        {"formatVersion": 1, "assets": {\(assets)}, "tracks": [\(trackJSON)], "audioMix": [\(mix)],
         "videoComposition": {"renderSize": {"width": 320, "height": 240}, "frameDuration": "1/25"},
         "export": {"audio": {"sampleRate": \(rate), "channels": 2}}}
        """
    }

    /// Writes the sources as 32-bit float stereo WAV files and the composition; returns its plan.
    static func makePlan(in dir: URL) throws -> RenderPlan {
        for source in sources {
            var data = Data()
            func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
            func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
            let bytes = UInt32(source.length * 2 * 4)
            data.append(contentsOf: Array("RIFF".utf8)); u32(36 + bytes); data.append(contentsOf: Array("WAVEfmt ".utf8))
            u32(16); u16(3); u16(2); u32(UInt32(rate)); u32(UInt32(rate * 8)); u16(8); u16(32)
            data.append(contentsOf: Array("data".utf8)); u32(bytes)
            for i in 0..<source.length {
                for ch in 0..<2 { u32(source.sample(i, ch).bitPattern) }
            }
            try data.write(to: dir.appendingPathComponent("\(source.name).wav"))
        }
        let path = dir.appendingPathComponent("mix.json").path
        try composition().write(toFile: path, atomically: true, encoding: .utf8)
        return try CompositionLoader.load(path: path)
    }

    // MARK: - The reference, per sample

    /// round(num/den · rate), halves up (times here are ≥ 0).
    static func sampleIndex(_ t: Time) -> Int64 { (2 * t.num * Int64(rate) + t.den) / (2 * t.den) }

    /// Whether sample n's time n/rate is ≥ t, exactly.
    static func atOrAfter(_ n: Int64, _ t: Time) -> Bool { n * t.den >= t.num * Int64(rate) }

    static func end(_ start: Time, _ duration: Time) -> Time {
        Time(start.num * duration.den + duration.num * start.den, start.den * duration.den)
    }

    /// AVFoundation: the base before the first ramp; inside the ramp that began last, linear;
    /// after it, its `to`.
    static func gain(_ track: Track, _ n: Int64) -> Double {
        guard let ramp = track.ramps.last(where: { atOrAfter(n, $0.start) }) else { return track.volume }
        if atOrAfter(n, end(ramp.start, ramp.duration)) { return ramp.to }
        // (n/rate − start) / duration, exactly, then as a Double.
        let elapsed = Double(n * ramp.start.den - ramp.start.num * Int64(rate)) / Double(Int64(rate) * ramp.start.den)
        return ramp.from + (ramp.to - ramp.from) * elapsed / (Double(ramp.duration.num) / Double(ramp.duration.den))
    }

    /// The mix before the limiter at sample n, channel ch.
    static func sum(_ n: Int64, _ ch: Int) -> Double {
        var total = 0.0
        for track in tracks {
            for segment in track.segments {
                let first = sampleIndex(segment.at), last = sampleIndex(end(segment.at, segment.duration))
                guard n >= first, n < last else { continue }
                let index = sampleIndex(segment.sourceStart) + (n - first)
                let source = sources[segment.source]
                let value = index < source.length ? Double(source.sample(Int(index), ch)) : 0
                total += value * gain(track, n)
            }
        }
        return total
    }

    static func limited(_ x: Double) -> Double {
        let knee = 0.891, headroom = 1 - 0.891
        guard abs(x) > knee else { return x }
        let y = knee + headroom * tanh((abs(x) - knee) / headroom)
        return x < 0 ? -y : y
    }

    static func mix(_ mixer: AudioMixer, start: Int64, count: Int) throws -> [[Float]] {
        let buffers = (0..<2).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: max(count, 1)) }
        defer { buffers.forEach { $0.deallocate() } }
        try mixer.mix(start: start, count: count, into: buffers)
        return buffers.map { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    // MARK: - Tests

    @Test("every sample equals the mix computed from the composition's numbers")
    func againstTheFormula() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let plan = try Self.makePlan(in: dir)
        let mixer = AudioMixer(plan: plan)
        #expect(mixer.sampleCount == 176_080)  // track 1 ends last, at 1001/600 + 2 s
        var limitedSamples = 0, worst = 0.0
        var position: Int64 = 0
        while position < mixer.sampleCount {
            let count = Int(min(4096, mixer.sampleCount - position))
            let block = try Self.mix(mixer, start: position, count: count)
            for i in 0..<count {
                for ch in 0..<2 {
                    let raw = Self.sum(position + Int64(i), ch)
                    if abs(raw) > 0.891 { limitedSamples += 1 }
                    let error = abs(Double(block[ch][i]) - Self.limited(raw))
                    worst = max(worst, error)
                    if error > 1e-6 {
                        Issue.record("sample \(position + Int64(i)) channel \(ch): \(block[ch][i]), expected \(Self.limited(raw)) (before the limiter \(raw))")
                        return
                    }
                }
            }
            position += Int64(count)
        }
        // The composition exercises the limiter, not just the linear part.
        #expect(limitedSamples > 1000, "only \(limitedSamples) samples went above the knee")
        #expect(worst < 1e-6)
    }

    @Test("any block split, in any order, gives the same samples bit for bit")
    func blockSplits() throws {
        let dir = try TestMedia.tempDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let plan = try Self.makePlan(in: dir)
        let total = Int(AudioMixer(plan: plan).sampleCount)
        let whole = try Self.mix(AudioMixer(plan: plan), start: 0, count: total).map { $0.map(\.bitPattern) }
        var rng = SplitMix64(seed: 0xA0D10)
        for round in 0..<4 {
            // Random block sizes in order, then the same blocks in a shuffled order.
            var bounds = [0]
            while bounds.last! < total { bounds.append(min(total, bounds.last! + Int.random(in: 1...(round == 0 ? 7 : 9000), using: &rng))) }
            var blocks = Array(zip(bounds, bounds.dropFirst()))
            if round % 2 == 1 { blocks.shuffle(using: &rng) }
            let mixer = AudioMixer(plan: plan)
            var pieces = [[UInt32]](repeating: [UInt32](repeating: 0, count: total), count: 2)
            for (lo, hi) in blocks {
                let block = try Self.mix(mixer, start: Int64(lo), count: hi - lo)
                for ch in 0..<2 { pieces[ch].replaceSubrange(lo..<hi, with: block[ch].map(\.bitPattern)) }
            }
            #expect(pieces == whole, "round \(round): \(blocks.count) blocks")
        }
        // Past the end: silence.
        #expect(try Self.mix(AudioMixer(plan: plan), start: Int64(total), count: 100).allSatisfy { $0.allSatisfy { $0 == 0 } })
    }

    @Test("the limiter: unchanged up to the knee, within 1e-7 of the tanh curve above it, monotonic, never beyond full scale")
    func limiter() {
        var previous = -Float.infinity
        for step in -100_000...100_000 {
            let x = Float(step) / 2000  // −50…50, in steps of 0.0005
            let y = SoftLimiter.limit(x)
            if abs(x) <= SoftLimiter.knee { #expect(y == x); continue }
            let expected = Self.limited(Double(x))
            #expect(abs(Double(y) - expected) <= 1e-7, "limit(\(x)) = \(y), tanh curve \(expected)")
            #expect(abs(y) <= 1)
            if x > 0 { #expect(y >= previous, "not monotonic at \(x)"); previous = y }
        }
        #expect(SoftLimiter.limit(.infinity) == 1 && SoftLimiter.limit(-.infinity) == -1)
        #expect(SoftLimiter.limit(.nan).isNaN)
        // The block form skips blocks that stay below the knee, and limits those that do not.
        let block = UnsafeMutablePointer<Float>.allocate(capacity: 3)
        defer { block.deallocate() }
        block.update(from: [0.5, -0.891, 0.2], count: 3)
        SoftLimiter.apply(block, count: 3)
        #expect(Array(UnsafeBufferPointer(start: block, count: 3)) == [0.5, -0.891, 0.2])
        block.update(from: [0.5, -1.5, 3], count: 3)
        SoftLimiter.apply(block, count: 3)
        #expect(Array(UnsafeBufferPointer(start: block, count: 3)) == [0.5, SoftLimiter.limit(-1.5), SoftLimiter.limit(3)])
    }
}
