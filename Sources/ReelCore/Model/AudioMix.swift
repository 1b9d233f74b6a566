/// A linear change of a value over a composition time range (AVFoundation's
/// `setVolumeRamp`/`setOpacityRamp`/`setTransformRamp`), as written in the file.
public struct RampSpec<Value: Hashable & Sendable & Codable>: Hashable, Sendable, Codable {
    public var from: Value
    public var to: Value
    /// Composition time range of the ramp; `duration` must be > 0.
    public var timeRange: TimeRange
    public init(from: Value, to: Value, timeRange: TimeRange) {
        self.from = from; self.to = to; self.timeRange = timeRange
    }
}

/// `AVMutableAudioMixInputParameters` for one audio track.
public struct AudioMixParameters: Hashable, Sendable, Codable {
    /// Id of an audio track.
    public var track: Int
    /// Base volume (default 1), held outside ramps until the first ramp starts.
    public var volume: Double
    /// Non-overlapping volume ramps, in composition time.
    public var volumeRamps: [RampSpec<Double>]
    /// How the track's speed-changed segments are stretched (default `.spectral`).
    public var audioTimePitchAlgorithm: AudioTimePitchAlgorithm
    /// Whether the track dips under other tracks (`duck`), or nil.
    public var duck: Ducking?
    public init(track: Int, volume: Double = 1, volumeRamps: [RampSpec<Double>] = [],
                audioTimePitchAlgorithm: AudioTimePitchAlgorithm = .spectral, duck: Ducking? = nil) {
        self.track = track; self.volume = volume; self.volumeRamps = volumeRamps
        self.audioTimePitchAlgorithm = audioTimePitchAlgorithm
        self.duck = duck
    }

    /// Parameters stored before speed changes have no algorithm: the default.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        track = try c.decode(Int.self, forKey: .track)
        volume = try c.decode(Double.self, forKey: .volume)
        volumeRamps = try c.decode([RampSpec<Double>].self, forKey: .volumeRamps)
        audioTimePitchAlgorithm = try c.decodeIfPresent(AudioTimePitchAlgorithm.self, forKey: .audioTimePitchAlgorithm) ?? .spectral
        duck = try c.decodeIfPresent(Ducking.self, forKey: .duck)
    }
}

/// Ducking (`audioMix[].duck`): the track's gain falls by `amount` decibels while any of the
/// `under` tracks is louder than `threshold`, reaching the full dip in `attack` seconds and
/// coming back in `release` seconds. Levels are measured on the `under` tracks as they are
/// heard (after their own volume curves, before their own ducking), in 10 ms windows; see
/// `DuckEnvelope`.
public struct Ducking: Hashable, Sendable, Codable {
    /// Ids of the audio tracks whose sound makes this one dip.
    public var under: [Int]
    /// How far the gain falls, in dB (positive: 12 means 12 dB quieter).
    public var amount: Double
    /// The level, in dBFS (RMS over a window), above which an `under` track counts as sounding.
    public var threshold: Double
    /// Seconds from no dip to the full dip.
    public var attack: Double
    /// Seconds from the full dip back to no dip.
    public var release: Double

    public static let defaultAmount = 12.0, defaultThreshold = -40.0, defaultAttack = 0.1, defaultRelease = 0.5

    public init(under: [Int], amount: Double = defaultAmount, threshold: Double = defaultThreshold,
                attack: Double = defaultAttack, release: Double = defaultRelease) {
        self.under = under; self.amount = amount; self.threshold = threshold
        self.attack = attack; self.release = release
    }
}

/// How an audio segment that plays at another speed (`scaleTimeRange`) is stretched
/// (AVFoundation's `audioTimePitchAlgorithm`).
public enum AudioTimePitchAlgorithm: String, Hashable, Sendable, Codable, CaseIterable {
    /// Time-stretched, pitch kept (Rubber Band's phase vocoder).
    case spectral
    /// Resampled: the pitch follows the speed, as a tape played faster or slower.
    case varispeed
}
