import Testing
@testable import ReelCore
import ReelThreadTesting

@Suite("Subtitle parsing", .blocking)
struct SubtitleParserTests {
    func parse(_ text: String, _ format: SubtitleDocument.Format) throws -> SubtitleDocument {
        try SubtitleParser.parse(Array(text.utf8), format: format).get()
    }

    func problems(_ text: String, _ format: SubtitleDocument.Format) -> [String] {
        problems(Array(text.utf8), format)
    }

    func problems(_ bytes: [UInt8], _ format: SubtitleDocument.Format) -> [String] {
        switch SubtitleParser.parse(bytes, format: format) {
        case .success: return []
        case .failure(let error): return error.problems.map(\.description)
        }
    }

    func ms(_ n: Int64) -> Rational { Rational(n, 1000) }

    // MARK: - SubRip

    @Test func subRipCuesHaveExactTimesAndPlainText() throws {
        let doc = try parse("""
            1
            00:00:01,500 --> 00:00:03,250
            <i>Hello</i>, {\\an8}world
            second <font color="#ff0000">line</font>

            2
            01:02:03,004 --> 01:02:04,000 X1:10 X2:20 Y1:5 Y2:6
            a <b c

            """, .srt)
        #expect(doc.format == .srt)
        #expect(doc.cues == [
            SubtitleCue(start: ms(1500), end: ms(3250), text: "Hello, world\nsecond line"),
            SubtitleCue(start: ms(3_723_004), end: ms(3_724_000), text: "a <b c"),
        ])
        #expect(doc.end == ms(3_724_000))
    }

    @Test func subRipAcceptsCRLFByteOrderMarkMissingNumbersAndDotMilliseconds() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("00:00:00.040 --> 00:00:01,000\r\nOne\r\n\r\n\r\n7\r00:00:02,000 --> 00:00:02,001\rTwo\r".utf8)
        let doc = try SubtitleParser.parse(bytes, format: .srt).get()
        #expect(doc.cues.map(\.text) == ["One", "Two"])
        #expect(doc.cues.map(\.start) == [ms(40), ms(2000)])
        #expect(doc.cues[1].end == ms(2001))
    }

    @Test func subRipDropsCuesWithoutText() throws {
        let doc = try parse("1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:03,000 --> 00:00:04,000\n<i></i>\n\n3\n00:00:05,000 --> 00:00:06,000\nthird\n", .srt)
        #expect(doc.cues.map(\.text) == ["third"])
    }

    @Test func malformedSubRipNamesLineAndCue() {
        let text = """
            1
            00:00:01,000 -> 00:00:02,000
            arrow too short

            2
            00:00:03,000 --> 00:00:02,000
            ends before it starts

            3
            00:00:05,000 --> 00:00:06,000
            missing blank line
            4
            00:00:07,000 --> 00:00:08,000
            next

            five
            00:00:09,000 --> 00:00:10,000
            not a number

            6
            00:60:00,000 --> 01:00:00,000
            minute 60

            7
            """
        #expect(problems(text, .srt) == [
            "line 2 (cue 1): timing line \"00:00:01,000 -> 00:00:02,000\" is not \"HH:MM:SS,mmm --> HH:MM:SS,mmm\" (minutes and seconds 00–59)",
            "line 6 (cue 2): the cue ends at 2 s, not after its start at 3 s",
            "line 13 (cue 3): a timing line inside the cue's text: separate cues with a blank line",
            "line 16 (cue 4): expected a cue number or a timing line \"HH:MM:SS,mmm --> HH:MM:SS,mmm\", found \"five\"",
            "line 21 (cue 5): timing line \"00:60:00,000 --> 01:00:00,000\" is not \"HH:MM:SS,mmm --> HH:MM:SS,mmm\" (minutes and seconds 00–59)",
            "line 24 (cue 6): cue number 7 is not followed by a timing line \"HH:MM:SS,mmm --> HH:MM:SS,mmm\"",
        ])
    }

    @Test func bytesThatAreNotUTF8AreReportedByLine() {
        let bytes = Array("1\n00:00:01,000 --> 00:00:02,000\n".utf8) + [0x63, 0x61, 0x66, 0xE9, 0x0A] + Array("\n".utf8)
        #expect(problems(bytes, .srt) == ["line 3: is not UTF-8 text (save the file as UTF-8)"])
    }

    @Test func aBinaryFileListsAtMostTwentyProblems() {
        let text = (0..<50).map { "block \($0)\n" }.joined(separator: "\n")
        let list = problems(text, .srt)
        #expect(list.count == SubtitleParser.maximumProblems + 1)
        #expect(list.last?.hasSuffix("and 30 more problems") == true)
    }

    // MARK: - WebVTT

    @Test func webVTTCuesHaveExactTimesPlainTextAndMarks() throws {
        let doc = try parse("""
            WEBVTT - a header

            NOTE a comment
            that spans lines

            STYLE
            ::cue { color: lime }

            intro
            00:01.000 --> 00:02.500 align:start line:0
            <v Narrator>Fish &amp; chips</v> &lt;3 &#233;&#x263A;

            01:00:00.000 --> 01:00:01.000
            <c.loud>one</c>
            <b>two</b>

            00:00:10.000 --> 00:00:13.000
            <00:00:10.500>Never <00:00:11.000>gonna<00:00:12.250> give
            """, .webVTT)
        #expect(doc.format == .webVTT)
        #expect(doc.cues.count == 3)
        #expect(doc.cues[0] == SubtitleCue(start: ms(1000), end: ms(2500), text: "Fish & chips <3 é☺"))
        #expect(doc.cues[1] == SubtitleCue(start: Rational(3600), end: Rational(3601), text: "one\ntwo"))
        #expect(doc.cues[2].text == "Never gonna give")
        #expect(doc.cues[2].marks == [SubtitleTimeMark(offset: 0, time: ms(10500)), SubtitleTimeMark(offset: 6, time: ms(11000)),
                                      SubtitleTimeMark(offset: 11, time: ms(12250))])
    }

    @Test func marksOnLaterLinesCountTheLineBreaks() throws {
        let doc = try parse("WEBVTT\n\n00:00.000 --> 00:04.000\nab <00:01.000>cd\n<00:02.000>ef\n", .webVTT)
        #expect(doc.cues[0].text == "ab cd\nef")
        #expect(doc.cues[0].marks.map(\.offset) == [3, 6])
        #expect(Array(doc.cues[0].text.unicodeScalars)[6] == "e")
    }

    @Test func reachedTextFollowsTheMarks() throws {
        let cue = try parse("WEBVTT\n\n00:10.000 --> 00:13.000\nNever <00:11.000>gonna <00:12.000>give\n", .webVTT).cues[0]
        #expect(cue.reachedScalars(at: ms(10000)) == 6)          // "Never " belongs to the cue's start
        #expect(cue.reachedScalars(at: ms(10999)) == 6)
        #expect(cue.reachedScalars(at: ms(11000)) == 12)         // "gonna " from 11 s
        #expect(cue.reachedScalars(at: ms(12000)) == 16)         // all of it
        let plain = SubtitleCue(start: .zero, end: .one, text: "all at once")
        #expect(plain.reachedScalars(at: .zero) == 11)
    }

    @Test func malformedWebVTTNamesLineAndCue() {
        let text = """
            WEBVTT

            00:01.000 --> 00:02.000
            fine

            id-only
            not a timing line

            00:03.000 --> 00:04.00
            short milliseconds

            00:05.000 --> 00:06.000
            a --> inside

            00:07.000 --> 00:08.000
            <00:06.000>before <00:07.500>ok <00:07.400>backwards <00:09.000>after <1:2>bad

            """
        #expect(problems(text, .webVTT) == [
            "line 6 (cue 2): expected a timing line \"[HH:]MM:SS.mmm --> [HH:]MM:SS.mmm\" after the cue identifier \"id-only\"",
            "line 9 (cue 3): timing line \"00:03.000 --> 00:04.00\" is not \"[HH:]MM:SS.mmm --> [HH:]MM:SS.mmm\" (minutes and seconds 00–59)",
            "line 13 (cue 4): cue text must not contain \"-->\"; separate cues with a blank line",
            "line 16 (cue 5): <1:2> is not a timestamp [HH:]MM:SS.mmm",
            "line 16 (cue 5): inline timestamp 6 s is not inside the cue (7 s to 8 s)",
            "line 16 (cue 5): inline timestamp 7.4 s is not after the one before it (7.5 s)",
            "line 16 (cue 5): inline timestamp 9 s is not inside the cue (7 s to 8 s)",
        ])
    }

    @Test func webVTTNeedsItsSignature() {
        #expect(problems("WEBVTTX\n\n00:01.000 --> 00:02.000\nx\n", .webVTT) == ["line 1: a WebVTT file starts with the line WEBVTT, found \"WEBVTTX\""])
        #expect(problems("1\n00:00:01,000 --> 00:00:02,000\nx\n", .webVTT) == ["line 1: a WebVTT file starts with the line WEBVTT, found \"1\""])
        #expect(problems("", .webVTT) == ["line 1: a WebVTT file starts with the line WEBVTT, found nothing"])
    }

    // MARK: - Recognition

    @Test func formatsAreRecognisedByNameAndByContent() {
        #expect(SubtitleParser.format(forFileName: "en.SRT") == .srt)
        #expect(SubtitleParser.format(forFileName: "fr.vtt") == .webVTT)
        #expect(SubtitleParser.format(forFileName: "clip.mp4") == nil)
        #expect(SubtitleParser.sniff(Array("\u{FEFF}WEBVTT\n\n00:01.000 --> 00:02.000\nx".utf8)) == .webVTT)
        #expect(SubtitleParser.sniff(Array("\n\n1\r\n00:00:01,000 --> 00:00:02,000\r\nx".utf8)) == .srt)
        #expect(SubtitleParser.sniff(Array("00:00:01,000 --> 00:00:02,000\nx".utf8)) == .srt)
        #expect(SubtitleParser.sniff([0, 0, 0, 0x20] + Array("ftypisom".utf8)) == nil)
        #expect(SubtitleParser.sniff(Array("1\nhello\n".utf8)) == nil)
    }

    // MARK: - Placement

    @Test func placementCutsCuesAtTheRangeEdgesDropsOthersAndShifts() throws {
        let doc = try parse("""
            WEBVTT

            00:00.000 --> 00:01.000
            before the range

            00:01.500 --> 00:03.000
            across the start

            00:03.000 --> 00:04.000
            inside

            00:04.500 --> 00:06.000
            <00:05.000>across <00:05.800>the end

            00:06.000 --> 00:07.000
            after the range
            """, .webVTT)
        // File seconds [2, 5.5) placed at 10 s.
        let placed = doc.cues(in: TimeRange(start: 2, duration: Rational(7, 2)), placedAt: 10)
        #expect(placed.map(\.text) == ["across the start", "inside", "across the end"])
        #expect(placed.map(\.start) == [10, 11, Rational(25, 2)])
        #expect(placed.map(\.end) == [11, 12, Rational(27, 2)])
        // The mark at 5 s stays (now 13 s); the one at 5.8 s lies past the cut and is never reached in the cue.
        #expect(placed[2].marks == [SubtitleTimeMark(offset: 0, time: 13), SubtitleTimeMark(offset: 7, time: Rational(27, 2))])
    }

    // MARK: - Round trip

    /// Random cues written as SubRip and as WebVTT read back exactly.
    @Test func randomCuesReadBackExactly() throws {
        var random = SplitMix64(seed: 23)
        func timestamp(_ ms: Int64, vtt: Bool) -> String {
            let h = ms / 3_600_000, m = ms / 60_000 % 60, s = ms / 1000 % 60, f = ms % 1000
            func pad(_ v: Int64, _ n: Int) -> String { String(repeating: "0", count: max(0, n - String(v).count)) + String(v) }
            return "\(pad(h, 2)):\(pad(m, 2)):\(pad(s, 2))\(vtt ? "." : ",")\(pad(f, 3))"
        }
        let words = ["hello", "wörld", "加点水印", "مرحبا", "🎬", "a-b", "x_y", "42"]
        for _ in 0..<300 {
            var cues: [SubtitleCue] = []
            var t = Int64(random.next() % 5000)
            for _ in 0..<Int(random.next() % 6) {
                let length = 1 + Int64(random.next() % 4000)
                let lines = (0..<(1 + Int(random.next() % 3))).map { _ in
                    (0..<(1 + Int(random.next() % 4))).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " ")
                }
                cues.append(SubtitleCue(start: ms(t), end: ms(t + length), text: lines.joined(separator: "\n")))
                t += length + Int64(random.next() % 3000)
            }
            let srt = cues.enumerated().map { "\($0.offset + 1)\n\(timestamp($0.element.start.num * 1000 / $0.element.start.den, vtt: false)) --> \(timestamp($0.element.end.num * 1000 / $0.element.end.den, vtt: false))\n\($0.element.text)\n" }
                .joined(separator: "\n")
            let vtt = "WEBVTT\n\n" + cues.map { "\(timestamp($0.start.num * 1000 / $0.start.den, vtt: true)) --> \(timestamp($0.end.num * 1000 / $0.end.den, vtt: true))\n\($0.text)\n" }
                .joined(separator: "\n")
            #expect(try parse(srt, .srt).cues == cues)
            #expect(try parse(vtt, .webVTT).cues == cues)
        }
    }

    // MARK: - Languages

    @Test(arguments: [
        ("en", "eng", nil), ("fr", "fra", "fre"), ("pt-BR", "por", nil), ("de-DE", "deu", "ger"),
        ("zh-Hant-TW", "zho", "chi"), ("yue", "yue", nil), ("EN-gb", "eng", nil), ("sr-Latn", "srp", nil),
    ] as [(String, String, String?)])
    func languageTagsMapToISO639_2(tag: String, t: String, b: String?) throws {
        let language = try LanguageTag.parse(tag).get()
        #expect(language.iso639_2T == t)
        #expect(language.iso639_2B == b)
        #expect(language.tag == tag)
    }

    @Test(arguments: ["", "e", "english", "qq", "en_US", "en-", "en-toolongsubtag", "1a"])
    func badLanguageTagsAreRefused(tag: String) {
        #expect(throws: LanguageTagError.self) { try LanguageTag.parse(tag).get() }
    }
}
