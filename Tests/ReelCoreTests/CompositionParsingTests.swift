import Testing
@testable import ReelCore
import ReelThreadTesting

@Suite("Composition parsing", .blocking)
struct CompositionParsingTests {
    @Test func designExampleParses() throws {
        let c = try Fixtures.parse(Fixtures.designExample)
        #expect(c.formatVersion == 1)
        #expect(c.assets["intro"] == AssetReference(url: "clips/intro.mp4"))
        #expect(c.tracks.map(\.id) == [1, 2])
        #expect(c.tracks[0].segments == [
            .media(MediaSegment(asset: "intro", at: .zero, sourceRange: TimeRange(start: .zero, duration: Rational(4)))),
            .media(MediaSegment(asset: "main", at: Rational(4))),
            .media(MediaSegment(asset: "logo", at: Rational(9), duration: Rational(3))),
            .empty(TimeRange(start: Rational(12), duration: Rational(1))),
        ])
        #expect(c.audioMix == [AudioMixParameters(track: 2, volume: 0.8, volumeRamps: [
            RampSpec(from: 0.8, to: 0, timeRange: TimeRange(start: Rational(10), duration: Rational(3)))])])
        let vc = try #require(c.videoComposition)
        #expect(vc.renderSize == PixelSize(width: 1280, height: 720))
        #expect(vc.frameDuration == Rational(1, 30))
        let layer = try #require(vc.instructions?.first?.layerInstructions.first)
        #expect(layer.transform == .preferred)
        #expect(layer.transformRamps.first?.to == AffineTransform(a: 0.5, b: 0, c: 0, d: 0.5, tx: 320, ty: 180))
        #expect(layer.opacityRamps == [RampSpec(from: 1, to: 0, timeRange: TimeRange(start: Rational(3), duration: Rational(1)))])
        #expect(layer.cropRectangle == Rect(x: 0, y: 0, width: 1280, height: 720))
        #expect(vc.overlays.count == 2)
        #expect(vc.overlays[0].content == .image(asset: "logo"))
        #expect(vc.overlays[0].animations == [OverlayAnimation(change: .rotation(.fromTo(0, -6.283185, duration: Rational(2), repeatCount: .forever)))])
        #expect(vc.overlays[1].content == .text(OverlayText(text: "加点水印看看效果", font: "sans-serif", fontSize: 30, color: .white)))
        #expect(vc.overlays[1].timeRange == nil)
        #expect(c.export == ExportOptions(preset: .highest, fileType: .mp4, optimizeForNetworkUse: true))
    }

    @Test func defaultsWhenOptionalPartsAreAbsent() throws {
        let c = try Fixtures.parse(#"""
        {"formatVersion": 1, "assets": {}, "tracks": [],
         "videoComposition": {"instructions": [{"timeRange": {"start": 0, "duration": 1},
            "layerInstructions": [{"track": 1}]}],
           "overlays": [{"text": "hi", "frame": {"x": 0, "y": 0, "width": 10, "height": 10},
                         "animations": [{"property": "position", "from": {"x": 0, "y": 0}, "to": {"x": 5, "y": 6}, "duration": "1/3"}]}]}}
        """#)
        #expect(c.audioMix.isEmpty)
        #expect(c.export == ExportOptions())
        let vc = try #require(c.videoComposition)
        #expect(vc.renderSize == nil && vc.frameDuration == nil)
        #expect(vc.instructions?.first?.backgroundColor == .black)
        #expect(vc.instructions?.first?.layerInstructions.first == LayerInstruction(track: 1, transform: .preferred, opacity: 1))
        #expect(vc.overlays.first?.content == .text(OverlayText(text: "hi", font: "sans-serif", fontSize: 32, color: .white)))
        #expect(vc.overlays.first?.opacity == 1)
        #expect(vc.overlays.first?.animations.first == OverlayAnimation(
            change: .position(.fromTo(Point(x: 0, y: 0), Point(x: 5, y: 6), duration: Rational(1, 3)))))
    }

    @Test(arguments: [
        ("0.1", Rational(1, 10)),
        ("12.345678", Rational(12_345_678, 1_000_000) ),
        (#""1001/30000""#, Rational(1001, 30000)),
        (#""7""#, Rational(7)),
        (#""-1/2""#, Rational(-1, 2)),
        ("3", Rational(3)),
    ])
    func readsTimesExactly(_ json: String, _ expected: Rational) throws {
        let c = try Fixtures.parse(#"{"formatVersion": 1, "assets": {}, "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": \#(json)}]}]}"#)
        #expect(c.tracks[0].segments[0] == .media(MediaSegment(asset: "a", at: expected)))
    }

    private static let atPath = "tracks[0].segments[0].at"

    @Test(arguments: [
        ("0.0333333", "\(atPath): time 0.0333333 has more than 6 decimals; write it exactly as \"N/D\""),
        ("1e2", "\(atPath): write times without an exponent: a decimal number of seconds or \"N/D\""),
        (#""1/0""#, "\(atPath): time \"1/0\" has a zero denominator"),
        (#""1.5""#, "\(atPath): must be a time: seconds as a number or a string \"N/D\", not \"1.5\""),
        (#""a/b""#, "\(atPath): must be a time: seconds as a number or a string \"N/D\", not \"a/b\""),
        ("true", "\(atPath): must be a time: seconds as a number or a string \"N/D\", not a boolean"),
    ])
    func rejectsBadTimes(_ json: String, _ expected: String) {
        let text = #"{"formatVersion": 1, "assets": {}, "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": \#(json)}]}]}"#
        #expect(Fixtures.problems(text) == [expected])
    }

    @Test func collectsEveryStructuralProblem() {
        let text = #"""
        {"formatVersion": "1", "assets": {"a": {"url": "a.mp4", "URL": "x"}},
         "tracks": [{"id": 1.5, "mediaType": "caption", "segments": [{"asset": "a"}, {"empty": {"start": 0}}]}],
         "audioMix": {},
         "videoComposition": {"renderSize": {"width": 1280}, "frameDuration": "1/30", "colour": 1,
           "instructions": [{"timeRange": {"start": 0, "duration": 1}, "backgroundColor": "black",
              "layerInstructions": [{"track": 1, "transform": "upright", "opacity": "1"}]}],
           "overlays": [{"image": "s", "text": "t", "frame": {"x": 0, "y": 0, "width": 1, "height": 1}},
                        {"image": "s", "fontSize": 3, "frame": {"x": 0, "y": 0, "width": 1, "height": 1}},
                        {"frame": {"x": 0, "y": 0, "width": 1, "height": 1},
                         "text": "x", "animations": [{"property": "spin", "from": 0, "to": 1, "duration": 1}]}]},
         "export": {"preset": "ultra", "fileType": "avi", "optimizeForNetworkUse": 1, "video": {"crf": "high"}, "audio": {"rate": 1}},
         "extra": null}
        """#
        #expect(Fixtures.problems(text) == [
            "extra: unknown key; expected one of: formatVersion, assets, tracks, audioMix, videoComposition, export",
            "formatVersion: must be an integer, not a string",
            "assets.a.URL: unknown key; expected one of: url",
            "tracks[0].id: must be an integer, not 1.5",
            "tracks[0].mediaType: must be one of \"video\", \"audio\", \"subtitle\", not \"caption\"",
            "tracks[0].segments[1].empty.duration: is required",
            "audioMix: must be an array, not an object",
            "videoComposition.colour: unknown key; expected one of: renderSize, frameDuration, instructions, overlays, filters, captions, "
            + "colorPrimaries, colorTransferFunction, colorYCbCrMatrix, toneMapping, masteringDisplay, contentLightLevel",
            "videoComposition.renderSize.height: is required",
            "videoComposition.instructions[0].backgroundColor: must be a colour \"#RRGGBB\" or \"#RRGGBBAA\", not \"black\"",
            "videoComposition.instructions[0].layerInstructions[0].transform: must be \"preferred\", \"fit\", \"fill\" or a transform object {\"a\",\"b\",\"c\",\"d\",\"tx\",\"ty\"}, not \"upright\"",
            "videoComposition.instructions[0].layerInstructions[0].opacity: must be a number, not a string",
            "videoComposition.overlays[0]: give either image or text, not both",
            "videoComposition.overlays[1].fontSize: only allowed for a text overlay",
            "videoComposition.overlays[2].animations[0].property: must be one of \"rotation\", \"opacity\", \"position\", \"scale\", not \"spin\"",
            "export.preset: must be one of \"highest\", \"medium\", \"low\", \"hevcHighest\", \"prores422\", \"prores4444\", not \"ultra\"",
            "export.fileType: must be one of \"mp4\", \"mov\", \"m4a\", \"wav\", \"webm\", \"hls\", \"png\", not \"avi\"",
            "export.optimizeForNetworkUse: must be true or false, not a number",
            "export.video.crf: must be an integer, not a string",
            "export.audio.rate: unknown key; expected one of: codec, bitRate, sampleRate, channels, loudness",
        ])
    }

    @Test func segmentShapeRules() {
        let text = #"""
        {"formatVersion": 1, "assets": {}, "tracks": [{"id": 1, "mediaType": "video", "segments": [
          {"asset": "a", "at": 0, "sourceRange": {"start": 0, "duration": 1}, "duration": 1},
          {"empty": {"start": 0, "duration": 1}, "at": 3}]}]}
        """#
        // sourceRange with duration is a speed change, checked against the asset by validation.
        #expect(Fixtures.problems(text) == ["tracks[0].segments[1].at: unknown key; expected one of: empty"])
    }

    @Test func audioTimePitchAlgorithmIsOneOfTwoNames() throws {
        func text(_ mix: String) -> String {
            #"{"formatVersion": 1, "assets": {}, "tracks": [{"id": 2, "mediaType": "audio", "segments": []}], "audioMix": [\#(mix)]}"#
        }
        #expect(try Fixtures.parse(text(#"{"track": 2}"#)).audioMix[0].audioTimePitchAlgorithm == .spectral)
        #expect(try Fixtures.parse(text(#"{"track": 2, "audioTimePitchAlgorithm": "varispeed"}"#)).audioMix[0].audioTimePitchAlgorithm == .varispeed)
        #expect(Fixtures.problems(text(#"{"track": 2, "audioTimePitchAlgorithm": "timeDomain"}"#))
                == [#"audioMix[0].audioTimePitchAlgorithm: unknown algorithm "timeDomain"; expected one of: spectral, varispeed"#])
        #expect(Fixtures.problems(text(#"{"track": 2, "audioTimePitchAlgorithm": 1}"#))
                == ["audioMix[0].audioTimePitchAlgorithm: must be a string, not a number"])
    }

    @Test func overlayNeedsContent() {
        let text = #"{"formatVersion": 1, "assets": {}, "tracks": [], "videoComposition": {"overlays": [{"frame": {"x": 0, "y": 0, "width": 1, "height": 1}}]}}"#
        #expect(Fixtures.problems(text) == ["videoComposition.overlays[0]: needs image (a still asset id) or text"])
    }

    @Test func syntaxErrorIsOneProblemWithPosition() {
        #expect(Fixtures.problems("{\n \"formatVersion\": 1,,\n}") == ["invalid JSON at 2:21: unexpected ',', expected a string key"])
    }

    @Test func rootMustBeObject() {
        #expect(Fixtures.problems("[]") == ["must be an object, not an array"])
    }
}
