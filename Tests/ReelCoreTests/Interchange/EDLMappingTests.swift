import Testing
@testable import ReelCore
import ReelThreadTesting

/// CMX 3600 edit decision lists (docs/interchange.md, "CMX 3600 EDLs").
@Suite(.blocking) struct EDLMappingTests {
    static let files: Set<String> = ["/cut/a.mp4", "/cut/b.mp4", "/cut/A001.mov", "/media/c.mov", "/cut/music.wav"]

    private func read(_ edl: String, fps: Rational? = 24, mediaRoot: String? = nil) -> Result<ImportedTimeline, CompositionError> {
        let lookup = MediaLookup(timelineDirectory: "/cut", mediaRoot: mediaRoot, exists: { Self.files.contains($0) })
        return TimelineImport.read(Array(edl.utf8), format: .edl, options: .init(lookup: lookup, frameRate: fps))
    }

    private func plan(_ edl: String, fps: Rational? = 24, mediaRoot: String? = nil) throws -> RenderPlan {
        try OTIO.plan(try read(edl, fps: fps, mediaRoot: mediaRoot).get())
    }

    private func problems(_ edl: String, fps: Rational? = 24) -> [String] {
        switch read(edl, fps: fps) {
        case .success: return []
        case .failure(let error): return error.problems.map(\.description)
        }
    }

    @Test func cutsGapsAndReelsBecomeSegments() throws {
        let edl = """
            TITLE: reel test
            FCM: NON-DROP FRAME

            001  A001     V     C        00:00:01:00 00:00:02:00 01:00:00:00 01:00:01:00
            002  AX       V     C        00:00:00:12 00:00:01:00 01:00:01:00 01:00:01:12
            * FROM CLIP NAME:  a.mp4
            003  AX       V     C        00:00:00:00 00:00:00:12 01:00:02:00 01:00:02:12
            * FROM CLIP NAME:  c.mov
            """
        let imported = try read(edl, mediaRoot: "/media").get()
        let composition = try Composition.parse(imported.text)
        #expect(composition.assets.mapValues(\.url) == ["A001": "/cut/A001.mov", "a": "/cut/a.mp4", "c": "/media/c.mov"])
        let plan = try OTIO.plan(imported)
        #expect(plan.frameDuration == Rational(1, 24))
        #expect(plan.frameCount == 60)   // starts at 01:00:00:00, ends at 01:00:02:12
        #expect(plan.frame(0).layers.map(\.sourceTime) == [1])
        #expect(plan.frame(24).layers.map(\.asset) == ["a"])
        #expect(plan.frame(24).layers.map(\.sourceTime) == [Rational(12, 24)])
        #expect(plan.frame(40).layers.isEmpty)   // 01:00:01:12 … 01:00:02:00 is black
        #expect(plan.frame(50).layers.map(\.asset) == ["c"])
    }

    @Test func aDissolveRunsTheOutgoingSourceOnFromTheCutLine() throws {
        // As OTIO's CMX 3600 adapter writes a 6+6 frame dissolve.
        let edl = """
            001  a        V     C        00:00:00:12 00:00:01:12 00:00:00:00 00:00:01:00
            * FROM CLIP: a.mp4
            002  a        V     C        00:00:01:12 00:00:01:12 00:00:01:00 00:00:01:00
            002  b        V     D 012    00:00:00:18 00:00:02:00 00:00:01:00 00:00:02:06
            * FROM CLIP NAME:  A
            * FROM CLIP: a.mp4
            * TO CLIP NAME:  B
            * TO CLIP: b.mp4
            """
        let plan = try plan(edl)
        #expect(plan.frameCount == 54)
        for k in 24..<36 {
            let layers = plan.frame(k).layers
            #expect(layers.map(\.asset) == ["a", "b"], "frame \(k)")
            #expect(layers.map(\.opacity) == [1, Double(k - 24) / 12], "frame \(k)")
            #expect(layers.map(\.sourceTime) == [Rational(Int64(12 + k), 24), Rational(Int64(18 + k - 24), 24)], "frame \(k)")
        }
        #expect(plan.frame(23).layers.map(\.sourceTime) == [Rational(35, 24)])
        #expect(plan.frame(36).layers.map(\.sourceTime) == [Rational(30, 24)])
    }

    @Test func fadesFromAndToBlack() throws {
        let edl = """
            001  BL       V     C        00:00:00:00 00:00:00:00 00:00:00:00 00:00:00:00
            001  a        V     D 012    00:00:00:00 00:00:01:00 00:00:00:00 00:00:01:00
            * TO CLIP NAME:  a.mp4
            002  a        V     C        00:00:01:00 00:00:01:00 00:00:01:00 00:00:01:00
            002  BL       V     D 012    00:00:00:00 00:00:00:12 00:00:01:00 00:00:01:12
            * FROM CLIP NAME:  a.mp4
            """
        let plan = try plan(edl)
        #expect(plan.frameCount == 36)
        #expect(plan.frame(0).layers.map(\.opacity) == [0])
        #expect(plan.frame(6).layers.map(\.opacity) == [0.5])
        #expect(plan.frame(24).layers.map(\.opacity) == [1])
        #expect(plan.frame(30).layers.map(\.opacity) == [0.5])
        #expect(plan.frame(30).layers.map(\.sourceTime) == [Rational(30, 24)])
    }

    @Test func audioChannelsGoToAudioTracksAndAStereoPairPlaysOnce() throws {
        let edl = """
            001  a        B     C        00:00:00:00 00:00:01:00 00:00:00:00 00:00:01:00
            * FROM CLIP NAME:  a.mp4
            002  music    A2    C        00:00:00:00 00:00:02:00 00:00:00:00 00:00:02:00
            * FROM CLIP NAME:  music.wav
            003  music    A3    C        00:00:00:00 00:00:02:00 00:00:00:00 00:00:02:00
            * FROM CLIP NAME:  music.wav
            004  b        V     C        00:00:00:00 00:00:01:00 00:00:01:00 00:00:02:00
            * FROM CLIP NAME:  b.mp4
            """
        let imported = try read(edl).get()
        #expect(imported.warnings.contains { $0.hasPrefix("line 5: event 003, reel music, clip \"music.wav\" on track A3 repeats the sound on track A2") },
                "\(imported.warnings)")
        let plan = try OTIO.plan(imported)
        #expect(plan.videoTracks.count == 1)
        #expect(plan.audioTracks.filter { !$0.segments.isEmpty }.count == 2) // A3 keeps only its length
        let sounds = plan.audioTracks.flatMap { $0.segments.map(\.asset) }.sorted()
        #expect(sounds == ["a", "music"])
        #expect(plan.frame(30).layers.map(\.asset) == ["b"])
    }

    @Test func dropFrameTimecodeIsExact() throws {
        // 00:01:00;02 is frame 1800 at 29.97 drop-frame; the event lasts to 00:01:01;02 (30 frames).
        let edl = """
            FCM: DROP FRAME
            001  a        V     C        00:00:00;00 00:00:01;00 00:01:00;02 00:01:01;02
            * FROM CLIP NAME:  a.mp4
            002  b        V     C        00:00:00;00 00:00:01;00 00:01:01;02 00:01:02;02
            * FROM CLIP NAME:  b.mp4
            """
        let plan = try plan(edl, fps: nil)
        #expect(plan.frameDuration == Rational(1001, 30000))
        #expect(plan.frameCount == 60)
        #expect(plan.frame(30).layers.map(\.asset) == ["b"])
        #expect(plan.frame(29).layers.map(\.sourceTime) == [Rational(29 * 1001, 30000)])
    }

    @Test func whatAnEDLCannotSayIsAskedFor() {
        let edl = "001  a        V     C        00:00:00:00 00:00:01:00 00:00:00:00 00:00:01:00\n* FROM CLIP NAME:  a.mp4\n"
        #expect(problems(edl, fps: nil) == ["an EDL does not say its frame rate: give it with --fps (24, 25, 30, 23.976, 29.97, …)"])
        let bad = """
            001  a        V     C        00:00:00:00 00:00:01:00 00:00:00:00 00:00:01:12
            * FROM CLIP NAME:  a.mp4
            002  a        V     W001 012 00:00:00:00 00:00:01:00 00:00:01:12 00:00:02:12
            003  lost     V     C        00:00:00:00 00:00:01:00 00:00:02:12 00:00:03:12
            004  a        V     C        00:00:00:00 00:00:01:00 00:00:03:12 00:00:04:12
            * FROM CLIP NAME:  a.mp4
            M2   a        048.0                00:00:00:00
            005  a        V     C        00:00:00:00 00:00:00:24 00:00:04:00 00:00:05:00
            this is not an edl line
            """
        let lines = problems(bad)
        let expected = [
            "line 1: the source lasts 24 frames but the record 36",
            #"line 3: transition "W001" (a wipe or key) is not rendered"#,
            "line 4: reel lost: media not found; looked for /cut/lost",
            "line 8: timecode 00:00:00:24: the frame field must be below 24",
            #"line 9: "this is not an edl line" is not an EDL event"#,
        ]
        #expect(lines.count == expected.count, "\(lines)")
        for prefix in expected { #expect(lines.contains { $0.hasPrefix(prefix) }, "\(prefix) in \(lines)") }
    }

    @Test func aFreezeFrameHoldsItsSourceIn() throws {
        let edl = """
            001  a        V     C        00:00:00:10 00:00:00:11 00:00:00:00 00:00:00:12
            M2   a        000.0                00:00:00:10
            * FROM CLIP NAME:  a.mp4
            """
        let plan = try plan(edl)
        #expect(plan.frameCount == 12)
        for k in 0..<12 { #expect(plan.frame(k).layers.map(\.sourceTime) == [Rational(10, 24)]) }
    }

    @Test func anM2SpeedBecomesATimeScaledSegment() throws {
        // 48 fps over a 24 fps list: 2×, so 12 record frames play 24 source frames from frame 6.
        let edl = """
            001  a        V     C        00:00:00:06 00:00:01:06 00:00:00:00 00:00:00:12
            M2   a        048.0                00:00:00:06
            * FROM CLIP NAME:  a.mp4
            """
        let plan = try plan(edl)
        #expect(plan.frameCount == 12)
        #expect(plan.videoTracks[0].segments.map(\.speed) == [Rational(2)])
        for k in 0..<12 { #expect(plan.frame(k).layers.map(\.sourceTime) == [Rational(Int64(6 + 2 * k), 24)]) }
    }

    @Test func overlappingEventsAreRefused() {
        let edl = """
            001  a        V     C        00:00:00:00 00:00:01:00 00:00:00:00 00:00:01:00
            * FROM CLIP NAME:  a.mp4
            002  b        V     C        00:00:00:00 00:00:01:00 00:00:00:12 00:00:01:12
            * FROM CLIP NAME:  b.mp4
            """
        #expect(problems(edl).first?.hasPrefix("line 3: event 002, reel b, clip \"b.mp4\" starts before event 001") == true)
    }
}
