/// A parameter written either as a plain value or as an animation object (the keyframe form of
/// an overlay animation without `property`), such as a numeric filter parameter.
///
/// An animated parameter has no separate base value: before `begin` its first value holds,
/// and after its last repetition the value it stopped on.
public enum AnimatedValue<Value: Interpolatable>: Hashable, Sendable, Codable {
    case constant(Value)
    case animated(KeyframeAnimation<Value>)

    /// The value at composition time `time`.
    public func value(at time: Rational) -> Value {
        switch self {
        case .constant(let v): return v
        case .animated(let animation): return animation.value(at: time) ?? animation.values[0]
        }
    }

    /// Every value the parameter can take at a key (the constant, or each keyframe value): what
    /// a range check must cover. Interpolation stays between them unless the timing function
    /// overshoots (a Bézier with y1 or y2 outside 0…1).
    public var keyValues: [Value] {
        switch self {
        case .constant(let v): return [v]
        case .animated(let animation): return animation.values
        }
    }
}

/// A number that may be animated.
public typealias AnimatedNumber = AnimatedValue<Double>
