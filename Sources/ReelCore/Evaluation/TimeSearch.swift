/// Something that starts at `spanStart` in composition time: what the plan's sorted lists
/// (segments, instructions, ramps, overlay animations) are searched by.
public protocol TimeOrdered {
    var spanStart: Rational { get }
}

/// Something that occupies `[spanStart, spanEnd)` of composition time.
public protocol TimeSpanned: TimeOrdered {
    var spanEnd: Rational { get }
}

extension PlannedSegment: TimeSpanned {
    public var spanStart: Rational { at }
    public var spanEnd: Rational { end }
}

extension PlannedInstruction: TimeSpanned {
    public var spanStart: Rational { timeRange.start }
    public var spanEnd: Rational { timeRange.end }
}

extension Ramp: TimeSpanned {
    public var spanStart: Rational { start }
    public var spanEnd: Rational { end }
}

/// The one way the plan is searched by time: a binary search over a list sorted by start
/// (O(log n)), which first tries a hint — where the previous, earlier lookup landed — so
/// walking frames or samples forward costs O(1) per lookup.
///
/// The lists it serves are sorted by start and do not overlap (`RenderPlan`'s invariants), so
/// "the last element starting at or before t" is the only one that can contain t, and it is
/// what AVFoundation's ramp semantics ask for (the ramp that began last).
extension RandomAccessCollection where Element: TimeOrdered, Index == Int {
    /// The index of the last element whose start is ≤ `time` (nil when none is), for a list
    /// sorted by start. `hint` is a guess; any value (or nil) gives the same answer.
    public func lastIndex(startingAtOrBefore time: Rational, hint: Int? = nil) -> Int? {
        let lower = startIndex, upper = endIndex
        if let hint, hint >= lower, hint < upper, self[hint].spanStart <= time {
            // Walking forward: the answer is usually the hint or the element after it.
            if hint + 1 == upper || time < self[hint + 1].spanStart { return hint }
            if hint + 2 == upper || time < self[hint + 2].spanStart { return hint + 1 }
            return search(time, from: hint + 2, to: upper)
        }
        return search(time, from: lower, to: upper)
    }

    /// The last index in `[from, to)` with start ≤ `time`, given that every index before
    /// `from` qualifies (or `from` is the start); `from - 1` when none in the range does.
    private func search(_ time: Rational, from: Int, to: Int) -> Int? {
        var lo = from, hi = to  // the answer + 1 lies in [lo, hi]
        while lo < hi {
            let mid = lo + (hi - lo) / 2
            if self[mid].spanStart <= time { lo = mid + 1 } else { hi = mid }
        }
        return lo == startIndex ? nil : lo - 1
    }
}

extension RandomAccessCollection where Element: TimeSpanned, Index == Int {
    /// The index of the element whose `[start, end)` contains `time`, for a sorted list of
    /// non-overlapping spans, or nil in a gap.
    public func index(containing time: Rational, hint: Int? = nil) -> Int? {
        guard let i = lastIndex(startingAtOrBefore: time, hint: hint), time < self[i].spanEnd else { return nil }
        return i
    }
}
