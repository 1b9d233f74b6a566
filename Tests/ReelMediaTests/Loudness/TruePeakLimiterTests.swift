import Foundation
import ReelCore
import Testing
@testable import ReelMedia
import ReelThreadTesting

/// The true-peak limiter, checked with libebur128's own true-peak meter (an independent
/// oversampler) and against its input sample by sample.
@Suite(.blocking) struct TruePeakLimiterTests {
    static let rate = 48000

    /// 4 s of stereo: a quiet 440 Hz tone (−30 dBFS) throughout, with 50 ms bursts of a
    /// 7 kHz tone at +6 dBFS (peaks far above any ceiling) every second from 1 s on.
    static func signal() -> [[Float]] {
        let n = 4 * rate
        return (0..<2).map { ch in
            (0..<n).map { i in
                let t = Double(i) / Double(rate)
                var x = 0.0316 * sin(2 * .pi * 440 * t + Double(ch))
                if t >= 1, t.truncatingRemainder(dividingBy: 1) < 0.05 { x += 2 * sin(2 * .pi * 7000 * t + 0.3) }
                return Float(x)
            }
        }
    }

    /// `input` through a limiter at `ceiling` dBTP in blocks of `block`, with the latency taken out.
    static func limit(_ input: [[Float]], ceiling: Double, block: Int) -> [[Float]] {
        let limiter = TruePeakLimiter(channels: input.count, sampleRate: rate, ceilingDBTP: ceiling)
        let n = input[0].count, total = n + limiter.latency
        var output = input.map { _ in [Float]() }
        var position = 0
        let buffers = PlanarBuffers(channels: input.count, capacity: block)
        while position < total {
            let count = min(block, total - position)
            for ch in input.indices {
                for i in 0..<count { buffers.planes[ch][i] = position + i < n ? input[ch][position + i] : 0 }
            }
            limiter.process(buffers.readOnly, buffers.planes, count: count)
            for ch in input.indices { output[ch] += UnsafeBufferPointer(start: buffers.planes[ch], count: count) }
            position += count
        }
        return output.map { Array($0.dropFirst(limiter.latency)) }
    }

    static func truePeak(_ signal: [[Float]]) throws -> Double {
        let meter = try LoudnessMeter(channels: signal.count, sampleRate: rate)
        try signal[0].withUnsafeBufferPointer { l in
            try signal[1].withUnsafeBufferPointer { r in try meter.add([l.baseAddress!, r.baseAddress!], count: l.count) }
        }
        return try #require(try meter.measurement().truePeak)
    }

    @Test func truePeaksStayUnderTheCeilingAndQuietPassagesAreUntouched() throws {
        let input = Self.signal()
        #expect(try Self.truePeak(input) > 6)
        for ceiling in [-1.0, -2.0, -6.0] {
            let output = Self.limit(input, ceiling: ceiling, block: 4096)
            let peak = try Self.truePeak(output)
            // libebur128 oversamples with its own filter; allow its estimate 0.2 dB above ours.
            #expect(peak <= ceiling + 0.2, "ceiling \(ceiling) dBTP: libebur128 measures \(peak) dBTP")
            // Before the first burst the signal passes unchanged, bit for bit; 700 ms after a burst
            // (nearly nine release time constants) the gain is back within 0.1 % of 1.
            #expect(Array(output[0][0..<(Self.rate - Self.rate / 100)]) == Array(input[0][0..<(Self.rate - Self.rate / 100)]))
            let settled = Self.rate + Self.rate * 3 / 4
            let worst = (settled..<(settled + 1000)).map { abs(output[1][$0] - input[1][$0]) / max(1e-4, abs(input[1][$0])) }.max() ?? 1
            #expect(worst <= 1e-3, "ceiling \(ceiling): relative change \(worst) at 1.75 s")
        }
    }

    @Test func outputDoesNotDependOnBlockSizesAndRepeatsBitForBit() {
        let input = Self.signal()
        let a = Self.limit(input, ceiling: -1, block: 4096)
        #expect(a == Self.limit(input, ceiling: -1, block: 777))
        #expect(a == Self.limit(input, ceiling: -1, block: 4096))
    }
}
