/// A subtitle file (SubRip `.srt` or WebVTT `.vtt`) as Reel uses it: its cues, in file order,
/// with exact times (both formats write milliseconds, so every time is `n/1000` s).
///
/// Markup is gone from the text: SubRip's `<i>`/`<b>`/`<u>`/`<font>` tags and `{\…}` override
/// blocks, WebVTT's tags (`<c>`, `<v Name>`, `<i>`, …) and cue settings. WebVTT's character
/// references are decoded. What remains is what a viewer reads, lines joined by `"\n"`.
public struct SubtitleDocument: Hashable, Sendable, Codable {
    public enum Format: String, Hashable, Sendable, Codable {
        case srt
        case webVTT
    }

    public var format: Format
    public var cues: [SubtitleCue]

    public init(format: Format, cues: [SubtitleCue]) {
        self.format = format; self.cues = cues
    }

    /// The end of the last cue: how long the file lasts when it is placed whole.
    public var end: Rational { cues.map(\.end).max() ?? .zero }
}

/// One cue: text shown during `[start, end)`.
///
/// Invariant (the parsers guarantee it): `start < end`; `marks` are sorted by offset and by
/// time, each time inside the cue.
public struct SubtitleCue: Hashable, Sendable, Codable {
    public var start: Rational
    public var end: Rational
    /// Plain text, lines joined by `"\n"`.
    public var text: String
    /// WebVTT's inline timestamps (`<00:00:01.500>`): the text from `offset` on belongs to
    /// `time` (karaoke). Text before the first mark belongs to the cue's start.
    public var marks: [SubtitleTimeMark]

    public init(start: Rational, end: Rational, text: String, marks: [SubtitleTimeMark] = []) {
        self.start = start; self.end = end; self.text = text; self.marks = marks
    }

    public var timeRange: TimeRange { TimeRange(start: start, duration: end - start) }

    /// How many Unicode scalars of `text` belong to times at or before `time`: the text a
    /// highlight has reached (all of it when the cue has no marks).
    public func reachedScalars(at time: Rational) -> Int {
        for mark in marks where mark.time > time { return mark.offset }
        return text.unicodeScalars.count
    }
}

/// An inline timestamp: from scalar `offset` of the cue's text on, the words belong to `time`.
public struct SubtitleTimeMark: Hashable, Sendable, Codable {
    /// Unicode scalars of the cue's `text` before the mark.
    public var offset: Int
    public var time: Rational

    public init(offset: Int, time: Rational) {
        self.offset = offset; self.time = time
    }
}

/// One thing wrong with a subtitle file: the 1-based line, and the cue it belongs to (its
/// 1-based position among the file's cues), when it belongs to one.
public struct SubtitleProblem: Hashable, Sendable, CustomStringConvertible {
    public var line: Int
    public var cue: Int?
    public var message: String

    public init(line: Int, cue: Int?, message: String) {
        self.line = line; self.cue = cue; self.message = message
    }

    /// `line 7 (cue 2): …`.
    public var description: String {
        cue.map { "line \(line) (cue \($0)): \(message)" } ?? "line \(line): \(message)"
    }
}

/// Every problem found in a subtitle file (never empty).
public struct SubtitleParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public var problems: [SubtitleProblem]
    public init(problems: [SubtitleProblem]) { self.problems = problems }
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
