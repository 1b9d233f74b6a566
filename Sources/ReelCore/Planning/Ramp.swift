/// A linear change of a value over `[start, start + duration)` of composition time, resolved
/// for rendering (AVFoundation ramp semantics; see `RampedValue`).
public struct Ramp<V: Hashable & Sendable & Codable>: Hashable, Sendable, Codable {
    public var from: V
    public var to: V
    public var start: Rational
    /// > 0.
    public var duration: Rational

    public init(from: V, to: V, start: Rational, duration: Rational) {
        self.from = from; self.to = to; self.start = start; self.duration = duration
    }

    public var end: Rational { start + duration }
}
