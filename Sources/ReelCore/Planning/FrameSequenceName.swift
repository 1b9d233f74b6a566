/// The output name of a PNG sequence: a path whose file name holds one printf-style integer
/// field, `%d` or `%0Nd` (N from 1 to 9), such as `frames/frame-%05d.png`. Frame `k` of the
/// plan (from 0) is written as file number `k + 1`: the field is replaced by `k + 1`, padded
/// with zeros to N digits (never cut: frame 100000 of `%05d` is `100000`).
///
/// Pure parsing, no I/O: `reel render` checks the name before rendering, the finaliser names
/// the files with it.
public struct FrameSequenceName: Hashable, Sendable {
    /// The folder the files go in (`"."` when the name has none).
    public var directory: String
    /// The file name before and after the number field.
    public var prefix: String, suffix: String
    /// Zero-padded width of the number (1 for `%d`).
    public var digits: Int

    /// Parses `path`; nil when its file name has no number field, more than one, or another
    /// `%` (say `%s` or `%%`).
    public init?(_ path: String) {
        let slash = path.lastIndex(of: "/")
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let parts = name.split(separator: "%", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        prefix = String(parts[0])
        var rest = Substring(parts[1])
        var width = 1
        if rest.first == "0" {
            rest = rest.dropFirst()
            guard let d = rest.first, let n = d.wholeNumberValue, (1...9).contains(n) else { return nil }
            width = n
            rest = rest.dropFirst()
        }
        guard rest.first == "d" else { return nil }
        digits = width
        suffix = String(rest.dropFirst())
        guard !prefix.isEmpty || !suffix.isEmpty else { return nil }
    }

    /// The file name (no folder) of frame `number` (from 1).
    public func fileName(number: Int) -> String {
        let text = String(number)
        return prefix + String(repeating: "0", count: max(0, digits - text.count)) + text + suffix
    }

    /// The path of frame `number` (from 1).
    public func path(number: Int) -> String {
        (directory == "/" ? "/" : directory + "/") + fileName(number: number)
    }

    /// The number of the frame file `fileName` (from 1), if this name's pattern made it: the
    /// prefix, at least `digits` decimal digits, the suffix.
    public func number(ofFileName fileName: String) -> Int? {
        guard fileName.hasPrefix(prefix), fileName.hasSuffix(suffix), fileName.count > prefix.count + suffix.count else { return nil }
        let field = fileName.dropFirst(prefix.count).dropLast(suffix.count)
        guard field.count >= digits, field.count <= 18, field.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(field), n >= 1,
              fileName == self.fileName(number: n) else { return nil }
        return n
    }

    /// The names of the frame files in a PNG sequence job's output archive
    /// (proto/PROTOCOL.md §4.7), whatever name the client writes them under.
    public static let archive = FrameSequenceName("frame-%05d.png")!

    /// The example given in messages: `DIR/frame-%05d.png`.
    public static let example = "DIR/frame-%05d.png"
}
