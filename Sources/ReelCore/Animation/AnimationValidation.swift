extension KeyframeAnimation {
    /// Every problem with this animation as written at JSON path `path` (the animation
    /// object): the invariants of `KeyframeAnimation`. Value ranges (an opacity in 0…1, say) are
    /// the caller's to check, at `valuePath(_:in:)`.
    public func problems(at path: String) -> [Problem] {
        var problems: [Problem] = []
        func report(_ key: String, _ message: String) { problems.append(Problem(path: "\(path).\(key)", message: message)) }

        if values.count < 2 { report("values", "needs at least 2 values, not \(values.count)") }
        if duration <= .zero { report("duration", "must be > 0") }
        if begin < .zero { report("begin", "must be ≥ 0") }
        if case .count(let n) = repeatCount, n <= .zero || n > AnimationRepeat.maximumCount {
            report("repeat", "must be true, false or a count > 0 and at most \(AnimationRepeat.maximumCount) (\(n) given)")
        }
        if case .cubicBezier(let x1, _, let x2, _) = timingFunction, !(0...1).contains(x1) || !(0...1).contains(x2) {
            report("timingFunction.controlPoints", "x1 and x2 (the 1st and 3rd numbers) must lie in 0…1, as CAMediaTimingFunction requires")
        }
        if let keyTimes {
            if keyTimes.count != values.count {
                report("keyTimes", "has \(keyTimes.count) entries but there are \(values.count) values: give one key time per value")
            } else if let first = keyTimes.first, let last = keyTimes.last, first != .zero || last != .one {
                report("keyTimes", "must start at 0 and end at 1 (fractions of the duration)")
            }
            for (i, k) in keyTimes.enumerated() {
                if let problem = TimeDomain.problem(with: k) { report("keyTimes[\(i)]", problem) }
                else if k < .zero || k > .one { report("keyTimes[\(i)]", "must lie in 0…1") }
                else if i > 0, k < keyTimes[i - 1] { report("keyTimes[\(i)]", "must be ≥ keyTimes[\(i - 1)]: key times never go back") }
            }
        }
        return problems
    }

    /// The JSON path of value `i` of the animation at `path`: `from`/`to` or `values[i]`, as written.
    public func valuePath(_ i: Int, in path: String) -> String {
        writtenAsFromTo ? "\(path).\(i == 0 ? "from" : "to")" : "\(path).values[\(i)]"
    }

    /// The times this animation writes, for the composition's exact time domain.
    public func writtenTimes(at path: String) -> [(path: String, time: Rational)] {
        [("\(path).begin", begin), ("\(path).duration", duration)]
    }
}

extension AnimatedValue {
    /// The problems of the animation, if animated (see `KeyframeAnimation.problems(at:)`).
    public func problems(at path: String) -> [Problem] {
        if case .animated(let animation) = self { return animation.problems(at: path) }
        return []
    }

    /// Each key value with its JSON path, for range checks: the constant at `path` itself, or
    /// each keyframe value at `from`/`to`/`values[i]`.
    public func keyValues(at path: String) -> [(path: String, value: Value)] {
        switch self {
        case .constant(let v): return [(path, v)]
        case .animated(let a): return a.values.indices.map { (a.valuePath($0, in: path), a.values[$0]) }
        }
    }

    /// The times the animation writes (none for a constant).
    public func writtenTimes(at path: String) -> [(path: String, time: Rational)] {
        if case .animated(let animation) = self { return animation.writtenTimes(at: path) }
        return []
    }
}
