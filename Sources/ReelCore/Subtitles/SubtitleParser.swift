/// Reads SubRip (`.srt`) and WebVTT (`.vtt`) files into `SubtitleDocument`s. Pure: the caller
/// reads the bytes.
///
/// Every problem is collected with its line and cue (up to `maximumProblems`), so one
/// validation run lists what to fix. What counts as malformed:
/// - bytes that are not UTF-8 (a leading byte-order mark is fine);
/// - SubRip: a block that starts with neither a cue number nor a timing line, a timing line that
///   is not `HH:MM:SS,mmm --> HH:MM:SS,mmm` (a `.` before the milliseconds is accepted, and a
///   missing cue number), a timing line inside a cue's text (a missing blank line);
/// - WebVTT: a first line other than `WEBVTT` (optionally followed by a space or tab and text), a
///   cue without a timing line `[HH:]MM:SS.mmm --> [HH:]MM:SS.mmm [settings]`, `-->` in a cue's
///   text, an inline timestamp that is not inside its cue or not after the one before it;
/// - in both: minutes or seconds above 59, a cue that does not end after it starts, a time
///   beyond `TimeDomain.maximumSeconds`.
/// Cues whose text is empty are dropped (they show nothing). `NOTE`, `STYLE` and `REGION`
/// blocks and cue settings are read past: captions take their placement from their style.
public enum SubtitleParser {
    /// At most this many problems are listed (a binary file given a `.srt` name would otherwise
    /// fill a screen).
    public static let maximumProblems = 20

    /// The format a file name's extension names, if any.
    public static func format(forFileName name: String) -> SubtitleDocument.Format? {
        let lower = name.lowercased()
        if lower.hasSuffix(".srt") { return .srt }
        if lower.hasSuffix(".vtt") { return .webVTT }
        return nil
    }

    /// The format a file's first bytes show, if they look like subtitles: `WEBVTT` first, or a
    /// SubRip cue (number, then a timing line; or a timing line first). For files stored without
    /// their name (the farm's storage names files by content hash).
    public static func sniff(_ bytes: [UInt8]) -> SubtitleDocument.Format? {
        let head = Array(bytes.prefix(4096))
        let lines = SourceLines(head).lines.filter { !$0.isBlank }.prefix(2)
        guard let first = lines.first else { return nil }
        if first.text.hasPrefix("WEBVTT"), isWebVTTSignature(first.text) { return .webVTT }
        if SubtitleTime.srtTiming(first.text) != nil { return .srt }
        if first.text.allSatisfy(\.isPlainDigit), lines.count == 2, SubtitleTime.srtTiming(lines.last!.text) != nil { return .srt }
        return nil
    }

    /// Parses `bytes` as `format`.
    public static func parse(_ bytes: [UInt8], format: SubtitleDocument.Format) -> Result<SubtitleDocument, SubtitleParseError> {
        var problems = ProblemList()
        let source = SourceLines(bytes)
        for line in source.undecodable { problems.add(line, nil, "is not UTF-8 text (save the file as UTF-8)") }
        let cues: [SubtitleCue]
        switch format {
        case .srt: cues = SubRipReader.read(source.lines, problems: &problems)
        case .webVTT: cues = WebVTTReader.read(source.lines, problems: &problems)
        }
        if !problems.list.isEmpty { return .failure(SubtitleParseError(problems: problems.finished)) }
        return .success(SubtitleDocument(format: format, cues: cues))
    }

    static func isWebVTTSignature(_ line: String) -> Bool {
        guard line.hasPrefix("WEBVTT") else { return false }
        let rest = line.unicodeScalars.dropFirst(6)
        return rest.isEmpty || rest.first == " " || rest.first == "\t"
    }
}

/// The problems found so far, capped at `SubtitleParser.maximumProblems`.
struct ProblemList {
    private(set) var list: [SubtitleProblem] = []
    private var dropped = 0

    mutating func add(_ line: Int, _ cue: Int?, _ message: String) {
        if list.count < SubtitleParser.maximumProblems { list.append(SubtitleProblem(line: line, cue: cue, message: message)) }
        else { dropped += 1 }
    }

    /// The problems in line order, with a last entry counting the ones left out.
    var finished: [SubtitleProblem] {
        var out = list.sorted { ($0.line, $0.cue ?? 0) < ($1.line, $1.cue ?? 0) }
        if dropped > 0, let last = out.last {
            out.append(SubtitleProblem(line: last.line, cue: nil, message: "and \(dropped) more problems"))
        }
        return out
    }
}

/// A file's lines (ended by `\n`, `\r\n` or `\r`), numbered from 1, each decoded as UTF-8.
struct SourceLines {
    struct Line {
        var number: Int
        var text: String
        var isBlank: Bool { text.allSatisfy { $0 == " " || $0 == "\t" } }
    }

    var lines: [Line] = []
    /// Numbers of the lines that are not UTF-8 (they are left out of `lines`).
    var undecodable: [Int] = []

    init(_ bytes: [UInt8]) {
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        var number = 1
        var start = body.startIndex
        var i = body.startIndex
        func finish(_ end: Int) {
            if let text = String(validating: body[start..<end], as: UTF8.self) {
                lines.append(Line(number: number, text: text))
            } else {
                undecodable.append(number)
            }
            number += 1
        }
        while i < body.endIndex {
            switch body[i] {
            case UInt8(ascii: "\n"):
                finish(i); i += 1; start = i
            case UInt8(ascii: "\r"):
                finish(i); i += 1
                if i < body.endIndex, body[i] == UInt8(ascii: "\n") { i += 1 }
                start = i
            default:
                i += 1
            }
        }
        if start < body.endIndex { finish(body.endIndex) }
    }
}

/// Splits lines into blocks separated by blank lines.
func subtitleBlocks(_ lines: [SourceLines.Line]) -> [ArraySlice<SourceLines.Line>] {
    var blocks: [ArraySlice<SourceLines.Line>] = []
    var i = 0
    while i < lines.count {
        while i < lines.count, lines[i].isBlank { i += 1 }
        guard i < lines.count else { break }
        var j = i
        while j < lines.count, !lines[j].isBlank { j += 1 }
        blocks.append(lines[i..<j])
        i = j
    }
    return blocks
}
