/// Turns a cue's payload into the plain text a viewer reads, and WebVTT's inline timestamps
/// into `SubtitleTimeMark`s.
enum CueMarkup {
    /// SubRip styling that is dropped: `<b>`, `<i>`, `<u>`, `<s>`, `<font …>` (and their closing
    /// tags). Any other `<…>` is text (`a <b c` stays as written).
    private static let subRipTags: Set<String> = ["b", "i", "u", "s", "font"]

    /// SubRip text: the styling tags above and `{\…}` override blocks (`{\an8}`) removed.
    static func subRip(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            if c == "<", let close = scalars[(i + 1)...].firstIndex(of: ">") {
                var name = String(String.UnicodeScalarView(scalars[(i + 1)..<close]))
                if name.hasPrefix("/") { name.removeFirst() }
                name = String(name.prefix { $0.isLetter }).lowercased()
                if subRipTags.contains(name) { i = close + 1; continue }
            } else if c == "{", i + 1 < scalars.count, scalars[i + 1] == "\\", let close = scalars[(i + 1)...].firstIndex(of: "}") {
                i = close + 1
                continue
            }
            out.append(c)
            i += 1
        }
        return String(out)
    }

    /// WebVTT cue text: every tag removed (`<c.x>`, `<v Name>`, `<i>`, `<ruby>`, …), character
    /// references decoded, and each timestamp tag (`<00:01.500>`) made a mark at the scalar
    /// where it stood. `problem` hears of a timestamp tag that is not a valid time.
    static func webVTT(_ text: String, problem: (String) -> Void) -> (text: String, marks: [SubtitleTimeMark]) {
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var count = 0
        var marks: [SubtitleTimeMark] = []
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            if c == "<", let close = scalars[(i + 1)...].firstIndex(of: ">") {
                let inner = String(String.UnicodeScalarView(scalars[(i + 1)..<close]))
                if let first = inner.unicodeScalars.first, ("0"..."9").contains(first) {
                    if let time = SubtitleTime.webVTT(inner[...]) {
                        marks.append(SubtitleTimeMark(offset: count, time: time))
                    } else {
                        problem("<\(inner)> is not a timestamp [HH:]MM:SS.mmm")
                    }
                }
                i = close + 1
                continue
            }
            if c == "&", let (decoded, length) = reference(scalars, at: i) {
                out.append(decoded); count += 1
                i += length
                continue
            }
            out.append(c); count += 1
            i += 1
        }
        return (String(out), marks)
    }

    private static let namedReferences: [String: Unicode.Scalar] = [
        "amp": "&", "lt": "<", "gt": ">", "nbsp": "\u{00A0}", "lrm": "\u{200E}", "rlm": "\u{200F}", "quot": "\"", "apos": "'",
    ]

    /// The character reference starting at `i` (`&amp;`, `&#233;`, `&#xE9;`) and its length, or
    /// nil when there is none (the `&` is then text).
    private static func reference(_ scalars: [Unicode.Scalar], at i: Int) -> (Unicode.Scalar, Int)? {
        guard let semicolon = scalars[(i + 1)...].prefix(12).firstIndex(of: ";") else { return nil }
        let name = String(String.UnicodeScalarView(scalars[(i + 1)..<semicolon]))
        let length = semicolon - i + 1
        if let named = namedReferences[name] { return (named, length) }
        guard name.hasPrefix("#") else { return nil }
        let number = name.dropFirst()
        let value = number.first == "x" || number.first == "X" ? UInt32(number.dropFirst(), radix: 16) : UInt32(number, radix: 10)
        guard let value, value != 0, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, length)
    }
}
