import Testing
@testable import ReelCore
import ReelThreadTesting

/// A segment without `at` starts where the track's previous segment ends, so segments after
/// one whose length comes from its file (a template's voice-over) follow it.
@Suite("Segments that follow", .blocking)
struct SegmentSequenceTests {
    static func starts(_ plan: RenderPlan, track: Int = 0) -> [Rational] {
        plan.videoTracks[track].segments.map(\.at)
    }

    @Test func segmentsWithoutAtFollowEachOtherInFileOrder() throws {
        let json = Fixtures.composition(tracks: #"""
            [{"id": 1, "mediaType": "video", "segments": [
               {"asset": "a"},
               {"asset": "s", "duration": 2},
               {"empty": {"start": 12, "duration": 1}},
               {"asset": "n"},
               {"asset": "a", "at": 20, "sourceRange": {"start": 0, "duration": 1}},
               {"asset": "s", "duration": "1/3"}]},
             {"id": 2, "mediaType": "audio", "segments": [{"asset": "m", "sourceRange": {"start": 0, "duration": 3}}, {"asset": "a"}]}]
            """#)
        let plan = try Fixtures.plan(json, assets: Fixtures.ruleAssets)
        #expect(Self.starts(plan) == [Rational(0), Rational(10), Rational(13), Rational(20), Rational(21)])
        #expect(plan.audioTracks[0].segments.map(\.at) == [Rational(0), Rational(3)])
        #expect(plan.duration == Rational(64, 3))
    }

    /// A segment after one that cannot be placed is not placed either, and says nothing: the
    /// problem is the earlier segment's.
    @Test func aSegmentAfterOneThatCannotBePlacedWaitsForIt() {
        let json = Fixtures.composition(tracks: #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "b"}, {"asset": "a"}]}]"#)
        #expect(Fixtures.problems(json) == [#"tracks[0].segments[0].asset: unknown asset "b""#])
    }

    /// A malformed `at` is an error, never read as "after the previous segment".
    @Test func aMalformedAtIsReported() {
        let json = Fixtures.composition(tracks: #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": "soon"}]}]"#)
        #expect(Fixtures.problems(json) == [#"tracks[0].segments[0].at: must be a time: seconds as a number or a string "N/D", not "soon""#])
    }

    /// The reported case: a clip and a voice-over of any length, each followed in its track by
    /// what comes after it (an outro, a sting), and the composition as long as the longer.
    @Test(arguments: [(Rational(7), Rational(3)), (Rational(5, 2), Rational(19, 2))])
    func whatFollowsAVariableLengthAssetMovesWithIt(_ main: Rational, _ voice: Rational) throws {
        let template = try #require(Template.parse(#"""
            {"formatVersion": 1,
             "variables": {"main": {"type": "asset"}, "voice": {"type": "asset"}},
             "assets": {"intro": {"url": "intro.png"}, "main": {"url": "{{main}}"}, "outro": {"url": "outro.png"},
                        "voice": {"url": "{{voice}}"}, "sting": {"url": "sting.wav"}},
             "tracks": [
               {"id": 1, "mediaType": "video", "segments": [{"asset": "intro", "duration": 1}, {"asset": "main"}, {"asset": "outro", "duration": 2}]},
               {"id": 2, "mediaType": "audio", "segments": [{"asset": "voice"}, {"asset": "sting"}]}
             ],
             "videoComposition": {"renderSize": {"width": 640, "height": 360}, "frameDuration": "1/25"}}
            """#))
        let resolved = try template.resolve([VariableAssignment(name: "main", value: "clip.mp4"), VariableAssignment(name: "voice", value: "take.m4a")],
                                            currentDirectory: "/v").get()
        let plan = try CompositionValidator.validate(resolved.composition, assets: Fixtures.described([
            "intro": Fixtures.still(640, 360), "outro": Fixtures.still(640, 360),
            "main": Fixtures.movie(640, 360, duration: main, frameDuration: Rational(1, 25), audio: false),
            "voice": Fixtures.sound(duration: voice), "sting": Fixtures.sound(duration: Rational(1)),
        ])).get()
        #expect(Self.starts(plan) == [Rational(0), Rational(1), Rational(1) + main])
        #expect(plan.audioTracks[0].segments.map(\.at) == [Rational(0), voice])
        #expect(plan.duration == max(Rational(3) + main, voice + Rational(1)))
    }
}
