import Testing
@testable import ReelCore
import ReelThreadTesting

/// `export.audioOutputs`: parsed and planned in order with ISO 639-2 codes, refused with the JSON
/// path when an entry names the wrong tracks, and part of the audio task's content key.
@Suite(.blocking) struct AudioOutputValidationTests {
    static func text(_ outputs: String, fileType: String = "mp4") -> String {
        #"""
        {"formatVersion": 1, "assets": {"m": {"url": "m.m4a"}}, "tracks": [
          {"id": 1, "mediaType": "audio", "segments": [{"asset": "m", "at": 0}]},
          {"id": 2, "mediaType": "audio", "segments": [{"asset": "m", "at": 0}]},
          {"id": 3, "mediaType": "audio", "segments": [{"asset": "m", "at": 0}]},
          {"id": 4, "mediaType": "video", "segments": []}],
         "videoComposition": {"renderSize": {"width": 64, "height": 64}},
         "audioMix": [{"track": 1, "volume": 0.5, "duck": {"under": [2, 3]}}],
         "export": {"fileType": "\#(fileType)", "audioOutputs": \#(outputs)}}
        """#
    }

    static let two = #"[{"language": "en", "title": "English", "tracks": [1, 2]}, {"language": "fr-CA", "tracks": [3, 1]}]"#

    @Test func outputsArePlannedInOrderAndEachMixHasItsTracks() throws {
        let plan = try Fixtures.plan(Self.text(Self.two), assets: Fixtures.ruleAssets)
        let outputs = try #require(plan.export.audioOutputs)
        #expect(outputs.map(\.language.iso639_2T) == ["eng", "fra"])
        #expect(outputs.map(\.title) == ["English", nil])
        #expect(outputs.map(\.tracks) == [[1, 2], [3, 1]])
        #expect(plan.audioStreamCount == 2)
        let mixes = plan.audioMixPlans
        #expect(mixes.map { $0.audioTracks.map(\.id) } == [[1, 2], [1, 3]])
        #expect(mixes.allSatisfy { $0.export.audioOutputs == nil })
        // The bed keeps its parameters, and ducks only under the voices of its own output.
        #expect(mixes.map { $0.audioTracks[0].volume } == [0.5, 0.5])
        #expect(mixes.map { $0.audioTracks[0].duck?.under } == [[2], [3]])
        // Without the key: one mix of every track, the plan itself.
        let single = try Fixtures.plan(Self.text("null").replacingOccurrences(of: #", "audioOutputs": null"#, with: ""),
                                       assets: Fixtures.ruleAssets)
        #expect(single.export.audioOutputs == nil && single.audioStreamCount == 1 && single.audioMixPlans == [single])
    }

    @Test func wrongEntriesAreReportedWithTheirPaths() {
        #expect(Fixtures.problems(Self.text("[]"))
                == ["export.audioOutputs: needs at least one output; leave audioOutputs out for one mix of every audio track"])
        #expect(Fixtures.problems(Self.text(#"[{"language": "en", "tracks": [1], "volume": 1}]"#))
                == ["export.audioOutputs[0].volume: unknown key; expected one of: language, title, tracks"])
        #expect(Fixtures.problems(Self.text(#"[{"tracks": [1]}]"#)) == ["export.audioOutputs[0].language: is required"])
        #expect(Fixtures.problems(Self.text(#"[{"language": "english", "title": "", "tracks": []}]"#)) == [
            #"export.audioOutputs[0].language: "english" is not a BCP 47 language tag: it must start with a two- or three-letter language code, such as "en", "pt-BR" or "yue""#,
            "export.audioOutputs[0].title: must not be empty (leave it out instead)",
            "export.audioOutputs[0].tracks: must name at least one audio track to mix into this output",
        ])
        #expect(Fixtures.problems(Self.text(#"[{"language": "en", "tracks": [1]}, {"language": "de", "tracks": [4, 9, 2, 2]}]"#)) == [
            "export.audioOutputs[1].tracks[0]: track 4 is a video track; an audio output mixes audio tracks",
            "export.audioOutputs[1].tracks[1]: no track with id 9",
            "export.audioOutputs[1].tracks[3]: track 2 is listed twice",
        ])
        // Two outputs may share a language (a main mix and an audio description).
        #expect(Fixtures.problems(Self.text(#"[{"language": "en", "tracks": [1]}, {"language": "en", "title": "Described", "tracks": [1, 2]}]"#)).isEmpty)
    }

    @Test func containersThatCannotHoldTheOutputsAreRefused() {
        #expect(Fixtures.problems(Self.text(Self.two, fileType: "wav"))
                == ["export.audioOutputs: has 2 outputs, but a WAV file holds one audio stream: keep one output, or write M4A, MP4, MOV or WebM"])
        #expect(Fixtures.problems(Self.text(#"[{"language": "en", "tracks": [1]}]"#, fileType: "wav")).isEmpty)
        #expect(Fixtures.problems(Self.text(Self.two, fileType: "m4a")).isEmpty)
        // An HLS ladder writes each output as a rendition of its AUDIO group.
        #expect(Fixtures.problems(Self.text(Self.two, fileType: "hls")).isEmpty)
    }

    /// Which tracks each output mixes is in the audio key; languages and titles (tags the
    /// finaliser writes) are not.
    @Test func theOutputsAreInTheAudioKey() throws {
        let content = ["m": String(repeating: "a", count: 64)]
        func key(_ outputs: String) throws -> String? {
            ContentKey.audio(try Fixtures.plan(Self.text(outputs), assets: Fixtures.ruleAssets), assetContent: content)
        }
        let base = try #require(try key(Self.two))
        #expect(try key(#"[{"language": "en", "title": "English", "tracks": [1, 2]}, {"language": "fr-CA", "tracks": [3]}]"#) != base)
        #expect(try key(#"[{"language": "en", "title": "English", "tracks": [1, 2]}]"#) != base)
        #expect(try key(#"[{"language": "de", "tracks": [1, 2]}, {"language": "it", "title": "Italiano", "tracks": [3, 1]}]"#) == base)
        let single = ContentKey.audio(try Fixtures.plan(Self.text("null").replacingOccurrences(of: #", "audioOutputs": null"#, with: ""),
                                                        assets: Fixtures.ruleAssets), assetContent: content)
        #expect(single != nil && single != base)
    }
}
