import Testing
@testable import ReelCore
import ReelThreadTesting

/// `audioMix[].duck`: parsed with its defaults, and refused with the JSON path when it names
/// the wrong tracks or figures out of range.
@Suite(.blocking) struct DuckingValidationTests {
    static func text(_ duck: String) -> String {
        #"""
        {"formatVersion": 1, "assets": {"m": {"url": "m.m4a"}}, "tracks": [
          {"id": 1, "mediaType": "audio", "segments": [{"asset": "m", "at": 0}]},
          {"id": 2, "mediaType": "audio", "segments": [{"asset": "m", "at": 0}]},
          {"id": 3, "mediaType": "video", "segments": []}],
         "videoComposition": {"renderSize": {"width": 64, "height": 64}},
         "audioMix": [{"track": 1, "duck": \#(duck)}]}
        """#
    }

    @Test func defaultsAndPlan() throws {
        let duck = try #require(try Fixtures.parse(Self.text(#"{"under": [2]}"#)).audioMix[0].duck)
        #expect(duck == Ducking(under: [2], amount: 12, threshold: -40, attack: 0.1, release: 0.5))
        let given = try #require(try Fixtures.parse(Self.text(#"{"under": [2], "amount": 9, "threshold": -30, "attack": 0, "release": 2}"#)).audioMix[0].duck)
        #expect(given == Ducking(under: [2], amount: 9, threshold: -30, attack: 0, release: 2))
        #expect(Fixtures.problems(Self.text(#"{"under": [2]}"#)).isEmpty)
    }

    @Test func wrongTracksAndFigures() {
        #expect(Fixtures.problems(Self.text(#"{"amount": 6}"#)) == ["audioMix[0].duck.under: is required"])
        #expect(Fixtures.problems(Self.text(#"{"under": [2], "speed": 1}"#))
                == ["audioMix[0].duck.speed: unknown key; expected one of: under, amount, threshold, attack, release"])
        #expect(Fixtures.problems(Self.text(#"{"under": []}"#))
                == ["audioMix[0].duck.under: must name at least one audio track whose sound makes track 1 dip"])
        #expect(Fixtures.problems(Self.text(#"{"under": [1, 3, 9, 2, 2]}"#)) == [
            "audioMix[0].duck.under[0]: track 1 cannot duck under itself",
            "audioMix[0].duck.under[1]: track 3 is a video track; a track ducks under audio tracks",
            "audioMix[0].duck.under[2]: no track with id 9",
            "audioMix[0].duck.under[4]: track 2 is listed twice",
        ])
        #expect(Fixtures.problems(Self.text(#"{"under": [2], "amount": -12, "threshold": 3, "attack": -1, "release": 61}"#)) == [
            "audioMix[0].duck.amount: must be a positive number of decibels, at most 96 (12 makes the track 12 dB quieter)",
            "audioMix[0].duck.threshold: must be a level in dBFS between -120 and 0",
            "audioMix[0].duck.attack: must be between 0 and 60 seconds",
            "audioMix[0].duck.release: must be between 0 and 60 seconds",
        ])
    }

    /// The audio task's content key covers the ducking: another figure is another mix.
    @Test func theDuckingIsInTheAudioKey() throws {
        let content = ["m": String(repeating: "a", count: 64)]
        func key(_ duck: String) throws -> String? {
            ContentKey.audio(try Fixtures.plan(Self.text(duck), assets: Fixtures.ruleAssets), assetContent: content)
        }
        let base = try key(#"{"under": [2]}"#)
        #expect(base != nil)
        for other in [#"{"under": [2], "amount": 6}"#, #"{"under": [2], "threshold": -30}"#,
                      #"{"under": [2], "attack": 0.2}"#, #"{"under": [2], "release": 1}"#] {
            #expect(try key(other) != base, "\(other)")
        }
        let unducked = #"{"formatVersion": 1, "assets": {"m": {"url": "m.m4a"}}, "tracks": [{"id": 1, "mediaType": "audio", "segments": [{"asset": "m", "at": 0}]}, {"id": 2, "mediaType": "audio", "segments": [{"asset": "m", "at": 0}]}, {"id": 3, "mediaType": "video", "segments": []}], "videoComposition": {"renderSize": {"width": 64, "height": 64}}}"#
        #expect(ContentKey.audio(try Fixtures.plan(unducked, assets: Fixtures.ruleAssets), assetContent: content) != base)
    }
}
