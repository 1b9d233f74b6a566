/// A half-open range of time `[start, start + duration)`, exact (like `CMTimeRange`).
///
/// The model does not force `duration > 0`: a composition may state a bad range, and the
/// validator reports it with its JSON path instead of the parser refusing to represent it.
public struct TimeRange: Hashable, Sendable, Codable, CustomStringConvertible {
    public var start: Rational
    public var duration: Rational

    public init(start: Rational, duration: Rational) {
        self.start = start; self.duration = duration
    }

    /// `start + duration` (exclusive).
    public var end: Rational { start + duration }

    /// Whether `time` lies in `[start, end)`.
    public func contains(_ time: Rational) -> Bool { time >= start && time < end }

    /// Whether the two ranges share any instant (touching ends do not overlap).
    public func overlaps(_ other: TimeRange) -> Bool { start < other.end && other.start < end }

    public var description: String { "[\(start), \(end))" }
}
