extension PlannedAudioTrack {
    /// The track's volume at sample `n` of a stream at `sampleRate` (time `n / sampleRate`,
    /// exact): the base volume, or the ramp value there (AVFoundation ramp semantics).
    public func gain(atSample n: Int64, sampleRate: Int) -> Float {
        Float(volume(at: Rational(n, Int64(sampleRate))))
    }

    /// The track's volume at composition `time`.
    public func volume(at time: Rational) -> Double {
        RampedValue.value(at: time, base: volume, ramps: volumeRamps)
    }
}
