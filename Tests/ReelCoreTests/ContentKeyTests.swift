import Testing
@testable import ReelCore
import ReelThreadTesting

/// Content keys decide which chunks are rendered again after an edit: each kind of edit must
/// change exactly the keys of the chunks whose frames it changes, and nothing else.
@Suite("Content keys", .blocking)
struct ContentKeyTests {
    private static let assets = Fixtures.described([
        "clip": Fixtures.movie(320, 240, duration: Rational(100)),
        "music": Fixtures.sound(duration: Rational(100)),
    ])
    private static let content = ["clip": String(repeating: "a", count: 64), "music": String(repeating: "b", count: 64)]

    /// 60 s at 10 fps with 2 s GOPs: six 10 s chunks of 100 frames. Segments [0, 40), [40, 50),
    /// [50, 60); a caption during [21, 26) (chunk 2); an opacity dip during [34, 36) (chunk 3).
    struct Edit {
        var caption = "Hello"
        var dip = "0.5"
        var middleSourceStart = "40"
        /// The middle segment's source duration: another value than 10 changes its speed.
        var middleSourceDuration = "10"
        var musicSourceDuration = "60"
        /// The music track's `audioTimePitchAlgorithm`; nil leaves `audioMix` out.
        var musicAlgorithm: String? = nil
        var crf = 23
        var musicStart = "0"
    }

    private static func plan(_ e: Edit = Edit(), names: (clip: String, music: String) = ("clip", "music")) throws -> RenderPlan {
        try Fixtures.plan(#"""
        {"formatVersion": 1, "assets": {"\#(names.clip)": {"url": "c.mp4"}, "\#(names.music)": {"url": "m.m4a"}},
         "tracks": [
           {"id": 1, "mediaType": "video", "segments": [
             {"asset": "\#(names.clip)", "at": 0, "sourceRange": {"start": 0, "duration": 40}},
             {"asset": "\#(names.clip)", "at": 40, "sourceRange": {"start": \#(e.middleSourceStart), "duration": \#(e.middleSourceDuration)}\#(e.middleSourceDuration == "10" ? "" : #", "duration": 10"#)},
             {"asset": "\#(names.clip)", "at": 50, "sourceRange": {"start": 50, "duration": 10}}]},
           {"id": 2, "mediaType": "audio", "segments": [
             {"asset": "\#(names.music)", "at": 0, "sourceRange": {"start": \#(e.musicStart), "duration": \#(e.musicSourceDuration)}\#(e.musicSourceDuration == "60" ? "" : #", "duration": 60"#)}]}],
         \#(e.musicAlgorithm.map { #""audioMix": [{"track": 2, "audioTimePitchAlgorithm": "\#($0)"}],"# } ?? "")
         "videoComposition": {
           "renderSize": {"width": 320, "height": 240}, "frameDuration": "1/10",
           "instructions": [{"timeRange": {"start": 0, "duration": 60}, "layerInstructions": [
             {"track": 1, "opacityRamps": [
               {"from": 1.0, "to": \#(e.dip), "timeRange": {"start": 34, "duration": 1}},
               {"from": \#(e.dip), "to": 1.0, "timeRange": {"start": 35, "duration": 1}}]}]}],
           "overlays": [{"text": "\#(e.caption)", "font": "sans-serif", "fontSize": 20, "color": "#FFFFFF",
                         "frame": {"x": 10, "y": 200, "width": 300, "height": 30}, "timeRange": {"start": 21, "duration": 5}}]},
         "export": {"preset": "medium", "video": {"crf": \#(e.crf)}}}
        """#, assets: Self.assets.merging(names.clip == "clip" ? [:] : [names.clip: Self.assets["clip"]!, names.music: Self.assets["music"]!]) { $1 })
    }

    private static func keys(_ plan: RenderPlan, content: [String: String] = content, threads: Int = 4) -> (video: [String?], audio: String?) {
        let chunks = ChunkPlanner.plan(for: plan)
        return (chunks.map { ContentKey.videoChunk(plan, frames: $0, encoderThreads: threads, assetContent: content) },
                ContentKey.audio(plan, assetContent: content))
    }

    /// Indices of the video chunks whose keys differ.
    private static func changedChunks(_ edit: Edit) throws -> (video: [Int], audio: Bool) {
        let before = keys(try plan()), after = keys(try plan(edit))
        #expect(before.video.count == 6 && after.video.count == 6)
        return (zip(before.video, after.video).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset), before.audio != after.audio)
    }

    @Test func sameInputGivesTheSameKeys() throws {
        let a = Self.keys(try Self.plan()), b = Self.keys(try Self.plan())
        #expect(a.video == b.video && a.audio == b.audio)
        #expect(a.video.allSatisfy { $0?.count == 64 && $0?.allSatisfy(\.isHexDigit) == true })
        #expect(Set(a.video).count == 6, "every chunk shows other frames")
    }

    @Test func assetsAreKeyedByContentNotName() throws {
        let renamed = try Self.plan(names: ("shot", "song"))
        let a = Self.keys(try Self.plan())
        let b = Self.keys(renamed, content: ["shot": Self.content["clip"]!, "song": Self.content["music"]!])
        #expect(a.video == b.video && a.audio == b.audio)
        let otherBytes = Self.keys(try Self.plan(), content: ["clip": String(repeating: "c", count: 64), "music": Self.content["music"]!])
        #expect(zip(a.video, otherBytes.video).allSatisfy { $0 != $1 })
        #expect(a.audio == otherBytes.audio)
    }

    @Test func noKeyWithoutTheSourcesContent() throws {
        let k = Self.keys(try Self.plan(), content: ["music": Self.content["music"]!])
        #expect(k.video.allSatisfy { $0 == nil })
        #expect(k.audio != nil)
        #expect(Self.keys(try Self.plan(), content: ["clip": Self.content["clip"]!]).audio == nil)
    }

    @Test func captionTextChangesOnlyItsChunk() throws {
        var edit = Edit(); edit.caption = "Hallo"
        let changed = try Self.changedChunks(edit)
        #expect(changed.video == [2] && !changed.audio)
    }

    @Test func opacityRampChangesOnlyItsChunk() throws {
        var edit = Edit(); edit.dip = "0.25"
        let changed = try Self.changedChunks(edit)
        #expect(changed.video == [3] && !changed.audio)
    }

    @Test func segmentSourceRangeChangesOnlyItsChunk() throws {
        var edit = Edit(); edit.middleSourceStart = "45"
        let changed = try Self.changedChunks(edit)
        #expect(changed.video == [4] && !changed.audio)
    }

    @Test func speedChangeChangesOnlyItsChunkOrTheAudio() throws {
        var faster = Edit(); faster.middleSourceDuration = "20"
        var changed = try Self.changedChunks(faster)
        #expect(changed.video == [4] && !changed.audio)
        var music = Edit(); music.musicSourceDuration = "30"
        changed = try Self.changedChunks(music)
        #expect(changed.video.isEmpty && changed.audio)
        // The algorithm changes the audio key only when the track changes speed.
        var spectral = Edit(); spectral.musicSourceDuration = "30"; spectral.musicAlgorithm = "spectral"
        var varispeed = spectral; varispeed.musicAlgorithm = "varispeed"
        #expect(Self.keys(try Self.plan(spectral)).audio == Self.keys(try Self.plan(music)).audio)
        #expect(Self.keys(try Self.plan(varispeed)).audio != Self.keys(try Self.plan(music)).audio)
        var unscaled = Edit(); unscaled.musicAlgorithm = "varispeed"
        #expect(Self.keys(try Self.plan(unscaled)).audio == Self.keys(try Self.plan()).audio)
        // A speed of exactly 1 written out is the same segment, with the same keys.
        let written = try Self.plan(Edit(middleSourceDuration: "10.0"))
        #expect(Self.keys(written).video == Self.keys(try Self.plan()).video)
    }

    @Test func encoderSettingChangesEveryVideoChunk() throws {
        var edit = Edit(); edit.crf = 24
        let changed = try Self.changedChunks(edit)
        #expect(changed.video == Array(0..<6) && !changed.audio)
        let plan = try Self.plan()
        #expect(Self.keys(plan, threads: 2).video.enumerated().allSatisfy { $0.element != Self.keys(plan).video[$0.offset] })
    }

    /// Writing alpha changes every video chunk (the frames differ), and only the video.
    @Test func alphaChangesEveryVideoChunk() throws {
        var withAlpha = try Self.plan(), without = try Self.plan()
        withAlpha.export.video.alpha = true
        without.export.video.alpha = nil
        let a = Self.keys(withAlpha), b = Self.keys(without)
        #expect(a.video.count == b.video.count && a.video.indices.allSatisfy { a.video[$0] != nil && a.video[$0] != b.video[$0] })
        #expect(a.audio == b.audio)
        #expect(b.video == Self.keys(try Self.plan()).video)
    }

    /// A PNG sequence's chunks (PNG pictures in QuickTime) never share a key with
    /// another output's, with alpha or without.
    @Test func aPNGSequenceHasKeysOfItsOwn() throws {
        var png = try Self.plan(), rgb = try Self.plan()
        png.export.fileType = .png; png.export.video.codec = "png"; png.export.video.alpha = true
        rgb.export.fileType = .png; rgb.export.video.codec = "png"; rgb.export.video.alpha = nil
        var prores = try Self.plan()
        prores.export.video.codec = "prores"; prores.export.video.profile = png.export.video.profile; prores.export.video.alpha = true
        let base = Self.keys(try Self.plan()).video, keys = Self.keys(png).video, rgbKeys = Self.keys(rgb).video
        #expect(keys.indices.allSatisfy { keys[$0] != nil && keys[$0] != base[$0] && keys[$0] != rgbKeys[$0] && rgbKeys[$0] != base[$0] })
        #expect(Self.keys(prores).video != keys)
    }

    @Test func musicChangesOnlyTheAudio() throws {
        var edit = Edit(); edit.musicStart = "5"
        let changed = try Self.changedChunks(edit)
        #expect(changed.video.isEmpty && changed.audio)
    }

    @Test func doublesAreWrittenExactly() {
        var a = CanonicalEncoder(), b = CanonicalEncoder()
        a.write("x", 0.1 + 0.2)
        b.write("x", 0.3)
        #expect(a.bytes != b.bytes, "0.1 + 0.2 and 0.3 print alike when rounded but differ")
        var c = CanonicalEncoder(), d = CanonicalEncoder()
        c.write("a", "b=1:c"); d.write("a", "b"); d.write("", "c")
        #expect(c.bytes != d.bytes, "a value cannot run into the next field")
    }

    /// The encoder formats numbers into bytes by hand (keys walk every frame); the bytes are
    /// exactly the `String` forms the format is defined by.
    @Test func fieldsAreTheirStringForms() {
        var rng = SplitMix64(seed: 0xB17E5)
        func field(_ name: String, _ value: String) -> String { "\(name)=\(value.utf8.count):\(value)\n" }
        func hex(_ v: Double) -> String { String(v.bitPattern, radix: 16) }
        for _ in 0..<3000 {
            let int = Int(truncatingIfNeeded: rng.next()) >> Int.random(in: 0...63, using: &rng)
            let doubles = (0..<6).map { _ in Bool.random(using: &rng) ? Double(bitPattern: rng.next()) : [0, -0.0, 1, 0.5, 1e-300].randomElement(using: &rng)! }
            let rational = Rational(Int64(truncatingIfNeeded: rng.next()) >> Int64.random(in: 1...63, using: &rng),
                                    Int64.random(in: 1...Int64.max >> Int64.random(in: 0...62, using: &rng), using: &rng))
            let transform = AffineTransform(a: doubles[0], b: doubles[1], c: doubles[2], d: doubles[3], tx: doubles[4], ty: doubles[5])
            let color = RGBAColor(r: UInt8.random(in: 0...255, using: &rng), g: 0, b: 255, a: UInt8.random(in: 0...255, using: &rng))
            let size = PixelSize(width: Int.random(in: 0...9000, using: &rng), height: Int.random(in: 0...9000, using: &rng))
            let rect = Rect(x: doubles[1], y: doubles[2], width: doubles[3], height: doubles[4])
            var encoder = CanonicalEncoder()
            encoder.write("int", int)
            encoder.write("none", nil as Int?)
            encoder.write("some", Optional(int))
            encoder.write("double", doubles[0])
            encoder.write("rational", rational)
            encoder.write("transform", transform)
            encoder.write("color", color)
            encoder.write("size", size)
            encoder.write("rect", rect)
            encoder.write("noRect", nil as Rect?)
            encoder.write("text", "é\n=1:")
            let expected = field("int", String(int)) + field("none", "none") + field("some", String(int)) + field("double", hex(doubles[0]))
                + field("rational", "\(rational.num)/\(rational.den)") + field("transform", doubles.map(hex).joined(separator: ","))
                + field("color", "\(color.r),\(color.g),\(color.b),\(color.a)") + field("size", "\(size.width)x\(size.height)")
                + field("rect", [rect.x, rect.y, rect.width, rect.height].map(hex).joined(separator: ",")) + field("noRect", "none")
                + field("text", "é\n=1:")
            #expect(encoder.bytes == Array(expected.utf8))
        }
    }
}
