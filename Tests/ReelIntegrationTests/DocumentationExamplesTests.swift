import Foundation
import Testing
import ReelThreadTesting

/// The composition examples users copy from must work: every ```` ```json ```` block of
/// docs/composition.md and of README.md is a whole composition that `reel validate` accepts,
/// run against media files made here to match the ones the reference describes. The
/// validation output shown in docs/composition.md is checked too.
@Suite(.blocking) struct DocumentationExamplesTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let documents = ["docs/composition.md", "docs/templates.md", "README.md"]

    // MARK: - Markdown

    /// One fenced block: the language after the opening fence, the 1-based line of that fence,
    /// and the lines between the fences.
    struct Block: Equatable {
        var language: String
        var line: Int
        var text: String
    }

    /// Every fenced block of `markdown` (fences may be indented, as inside a list item), and
    /// the problems that would let an example escape the check: an unterminated block, or a
    /// JSON-like language other than `json` (```` ```jsonc ````, ```` ```json5 ````).
    static func fencedBlocks(in markdown: String) -> (blocks: [Block], problems: [String]) {
        var blocks: [Block] = [], problems: [String] = []
        var open: (language: String, line: Int, lines: [String])?
        for (index, rawLine) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if var current = open {
                if line == "```" {
                    blocks.append(Block(language: current.language, line: current.line, text: current.lines.joined(separator: "\n")))
                    open = nil
                } else {
                    current.lines.append(String(rawLine))
                    open = current
                }
            } else if line.hasPrefix("```") {
                let language = String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces)
                if language.lowercased().hasPrefix("json") && language != "json" {
                    problems.append("line \(index + 1): a ```\(language) block is not checked; write examples as valid ```json")
                }
                open = (language, index + 1, [])
            }
        }
        if let open { problems.append("line \(open.line): the ```\(open.language) block is never closed") }
        return (blocks, problems)
    }

    static func read(_ document: String) throws -> String {
        try String(contentsOf: repositoryRoot.appendingPathComponent(document), encoding: .utf8)
    }

    // MARK: - Media

    /// The files the examples use, made once for the whole suite (a `Result`, so a
    /// failure to make them fails every test that needs them with ffmpeg's message).
    static let media: Result<URL, any Error> = Result { try makeMedia() }

    static func makeMedia() throws -> URL {
        let dir = try Media.tempDirectory()
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        let x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "35", "-pix_fmt", "yuv420p"]
        let aac = ["-c:a", "aac", "-ac", "2"]
        // 1280x720, 25 fps, 10 s, stereo.
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25:duration=10",
                          "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=10"]
                         + x264 + aac + ["-shortest", path("clip.mp4")])
        // Coded 1920x1080, 30 fps, 6 s, with audio; then a 90° display matrix by stream copy
        // (FFmpeg 5.1 writes the rotate tag as a display matrix only when it does not encode).
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30:duration=6",
                          "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=48000:duration=6"]
                         + x264 + aac + ["-shortest", path("coded.mp4")])
        try Media.ffmpeg(["-i", path("coded.mp4"), "-c", "copy", "-metadata:s:v:0", "rotate=90", path("portrait.mp4")])
        try FileManager.default.removeItem(atPath: path("coded.mp4"))
        // 30 s of stereo music.
        try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=220:sample_rate=48000:duration=30"] + aac + [path("music.m4a")])
        // 4 s of a voice-over (a tone will do).
        try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=48000:duration=4"] + aac + [path("voice.m4a")])
        try Media.ffmpeg(["-f", "lavfi", "-i", "sine=frequency=1500:sample_rate=48000:duration=4"] + aac + [path("voice-fr.m4a")])
        // docs/templates.md picks a voice-over by language: voice-{{lang}}.m4a.
        try FileManager.default.copyItem(atPath: path("voice.m4a"), toPath: path("voice-en.m4a"))
        // A 256x256 RGBA logo, half transparent.
        try Media.ffmpeg(["-f", "lavfi", "-i", "color=c=red@0.5:size=256x256,format=rgba", "-frames:v", "1", path("logo.png")])
        // A 1920x1080 photo.
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=size=1920x1080", "-frames:v", "1", path("still.jpg")])
        // A 17³ colour look-up table (a warm grade), in Adobe's Cube format.
        var cube = ["TITLE \"warm\"", "LUT_3D_SIZE 17"]
        for b in 0..<17 { for g in 0..<17 { for r in 0..<17 {
            let (x, y, z) = (Double(r) / 16, Double(g) / 16, Double(b) / 16)
            cube.append("\(min(1, x * 1.1)) \(y) \(z * 0.85)")
        } } }
        try cube.joined(separator: "\n").write(toFile: path("grade.cube"), atomically: true, encoding: .utf8)
        // Subtitles: English SubRip, French WebVTT, and WebVTT with a timestamp on each word.
        try "1\n00:00:00,500 --> 00:00:02,000\nHello.\n\n2\n00:00:04,000 --> 00:00:09,000\nHow are you?\n"
            .write(toFile: path("en.srt"), atomically: true, encoding: .utf8)
        try "WEBVTT\n\n00:00.500 --> 00:02.000\nBonjour.\n\n00:04.000 --> 00:09.000\nComment allez-vous ?\n"
            .write(toFile: path("fr.vtt"), atomically: true, encoding: .utf8)
        try "WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nNever <00:00:01.600>gonna <00:00:02.200>give <00:00:02.500>up\n"
            .write(toFile: path("words.vtt"), atomically: true, encoding: .utf8)
        return dir
    }

    /// What `reel probe --json` says Reel sees in `file`: kind, display size, frame duration,
    /// duration, audio channels and preferred transform.
    static func reelProbe(_ file: URL) throws -> (kind: String, display: [Int]?, frameDuration: String?, duration: String?, channels: Int?, transform: [Double]?) {
        let r = try Media.run(Media.reel, ["probe", file.path, "--json"])
        let json = try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
        let streams = json["streams"] as? [[String: Any]] ?? []
        let video = streams.first { $0["type"] as? String == "video" }
        let display = (video?["displaySize"] as? [String: Int]).map { [$0["width"] ?? 0, $0["height"] ?? 0] }
        let asset = json["asset"] as? [String: Any] ?? [:]
        let assetVideo = asset["video"] as? [String: Any]
        let assetAudio = asset["audio"] as? [String: Any]
        let transform = (assetVideo?["preferredTransform"] as? [String: Double]).map { t in ["a", "b", "c", "d", "tx", "ty"].map { t[$0] ?? .nan } }
        return (asset["kind"] as? String ?? "?", display, assetVideo?["frameDuration"] as? String,
                asset["duration"] as? String, assetAudio?["channels"] as? Int, transform)
    }

    // MARK: - Tests

    @Test func theGeneratedMediaAreTheFilesTheReferenceDescribes() throws {
        let dir = try Self.media.get()
        let clip = try Self.reelProbe(dir.appendingPathComponent("clip.mp4"))
        #expect(clip.kind == "movie" && clip.display == [1280, 720] && clip.frameDuration == "1/25" && clip.channels == 2, "\(clip)")
        #expect(clip.duration == "10", "clip.mp4 lasts \(clip.duration ?? "?") s")
        let portrait = try Self.reelProbe(dir.appendingPathComponent("portrait.mp4"))
        #expect(portrait.kind == "movie" && portrait.display == [1080, 1920] && portrait.frameDuration == "1/30" && portrait.channels == 2, "\(portrait)")
        #expect(portrait.duration == "6", "portrait.mp4 lasts \(portrait.duration ?? "?") s")
        // The preferred transform docs/composition.md quotes (and halves in its matrix example).
        #expect(portrait.transform == [0, -1, 1, 0, 0, 1920], "\(portrait)")
        let music = try Self.reelProbe(dir.appendingPathComponent("music.m4a"))
        #expect(music.kind == "audio" && music.channels == 2 && music.duration == "30", "\(music)")
        let logo = try Self.reelProbe(dir.appendingPathComponent("logo.png"))
        #expect(logo.kind == "still" && logo.display == [256, 256], "\(logo)")
        let still = try Self.reelProbe(dir.appendingPathComponent("still.jpg"))
        #expect(still.kind == "still" && still.display == [1920, 1080], "\(still)")
    }

    @Test(arguments: documents)
    func everyJSONExampleValidates(_ document: String) throws {
        let dir = try Self.media.get()
        let (blocks, problems) = Self.fencedBlocks(in: try Self.read(document))
        #expect(problems.isEmpty, "\(document): \(problems.joined(separator: "; "))")
        let examples = blocks.filter { $0.language == "json" }
        #expect(!examples.isEmpty, "\(document) has no ```json block: nothing was checked")
        let stem = document.replacingOccurrences(of: "/", with: "-")
        for example in examples {
            let file = dir.appendingPathComponent("\(stem)-line\(example.line).json")
            try example.text.write(to: file, atomically: true, encoding: .utf8)
            let r = try Media.run(Media.reel, ["validate", file.path], allowFailure: true)
            #expect(r.status == 0, "\(document) line \(example.line): reel validate exited \(r.status):\n\(r.stderr)")
        }
    }

    /// The two `reel validate` outputs shown under "Validation" are what `reel validate`
    /// prints for the compositions the text describes.
    @Test func theDocumentedValidationOutputIsReal() throws {
        let dir = try Self.media.get()
        let markdown = try Self.read("docs/composition.md")
        let section = try #require(markdown.range(of: "\n## Validation\n"), "docs/composition.md has no Validation section")
        let firstLine = markdown[..<section.upperBound].split(separator: "\n", omittingEmptySubsequences: false).count
        let end = markdown[section.upperBound...].range(of: "\n## ")?.lowerBound ?? markdown.endIndex
        let blocks = Self.fencedBlocks(in: String(markdown[section.upperBound..<end])).blocks.filter { $0.language == "text" }
        try #require(blocks.count == 2, "expected two ```text outputs under Validation, found \(blocks.count)")

        let compositions = [
            // The smallest composition, with a segment out of range and an odd render width.
            """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [
                {"asset": "clip", "sourceRange": {"start": 8, "duration": 4}, "at": -1}]}],
             "videoComposition": {"renderSize": {"width": 1279, "height": 720}}}
            """,
            // The typo.
            """
            {"formatVersion": 1, "assets": {"clip": {"url": "clip.mp4"}},
             "tracks": [{"id": 1, "mediaType": "vidoe", "segmnets": []}]}
            """,
        ]
        for (block, json) in zip(blocks, compositions) {
            let file = dir.appendingPathComponent("documented-error-\(block.line).json")
            try json.write(to: file, atomically: true, encoding: .utf8)
            let r = try Media.run(Media.reel, ["validate", file.path], allowFailure: true)
            #expect(r.status == 1)
            let printed = r.stderr.split(separator: "\n").map(String.init)
            let documented = block.text.split(separator: "\n").map(String.init)
            #expect(printed == documented, "docs/composition.md line \(firstLine + block.line - 1) shows\n\(block.text)\nbut reel validate prints\n\(r.stderr)")
        }
    }

    /// The problems docs/templates.md shows under "Validation" are what `reel validate` prints
    /// for its first template with the values and the typo the text describes.
    @Test func theDocumentedTemplateProblemsAreReal() throws {
        let dir = try Self.media.get()
        let markdown = try Self.read("docs/templates.md")
        let blocks = Self.fencedBlocks(in: markdown).blocks
        let card = try #require(blocks.first { $0.language == "json" }, "docs/templates.md has no template")
        let section = try #require(markdown.range(of: "\n## Validation\n"), "docs/templates.md has no Validation section")
        let shown = try #require(Self.fencedBlocks(in: String(markdown[section.upperBound...])).blocks.first { $0.language == "text" })

        let typo = card.text.replacingOccurrences(of: "Happy birthday, {{name}}!", with: "Happy birthday, {{nmae}}!")
        #expect(typo != card.text, "the first template no longer says \"Happy birthday, {{name}}!\"")
        let file = dir.appendingPathComponent("documented-template-error.json")
        try typo.write(to: file, atomically: true, encoding: .utf8)
        let r = try Media.run(Media.reel, ["validate", file.path, "--set", "ink=gold", "--set", "size=200", "--set", "nme=Ada"], allowFailure: true)
        #expect(r.status == 1)
        #expect(r.stderr.split(separator: "\n").map(String.init) == shown.text.split(separator: "\n").map(String.init),
                "docs/templates.md shows\n\(shown.text)\nbut reel validate prints\n\(r.stderr)")

        let cardFile = dir.appendingPathComponent("documented-template.json")
        try card.text.write(to: cardFile, atomically: true, encoding: .utf8)
        let missing = try Media.run(Media.reel, ["validate", cardFile.path, "--set", "photo=missing.jpg"], allowFailure: true, currentDirectory: dir)
        #expect(missing.status == 1)
        let printed = missing.stderr.replacingOccurrences(of: dir.path, with: "/your/directory").trimmingCharacters(in: .newlines)
        #expect(markdown.contains("`\(printed)`"), "docs/templates.md does not show what reel validate prints: \(printed)")
    }

    /// The Batches section of docs/templates.md: its rows check against its template
    /// (`reel batch --check`, media probed, nothing rendered), and the problems it shows are what
    /// `reel batch` prints for the rows the text describes, before rendering nothing.
    @Test func theDocumentedBatchIsReal() throws {
        let dir = try Self.media.get()
        let markdown = try Self.read("docs/templates.md")
        let section = try #require(markdown.range(of: "\n## Batches\n"), "docs/templates.md has no Batches section")
        let blocks = Self.fencedBlocks(in: String(markdown[section.upperBound...])).blocks
        let template = try #require(blocks.first { $0.language == "json" }, "the Batches section has no template")
        let rows = try #require(blocks.first { $0.language == "csv" }, "the Batches section has no CSV rows")
        let shown = try #require(blocks.first { $0.language == "text" && $0.text.hasPrefix("row ") }, "the Batches section shows no problems")
        try template.text.write(to: dir.appendingPathComponent("greeting.json"), atomically: true, encoding: .utf8)
        try (rows.text + "\n").write(to: dir.appendingPathComponent("documented-rows.csv"), atomically: true, encoding: .utf8)

        let check = try Media.run(Media.reel, ["batch", "greeting.json", "documented-rows.csv", "-o", "out/{{id}}.mp4", "--check"],
                                  allowFailure: true, currentDirectory: dir)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(String(decoding: check.stdout, as: UTF8.self) == "ok: 2 rows\n")

        let long = String(repeating: "x", count: 41)
        try "id,name,photo,ink\na,Ada,still.jpg,#FFFFFF\nb,Bo,still.jpg,gold\nc,Cy,logo.png,#000000\nd,\(long),still.jpg,#FFFFFF\ne,Eve,still.jpg,#FF0000\n"
            .write(to: dir.appendingPathComponent("people.csv"), atomically: true, encoding: .utf8)
        let r = try Media.run(Media.reel, ["batch", "greeting.json", "people.csv", "-o", "out/{{id}}.mp4"], allowFailure: true, currentDirectory: dir)
        #expect(r.status == 1)
        #expect(r.stderr.split(separator: "\n").map(String.init) == shown.text.split(separator: "\n").map(String.init),
                "docs/templates.md shows\n\(shown.text)\nbut reel batch prints\n\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("out").path), "nothing was rendered or written")
    }

    @Test func theExtractorFindsEveryBlockAndRefusesUncheckedOnes() {
        let markdown = """
            # Title
            ```json
            {"a": 1}
            ```
            - a list item:
              ```json
              {"b": 2}
              ```
            ```jsonc
            {"c": 3} // comment
            ```
            ```text
            not json
            """
        let (blocks, problems) = Self.fencedBlocks(in: markdown)
        #expect(blocks.map(\.language) == ["json", "json", "jsonc"])
        #expect(blocks.map(\.line) == [2, 6, 9])
        #expect(blocks.first?.text == #"{"a": 1}"#)
        #expect(problems.count == 2, "\(problems)")
        #expect(problems.contains { $0.hasPrefix("line 9:") && $0.contains("jsonc") })
        #expect(problems.contains { $0.hasPrefix("line 12:") && $0.contains("never closed") })
    }
}
