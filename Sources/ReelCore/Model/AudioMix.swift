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
    public init(track: Int, volume: Double = 1, volumeRamps: [RampSpec<Double>] = [],
                audioTimePitchAlgorithm: AudioTimePitchAlgorithm = .spectral) {
        self.track = track; self.volume = volume; self.volumeRamps = volumeRamps
        self.audioTimePitchAlgorithm = audioTimePitchAlgorithm
    }

    /// Parameters stored before speed changes have no algorithm: the default.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        track = try c.decode(Int.self, forKey: .track)
        volume = try c.decode(Double.self, forKey: .volume)
        volumeRamps = try c.decode([RampSpec<Double>].self, forKey: .volumeRamps)
        audioTimePitchAlgorithm = try c.decodeIfPresent(AudioTimePitchAlgorithm.self, forKey: .audioTimePitchAlgorithm) ?? .spectral
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
