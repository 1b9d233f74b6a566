/// Greedy line breaking for text in a box, independent of FreeType so the rules are easy to
/// read: break after spaces, before and after CJK ideographs (which are written without spaces),
/// at explicit newlines, and inside a word only when the word alone is wider than the box.
/// Works on logical order and widths; the shaper measures and the bidi algorithm reorders.
enum TextLayout {
    /// One positioned character: `x` in 26.6 fixed point from the line start.
    struct Placed {
        var scalar: Unicode.Scalar
        var x: Int
    }

    /// The paragraphs of `text` (split at "\n", carriage returns dropped), each as scalars.
    static func paragraphs(_ text: String) -> [[Unicode.Scalar]] {
        text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { Array($0.filter { $0 != "\r" }) }
    }

    /// Lays `text` out left to right; `advance` gives a scalar's advance in 26.6 units,
    /// `maxWidth` is in pixels.
    static func lines(_ text: String, maxWidth: Int, advance: (Unicode.Scalar) throws -> Int) rethrows -> [[Placed]] {
        var lines: [[Placed]] = []
        for paragraph in paragraphs(text) {
            let widths = try paragraph.map(advance)
            for range in breakParagraph(paragraph, widths: widths, maxWidth: maxWidth) {
                var pen = 0
                lines.append(range.map { i in defer { pen += widths[i] }; return Placed(scalar: paragraph[i], x: pen) })
            }
        }
        return lines
    }

    /// Breaks one paragraph into lines: ranges of logical indices, spaces at the start and end
    /// of a line left out. `widths[i]` is the 26.6 advance of scalar `i` (0 for a scalar that
    /// continues the previous one's glyph cluster, which is never split from it).
    static func breakParagraph(_ scalars: [Unicode.Scalar], widths: [Int], maxWidth: Int) -> [Range<Int>] {
        precondition(widths.count == scalars.count, "one width per scalar")
        let limit = maxWidth * 64
        var lines: [Range<Int>] = []
        var start: Int? = nil, end = 0, pen = 0, pendingSpaceWidth = 0
        func flush() {
            lines.append(start.map { $0..<end } ?? end..<end)
            start = nil; pen = 0; pendingSpaceWidth = 0
        }
        for token in tokenRanges(scalars) {
            if isSpace(scalars[token.lowerBound]) {
                // Spaces only matter if something follows them on the same line.
                pendingSpaceWidth += widths[token].reduce(0, +)
                continue
            }
            let wordWidth = widths[token].reduce(0, +)
            if start != nil && pen + pendingSpaceWidth + wordWidth > limit { flush() }
            if start != nil { pen += pendingSpaceWidth }
            pendingSpaceWidth = 0
            for i in token {
                // A word wider than the box breaks wherever it must (but not inside a cluster).
                if start != nil && widths[i] > 0 && pen + widths[i] > limit { flush() }
                if start == nil { start = i }
                end = i + 1
                pen += widths[i]
            }
        }
        flush()
        return lines
    }

    /// `tokens` as index ranges.
    static func tokenRanges(_ scalars: [Unicode.Scalar]) -> [Range<Int>] {
        var out: [Range<Int>] = [], lower = 0
        for token in tokens(scalars) { out.append(lower..<(lower + token.count)); lower += token.count }
        return out
    }

    /// Splits into runs of spaces, single ideographs, and runs of everything else.
    static func tokens(_ scalars: [Unicode.Scalar]) -> [[Unicode.Scalar]] {
        var out: [[Unicode.Scalar]] = [], current: [Unicode.Scalar] = []
        for s in scalars {
            if isBreakableIdeograph(s) {
                if !current.isEmpty { out.append(current); current = [] }
                out.append([s])
            } else if let last = current.last, isSpace(last) != isSpace(s) {
                out.append(current); current = [s]
            } else {
                current.append(s)
            }
        }
        if !current.isEmpty { out.append(current) }
        return out
    }

    static func isSpace(_ s: Unicode.Scalar) -> Bool { s == " " || s == "\t" || s == "\u{3000}" }

    /// Scripts written without spaces where a line may break between any two characters:
    /// CJK ideographs, kana, Hangul syllables, and CJK punctuation / full-width forms.
    static func isBreakableIdeograph(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x2E80...0x2FDF, 0x3001...0x303F, 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xAC00...0xD7AF, 0xF900...0xFAFF, 0xFF00...0xFFEF, 0x20000...0x3FFFF:
            return true
        default:
            return false
        }
    }
}
