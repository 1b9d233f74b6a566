/// Greedy line breaking for left-aligned text in a box, independent of FreeType so the rules
/// are easy to read: break after spaces, before and after CJK ideographs (which are written
/// without spaces), at explicit newlines, and inside a word only when the word alone is wider
/// than the box.
enum TextLayout {
    /// One positioned character: `x` in 26.6 fixed point from the line start.
    struct Placed {
        var scalar: Unicode.Scalar
        var x: Int
    }

    /// Lays out `text`; `advance` gives a scalar's advance in 26.6 units, `maxWidth` is in pixels.
    static func lines(_ text: String, maxWidth: Int, advance: (Unicode.Scalar) throws -> Int) rethrows -> [[Placed]] {
        let limit = maxWidth * 64
        var lines: [[Placed]] = []
        let paragraphs = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        for paragraph in paragraphs {
            var line: [Placed] = [], pen = 0
            var pendingSpaces: [(Unicode.Scalar, Int)] = []
            func flush() {
                lines.append(line); line = []; pen = 0; pendingSpaces = []
            }
            for token in tokens(Array(paragraph.filter { $0 != "\r" })) {
                if token.first.map(isSpace) == true {
                    // Spaces only matter if something follows them on the same line.
                    for s in token { pendingSpaces.append((s, try advance(s))) }
                    continue
                }
                let widths = try token.map(advance)
                let spaceWidth = pendingSpaces.reduce(0) { $0 + $1.1 }
                let wordWidth = widths.reduce(0, +)
                if !line.isEmpty && pen + spaceWidth + wordWidth > limit {
                    flush()
                }
                if !line.isEmpty {
                    for (s, w) in pendingSpaces { line.append(Placed(scalar: s, x: pen)); pen += w }
                }
                pendingSpaces = []
                for (s, w) in zip(token, widths) {
                    // A word wider than the box breaks wherever it must.
                    if !line.isEmpty && pen + w > limit { flush() }
                    line.append(Placed(scalar: s, x: pen)); pen += w
                }
            }
            flush()
        }
        return lines
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
