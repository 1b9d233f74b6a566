extension String {
    /// This text with every character that could act on a terminal or a log instead of being
    /// shown replaced by a visible `\u{XX}` escape (upper-case hex, Swift's own spelling).
    ///
    /// Names and other text that peers choose (`HELLO name=`, `CAPS host=`, a job's `name`, a
    /// `FAIL reason`) reach `reel status` and the coordinator's log. Printed raw, an ESC sequence
    /// could recolour, move the cursor or retitle an operator's terminal, a newline could forge
    /// a log line, and a bidi override could make text read differently from what it is. So
    /// every such site prints `text.escapingControlCharacters`. Escaped are: the C0 controls
    /// U+0000–U+001F (tab and newline included), DEL U+007F, the C1 controls U+0080–U+009F
    /// (U+009B is a one-byte CSI to some terminals), the line and paragraph separators
    /// U+2028/U+2029, and the Unicode bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E,
    /// U+2066–U+2069). Everything else — accents, CJK, emoji, a backslash — is unchanged, so
    /// ordinary names print as they are. (A backslash is not doubled: the escape is for display,
    /// not meant to be reversible, and a literal `\u{1B}` typed into a name is harmless text.)
    public var escapingControlCharacters: String {
        guard unicodeScalars.contains(where: \.needsEscaping) else { return self }
        var out = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if scalar.needsEscaping {
                out.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}

extension Unicode.Scalar {
    /// Whether `escapingControlCharacters` escapes this scalar.
    fileprivate var needsEscaping: Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: return true
        default: return properties.isBidiControl
        }
    }
}
