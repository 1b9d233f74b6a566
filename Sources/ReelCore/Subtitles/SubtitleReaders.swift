/// SubRip: blocks separated by blank lines, each a cue number, a timing line
/// `HH:MM:SS,mmm --> HH:MM:SS,mmm`, and the text lines.
enum SubRipReader {
    static func read(_ lines: [SourceLines.Line], problems: inout ProblemList) -> [SubtitleCue] {
        var cues: [SubtitleCue] = []
        for (index, block) in subtitleBlocks(lines).enumerated() {
            let ordinal = index + 1
            var k = block.startIndex
            let first = block[k]
            let head = first.text.trimmingSpaces
            if !head.isEmpty, head.allSatisfy(\.isPlainDigit) {
                k += 1
            } else if !first.text.contains("-->") {
                problems.add(first.number, ordinal, "expected a cue number or a timing line \"HH:MM:SS,mmm --> HH:MM:SS,mmm\", found \"\(excerpt(first.text))\"")
                continue
            }
            guard k < block.endIndex else {
                problems.add(first.number, ordinal, "cue number \(head) is not followed by a timing line \"HH:MM:SS,mmm --> HH:MM:SS,mmm\"")
                continue
            }
            guard let (start, end) = cueTiming(block[k], ordinal, form: "HH:MM:SS,mmm --> HH:MM:SS,mmm",
                                               parse: SubtitleTime.srtTiming, problems: &problems) else { continue }
            let body = block[(k + 1)...]
            if let stray = body.first(where: { SubtitleTime.srtTiming($0.text) != nil }) {
                problems.add(stray.number, ordinal, "a timing line inside the cue's text: separate cues with a blank line")
                continue
            }
            let text = CueMarkup.subRip(body.map { String($0.text.trimmingSpaces) }.joined(separator: "\n"))
                .split(separator: "\n", omittingEmptySubsequences: false).map { String($0.trimmingSpaces) }
                .joined(separator: "\n")
            if text.isEmpty { continue }
            cues.append(SubtitleCue(start: start, end: end, text: text))
        }
        return cues
    }
}

/// WebVTT (W3C): a `WEBVTT` signature line and header, then blocks separated by blank lines:
/// `NOTE`, `STYLE` and `REGION` blocks (skipped) and cues — an optional identifier line, a
/// timing line `start --> end [settings]`, and the payload.
enum WebVTTReader {
    static func read(_ lines: [SourceLines.Line], problems: inout ProblemList) -> [SubtitleCue] {
        guard let first = lines.first, first.number == 1, SubtitleParser.isWebVTTSignature(first.text) else {
            let found = lines.first.map { "\"\(excerpt($0.text))\"" } ?? "nothing"
            problems.add(1, nil, "a WebVTT file starts with the line WEBVTT, found \(found)")
            return []
        }
        var cues: [SubtitleCue] = []
        var ordinal = 0
        // The first block is the signature and header.
        for block in subtitleBlocks(lines).dropFirst() {
            let head = block[block.startIndex].text
            if isKeywordBlock(head, "NOTE") || (isKeywordBlock(head, "STYLE") || isKeywordBlock(head, "REGION")) && !head.contains("-->") {
                continue
            }
            ordinal += 1
            var k = block.startIndex
            if !head.contains("-->") {
                k += 1
                guard k < block.endIndex, block[k].text.contains("-->") else {
                    problems.add(block[block.startIndex].number, ordinal,
                                 "expected a timing line \"[HH:]MM:SS.mmm --> [HH:]MM:SS.mmm\" after the cue identifier \"\(excerpt(head))\"")
                    continue
                }
            }
            guard let (start, end) = cueTiming(block[k], ordinal, form: "[HH:]MM:SS.mmm --> [HH:]MM:SS.mmm",
                                               parse: SubtitleTime.webVTTTiming, problems: &problems) else { continue }
            let body = block[(k + 1)...]
            if let stray = body.first(where: { $0.text.contains("-->") }) {
                problems.add(stray.number, ordinal, "cue text must not contain \"-->\"; separate cues with a blank line")
                continue
            }
            var ok = true
            var cueLines: [String] = []
            var marks: [SubtitleTimeMark] = []
            var offset = 0
            for line in body {
                let (text, lineMarks) = CueMarkup.webVTT(line.text) { message in
                    problems.add(line.number, ordinal, message); ok = false
                }
                for mark in lineMarks {
                    if !(mark.time > start && mark.time < end) {
                        problems.add(line.number, ordinal, "inline timestamp \(TimeFormatting.seconds(mark.time)) is not inside the cue (\(TimeFormatting.seconds(start)) to \(TimeFormatting.seconds(end)))")
                        ok = false
                    } else if let last = marks.last, mark.time <= last.time {
                        problems.add(line.number, ordinal, "inline timestamp \(TimeFormatting.seconds(mark.time)) is not after the one before it (\(TimeFormatting.seconds(last.time)))")
                        ok = false
                    }
                    marks.append(SubtitleTimeMark(offset: offset + mark.offset, time: mark.time))
                }
                cueLines.append(text)
                offset += text.unicodeScalars.count + 1   // the "\n" joining lines
            }
            guard ok else { continue }
            let text = cueLines.joined(separator: "\n")
            if text.allSatisfy(\.isWhitespace) { continue }
            cues.append(SubtitleCue(start: start, end: end, text: text, marks: marks))
        }
        return cues
    }

    /// A block that starts with `keyword` alone or followed by a space or tab.
    private static func isKeywordBlock(_ head: String, _ keyword: String) -> Bool {
        guard head.hasPrefix(keyword) else { return false }
        let rest = head.unicodeScalars.dropFirst(keyword.unicodeScalars.count)
        return rest.isEmpty || rest.first == " " || rest.first == "\t"
    }
}

/// The start and end of a cue's timing line, or nil after adding the problem: a line that is not
/// in `form`, or a cue that does not end after it starts.
private func cueTiming(_ timing: SourceLines.Line, _ ordinal: Int, form: String,
                       parse: (String) -> (start: Rational, end: Rational)?,
                       problems: inout ProblemList) -> (Rational, Rational)? {
    guard let (start, end) = parse(timing.text) else {
        problems.add(timing.number, ordinal, "timing line \"\(excerpt(timing.text))\" is not \"\(form)\" (minutes and seconds 00–59)")
        return nil
    }
    guard end > start else {
        problems.add(timing.number, ordinal, "the cue ends at \(TimeFormatting.seconds(end)), not after its start at \(TimeFormatting.seconds(start))")
        return nil
    }
    return (start, end)
}

/// A line as quoted in a problem: at most 80 characters, control characters escaped (a
/// subtitle file's bytes are not the terminal's business).
func excerpt(_ line: String) -> String {
    String(line.prefix(80)).escapingControlCharacters
}
