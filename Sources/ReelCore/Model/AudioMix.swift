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
    public init(track: Int, volume: Double = 1, volumeRamps: [RampSpec<Double>] = []) {
        self.track = track; self.volume = volume; self.volumeRamps = volumeRamps
    }
}
