import Foundation

/// A look-ahead true-peak limiter: keeps the signal's inter-sample peaks, estimated at 4×
/// oversampling, at or below `ceiling`, by a gain that is never more than 1.
///
/// For each input sample the peak is the largest of the sample and three interpolated values
/// between it and the next one (a Hann-windowed sinc of 2·`halfTaps` taps per phase, each
/// phase of unit gain), over every channel (the channels share one gain, so the stereo image
/// does not move). The gain each sample needs, `ceiling / peak` (or 1), goes through a running
/// minimum over `lookahead` samples, an exponential release, and a moving average over
/// `lookahead` samples; output sample `n` is input sample `n` times the gain computed
/// `lookahead − 1` samples later. The average of values that are each at most the gain sample
/// `n` needs is itself at most that, so every sample is attenuated enough, and the gain moves
/// smoothly (over `lookahead` samples when it falls, the release time when it recovers).
///
/// Deterministic: single-threaded float arithmetic in a fixed order; the same input gives the
/// same output bit for bit. Output lags input by `latency` samples (`process` starts with that
/// many zeros; feed as many zeros at the end to flush it). Not thread-safe.
public final class TruePeakLimiter {
    public let channels: Int
    /// Linear ceiling (e.g. 0.794 for −2 dBTP).
    public let ceiling: Float
    /// Samples of look-ahead (attack).
    public let lookahead: Int
    /// Output sample `n` comes out when input sample `n + latency` goes in.
    public let latency: Int

    static let oversampling = 4
    /// Taps on each side of an interpolated point.
    static let halfTaps = 12

    /// `phase[p − 1][k]` weighs input `d − halfTaps + 1 + k` for the point `d + p/4`.
    private let phases: [[Float]]
    private let releaseCoefficient: Double
    /// Per channel, the last `ringSize` inputs, each stored twice (at `i` and `i + ringSize`) so
    /// every filter window is contiguous.
    private let rings: [UnsafeMutablePointer<Float>]
    private let ringSize: Int
    private let mask: Int
    /// Running minimum of the needed gains over the look-ahead: a monotonic queue of (sample, gain).
    private let minimumIndices: UnsafeMutablePointer<Int>
    private let minimumValues: UnsafeMutablePointer<Float>
    private var minimumHead = 0, minimumCount = 0
    /// The released gains of the last `lookahead` samples and their sum (for the moving average).
    private let averaged: UnsafeMutablePointer<Double>
    private var averageSum = 0.0
    private var released = 1.0
    /// Input samples received so far.
    private var received = 0

    /// - Parameters:
    ///   - ceilingDBTP: the highest true peak allowed out.
    ///   - lookaheadSeconds: how far ahead it looks (and how long a gain reduction takes).
    ///   - releaseSeconds: time constant of the gain's recovery.
    public init(channels: Int, sampleRate: Int, ceilingDBTP: Double, lookaheadSeconds: Double = 0.005, releaseSeconds: Double = 0.08) {
        precondition(channels > 0 && sampleRate > 0)
        self.channels = channels
        ceiling = Float(pow(10, ceilingDBTP / 20))
        lookahead = max(1, Int((lookaheadSeconds * Double(sampleRate)).rounded()))
        let k = Self.halfTaps
        latency = k + lookahead - 1
        releaseCoefficient = 1 - exp(-1 / (releaseSeconds * Double(sampleRate)))
        phases = (1..<Self.oversampling).map { p in
            let fraction = Double(p) / Double(Self.oversampling)
            let raw = (0..<(2 * k)).map { i -> Double in
                let t = fraction - Double(i - k + 1)   // distance from input d − k + 1 + i to the point d + fraction
                let sinc = t == 0 ? 1 : sin(Double.pi * t) / (Double.pi * t)
                let window = 0.5 * (1 + cos(Double.pi * t / Double(k)))
                return sinc * window
            }
            let sum = raw.reduce(0, +)
            return raw.map { Float($0 / sum) }
        }
        var size = 1
        while size < 2 * k + lookahead + 2 { size <<= 1 }
        ringSize = size
        mask = size - 1
        rings = (0..<channels).map { _ in
            let ring = UnsafeMutablePointer<Float>.allocate(capacity: 2 * size)
            ring.initialize(repeating: 0, count: 2 * size)
            return ring
        }
        minimumIndices = .allocate(capacity: lookahead)
        minimumValues = .allocate(capacity: lookahead)
        averaged = .allocate(capacity: lookahead)
        averaged.initialize(repeating: 1, count: lookahead)
        averageSum = Double(lookahead)
    }

    deinit {
        rings.forEach { $0.deallocate() }
        minimumIndices.deallocate()
        minimumValues.deallocate()
        averaged.deallocate()
    }

    /// Limits `count` samples of `input` into `output` (planar; they may be the same buffers):
    /// output `i` is input `i − latency` of the whole stream (zeros before the stream's start).
    public func process(_ input: [UnsafePointer<Float>], _ output: [UnsafeMutablePointer<Float>], count: Int) {
        precondition(input.count == channels && output.count == channels)
        let k = Self.halfTaps
        for i in 0..<count {
            let n = received
            received += 1
            let slot = n & mask
            for ch in 0..<channels {
                let x = input[ch][i]
                rings[ch][slot] = x
                rings[ch][slot + ringSize] = x
            }
            // The peak around sample d = n − k (its window reaches sample n).
            let d = n - k
            var needed: Float = 1
            if d >= 0 {
                let peak = truePeak(at: d)
                if peak > ceiling { needed = ceiling / peak }
            }
            pushMinimum(needed, index: d)
            let w = Double(minimumValues[minimumHead])
            released = w < released ? w : released + releaseCoefficient * (w - released)
            let a = n % lookahead
            averageSum += released - averaged[a]
            averaged[a] = released
            let gain = Float(averageSum / Double(lookahead))
            // Output sample o = d − (lookahead − 1) = n − latency.
            let o = n - latency
            for ch in 0..<channels {
                output[ch][i] = o >= 0 ? rings[ch][o & mask] * gain : 0
            }
        }
    }

    /// The largest absolute value of sample `d` and the three interpolated points after it, over all channels.
    @inline(__always)
    private func truePeak(at d: Int) -> Float {
        let k = Self.halfTaps
        let start = (d - k + 1) & mask
        var peak: Float = 0
        for ch in 0..<channels {
            let window = rings[ch] + start
            peak = max(peak, abs(window[k - 1]))
            for phase in phases {
                var sum: Float = 0
                phase.withUnsafeBufferPointer { h in
                    for j in 0..<(2 * k) { sum += window[j] * h[j] }
                }
                peak = max(peak, abs(sum))
            }
        }
        return peak
    }

    /// Adds the gain sample `index` needs to the running minimum over the last `lookahead` samples.
    @inline(__always)
    private func pushMinimum(_ value: Float, index: Int) {
        // Drop entries that left the window, then those no smaller than the new value.
        while minimumCount > 0, minimumIndices[minimumHead] <= index - lookahead {
            minimumHead = (minimumHead + 1) % lookahead
            minimumCount -= 1
        }
        while minimumCount > 0 {
            let last = (minimumHead + minimumCount - 1) % lookahead
            if minimumValues[last] >= value { minimumCount -= 1 } else { break }
        }
        let tail = (minimumHead + minimumCount) % lookahead
        minimumIndices[tail] = index
        minimumValues[tail] = value
        minimumCount += 1
    }
}
