/// The timestamps of SubRip and WebVTT, read exactly as milliseconds.
enum SubtitleTime {
    /// SubRip's `HH:MM:SS,mmm` (any number of hour digits; `.` accepted for `,`).
    static func srt(_ text: Substring) -> Rational? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        return time(hours: parts[0], minutes: parts[1], secondsAndMillis: parts[2], separators: [",", "."])
    }

    /// WebVTT's `[HH:]MM:SS.mmm` (hours, when present, any number of digits).
    static func webVTT(_ text: Substring) -> Rational? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 2: return time(hours: nil, minutes: parts[0], secondsAndMillis: parts[1], separators: ["."])
        case 3: return time(hours: parts[0], minutes: parts[1], secondsAndMillis: parts[2], separators: ["."])
        default: return nil
        }
    }

    /// A SubRip timing line `start --> end` (anything after the end time, such as SubRip's
    /// `X1:… Y2:…` coordinates, is ignored).
    static func srtTiming(_ line: String) -> (start: Rational, end: Rational)? {
        timing(line, parse: srt)
    }

    /// A WebVTT timing line `start --> end [settings]`.
    static func webVTTTiming(_ line: String) -> (start: Rational, end: Rational)? {
        timing(line, parse: webVTT)
    }

    private static func timing(_ line: String, parse: (Substring) -> Rational?) -> (start: Rational, end: Rational)? {
        guard let arrow = line.range(of: "-->") else { return nil }
        let left = line[..<arrow.lowerBound].trimmingSpaces
        let right = line[arrow.upperBound...].trimmingSpaces
        let endToken = right.prefix { $0 != " " && $0 != "\t" }
        guard !left.isEmpty, !endToken.isEmpty, let start = parse(left), let end = parse(endToken) else { return nil }
        return (start, end)
    }

    private static func time(hours: Substring?, minutes: Substring, secondsAndMillis: Substring, separators: [Character]) -> Rational? {
        guard let separator = secondsAndMillis.firstIndex(where: { separators.contains($0) }) else { return nil }
        let seconds = secondsAndMillis[..<separator], millis = secondsAndMillis[secondsAndMillis.index(after: separator)...]
        guard let h = hours.map(digits) ?? 0, let m = digits(minutes), let s = digits(seconds), let ms = digits(millis),
              minutes.count == 2, seconds.count == 2, millis.count == 3, m < 60, s < 60 else { return nil }
        let total = (h * 3600 + m * 60 + s) * 1000 + ms
        guard h <= TimeDomain.maximumSeconds / 3600, total <= TimeDomain.maximumSeconds * 1000 else { return nil }
        return Rational(total, 1000)
    }

    /// The value of a run of ASCII digits (at most 12 of them), or nil.
    private static func digits(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 12, text.allSatisfy(\.isPlainDigit) else { return nil }
        return Int64(text)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        let s = self[...]
        let start = s.firstIndex { $0 != " " && $0 != "\t" } ?? s.endIndex
        let end = s.lastIndex { $0 != " " && $0 != "\t" }.map { s.index(after: $0) } ?? start
        return Substring(s[start..<Swift.max(start, end)])
    }
}
