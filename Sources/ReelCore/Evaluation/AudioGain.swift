extension PlannedAudioTrack {
    /// The track's volume at sample `n` of a stream at `sampleRate` (time `n / sampleRate`,
    /// exact): the base volume, or the ramp value there (AVFoundation ramp semantics).
    public func gain(atSample n: Int64, sampleRate: Int) -> Float {
        Float(volume(at: Rational(n, Int64(sampleRate))))
    }

    /// The track's volume at composition `time`.
    public func volume(at time: Rational) -> Double {
        Ramp.evaluate(volumeRamps, base: volume, at: time)
    }
}

/// A track's volume on the sample grid of an output stream, as pieces over which the gain is
/// linear in the sample index: the mixer scales whole runs of samples with it instead of
/// evaluating the ramps at every sample.
///
/// Sample `n` is time `n / sampleRate`. A ramp covers the samples whose time lies in
/// `[start, end)` — `[⌈start·rate⌉, ⌈end·rate⌉)`, computed exactly — and its piece's gain at
/// sample `n` is `value + slope·(n − first)`, where `value` is the ramp's exact value at its
/// first sample and `slope` its change per sample; between ramps the gain is constant (the base
/// volume before the first ramp, a ramp's `to` after it). Each piece's gain depends only on `n`,
/// never on where a block of the mix starts, so any block split gives the same samples. Within
/// a ramp it differs from `volume(at:)` only by `Double` rounding.
public struct SampleGainCurve: Sendable {
    public struct Piece: Sendable, Equatable {
        /// Output samples `[start, end)`; not empty.
        public var start: Int64
        public var end: Int64
        /// The gain at `start`.
        public var value: Double
        /// Gain change per sample (0: constant).
        public var slope: Double

        /// The gain at sample `n` of the piece.
        @inline(__always) public func gain(atSample n: Int64) -> Float {
            slope == 0 ? Float(value) : Float(value + slope * Double(n - start))
        }
    }

    /// Sorted, tiling all sample indices (`Int64.min` to `Int64.max`).
    public let pieces: [Piece]

    public init(_ track: PlannedAudioTrack, sampleRate: Int) {
        let perSample = Rational(1, Int64(sampleRate))
        var pieces: [Piece] = []
        var level = track.volume, from = Int64.min
        func hold(until end: Int64) {
            if end > from { pieces.append(Piece(start: from, end: end, value: level, slope: 0)) }
        }
        for ramp in track.volumeRamps {
            let first = ramp.start.ceilDiv(perSample), end = ramp.end.ceilDiv(perSample)
            hold(until: first)
            if end > first {
                let fraction = ((Rational(first, Int64(sampleRate)) - ramp.start) / ramp.duration).seconds
                pieces.append(Piece(start: first, end: end, value: ramp.from + (ramp.to - ramp.from) * fraction,
                                    slope: (ramp.to - ramp.from) * (perSample / ramp.duration).seconds))
            }
            level = ramp.to
            from = max(from, end)
        }
        hold(until: .max)
        self.pieces = pieces
    }

    /// The index of the piece holding sample `n` (binary search).
    public func pieceIndex(containing n: Int64) -> Int {
        var lo = 0, hi = pieces.count - 1  // pieces[lo].start ≤ n always holds
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if pieces[mid].start <= n { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }
}
