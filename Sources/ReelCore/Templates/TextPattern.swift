/// A text variable's `pattern`: a regular expression (Swift `Regex` syntax, which reads the
/// usual Perl/ECMAScript forms: `[A-Z]`, `\d{3}`, `(a|b)+`, `^…$`) that must match the
/// **whole** value.
enum TextPattern {
    /// Why `pattern` is not a usable regular expression, or nil when it is.
    static func problem(compiling pattern: String) -> String? {
        do {
            _ = try Regex(pattern)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Whether the whole of `text` matches `pattern` (false when `pattern` does not compile:
    /// declarations are checked before any value is).
    static func matches(_ text: String, pattern: String) -> Bool {
        guard let regex = try? Regex(pattern) else { return false }
        return (try? regex.wholeMatch(in: text)) != nil
    }
}
