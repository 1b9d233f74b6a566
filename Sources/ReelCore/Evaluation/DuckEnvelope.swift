import Foundation

/// The gain of a ducked track (`audioMix[].duck`) on the sample grid of an output stream,
/// computed from the levels of the tracks it ducks under.
///
/// The timeline is cut into windows of `windowSamples` samples (10 ms), window `k` holding
/// samples `[k·W, (k+1)·W)` from sample 0. An `under` track *sounds* in a window when its mean
/// square there (over every sample of every channel, as heard: after its own volume curve) is
/// at or above the threshold's power, `10^(threshold/10)`. While any `under` track sounds the
/// target is `−amount` dB, otherwise 0 dB.
///
/// The gain, in dB, is fixed at each window boundary: it starts at 0 dB, and across window `k`
/// it moves towards that window's target at `amount / attack` dB per second going down and
/// `amount / release` going up (in one step when the time is 0), never past the target. So a
/// dip starts with the window in which the voice starts, reaches `−amount` after `attack`, and
/// comes back over `release` once the voice stops. Within a window the linear gain is
/// interpolated between its two boundaries.
///
/// Every sample's gain depends only on its index and the whole tracks' levels, never on how the
/// mix is cut into blocks or chunks: renders and re-renders give the same samples.
public struct DuckEnvelope: Sendable, Equatable {
    /// Samples per window.
    public let windowSamples: Int
    /// The linear gain at each window boundary `k·windowSamples`; one more than the windows.
    public let gains: [Float]

    /// 10 ms at `sampleRate` (at least one sample).
    public static func windowSamples(sampleRate: Int) -> Int { max(1, sampleRate / 100) }

    /// - Parameters:
    ///   - levels: for each `under` track, its mean square in each window (all the same length).
    public init(_ duck: Ducking, levels: [[Double]], sampleRate: Int) {
        let window = Self.windowSamples(sampleRate: sampleRate)
        let windows = levels.map(\.count).max() ?? 0
        let threshold = pow(10, duck.threshold / 10)
        let seconds = Double(window) / Double(sampleRate)
        var gains: [Float] = []
        gains.reserveCapacity(windows + 1)
        var decibels = 0.0
        gains.append(1)
        for k in 0..<windows {
            let sounding = levels.contains { k < $0.count && $0[k] >= threshold }
            decibels = Self.step(decibels, toward: sounding ? -duck.amount : 0, over: seconds, duck)
            gains.append(Float(pow(10, decibels / 20)))
        }
        self.windowSamples = window
        self.gains = gains
    }

    /// The gain `seconds` later, moving from `decibels` towards `target` at the duck's rates.
    static func step(_ decibels: Double, toward target: Double, over seconds: Double, _ duck: Ducking) -> Double {
        if target < decibels {
            return duck.attack == 0 ? target : max(target, decibels - duck.amount * seconds / duck.attack)
        }
        if target > decibels {
            return duck.release == 0 ? target : min(target, decibels + duck.amount * seconds / duck.release)
        }
        return decibels
    }

    /// The gain at sample `n` (the first boundary's before the timeline, the last one's after it).
    @inline(__always) public func gain(atSample n: Int64) -> Float {
        let w = Int64(windowSamples)
        guard n > 0 else { return gains[0] }
        let k = Int(n / w)
        guard k + 1 < gains.count else { return gains[gains.count - 1] }
        let a = gains[k], b = gains[k + 1]
        if a == b { return a }
        return a + (b - a) * Float(n - Int64(k) * w) / Float(w)
    }
}
