import Testing
@testable import ReelCore
import ReelThreadTesting

@Suite("Subtitle tracks", .blocking)
struct SubtitleTrackValidationTests {
    /// `en`: cues 1–2 s, 4–5 s and 9–12 s; `fr`: one cue 0.5–1.5 s.
    static let english = SubtitleDocument(format: .srt, cues: [
        SubtitleCue(start: 1, end: 2, text: "one"),
        SubtitleCue(start: 4, end: 5, text: "two"),
        SubtitleCue(start: 9, end: 12, text: "three"),
    ])
    static let french = SubtitleDocument(format: .webVTT, cues: [SubtitleCue(start: Rational(1, 2), end: Rational(3, 2), text: "un")])

    static let assets = Fixtures.ruleAssets.merging(Fixtures.described([
        "en": AssetDescription(kind: .subtitle, duration: nil, video: nil, audio: nil, subtitles: english),
        "fr": AssetDescription(kind: .subtitle, duration: nil, video: nil, audio: nil, subtitles: french),
    ])) { $1 }

    static let assetsJSON = #""assets": {"a": {"url": "a.mp4"}, "m": {"url": "m.m4a"}, "s": {"url": "s.png"}, "en": {"url": "en.srt"}, "fr": {"url": "fr.vtt"}}"#

    /// `a` (10 s of video) on track 1, then `subtitleTracks`.
    func composition(_ subtitleTracks: String...) -> String {
        Fixtures.composition(assets: Self.assetsJSON,
                             tracks: "[" + ([#"{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}"#] + subtitleTracks).joined(separator: ", ") + "]")
    }

    func problems(_ json: String) -> [String] { Fixtures.problems(json, assets: Self.assets) }

    @Test func subtitleTracksArePlannedWithPlacedCuesCutAtTheEnd() throws {
        let plan = try Fixtures.plan(composition(
            #"{"id": 2, "mediaType": "subtitle", "language": "en", "title": "English", "segments": [{"asset": "en", "at": 0}]}"#,
            #"{"id": 3, "mediaType": "subtitle", "language": "fr-CA", "default": true, "segments": [{"asset": "fr", "sourceRange": {"start": 1, "duration": 1}, "at": 6}, {"asset": "en", "sourceRange": {"start": 4, "duration": 1}, "at": 2}]}"#),
            assets: Self.assets)
        // Subtitle tracks do not lengthen the composition: the last English cue is cut at 10 s.
        #expect(plan.duration == 10)
        let tracks = try #require(plan.subtitleTracks)
        #expect(tracks.map(\.id) == [2, 3])
        #expect(tracks[0].language.iso639_2T == "eng" && tracks[0].title == "English" && !tracks[0].isDefault)
        #expect(tracks[0].cues == [SubtitleCue(start: 1, end: 2, text: "one"), SubtitleCue(start: 4, end: 5, text: "two"),
                                   SubtitleCue(start: 9, end: 10, text: "three")])
        // Sorted by time: "two" (file 4–5 s at 2 s), then "un" cut to file 1–1.5 s at 6 s.
        #expect(tracks[1].language.tag == "fr-CA" && tracks[1].language.iso639_2T == "fra" && tracks[1].isDefault && tracks[1].title == nil)
        #expect(tracks[1].cues == [SubtitleCue(start: 2, end: 3, text: "two"), SubtitleCue(start: 6, end: Rational(13, 2), text: "un")])
        // Subtitle assets are not sources the renderer opens.
        #expect(plan.assets["en"] == nil && plan.assets["fr"] == nil)
    }

    @Test func noSubtitleTracksLeavesThePlanAsBefore() throws {
        let plan = try Fixtures.plan(composition(), assets: Self.assets)
        #expect(plan.subtitleTracks == nil)
    }

    @Test func subtitleKeysBelongToSubtitleTracks() {
        #expect(problems(composition(#"{"id": 2, "mediaType": "subtitle", "segments": []}"#)) == ["tracks[1].language: is required"])
        #expect(problems(Fixtures.composition(assets: Self.assetsJSON,
                                              tracks: #"[{"id": 1, "mediaType": "video", "language": "en", "title": "x", "default": true, "segments": [{"asset": "a", "at": 0}]}]"#)) == [
            #"tracks[0].language: only for subtitle tracks ("mediaType": "subtitle")"#,
            #"tracks[0].title: only for subtitle tracks ("mediaType": "subtitle")"#,
            #"tracks[0].default: only for subtitle tracks ("mediaType": "subtitle")"#,
        ])
    }

    @Test func brokenSubtitleTracksAreReportedAtTheirPaths() {
        #expect(problems(composition(
            #"{"id": 2, "mediaType": "subtitle", "language": "english", "segments": [{"asset": "en", "at": 0}]}"#,
            #"{"id": 3, "mediaType": "subtitle", "language": "fr", "default": true, "title": "", "segments": [{"asset": "a", "at": 0}, {"asset": "fr", "at": 1, "duration": 2}]}"#,
            #"{"id": 4, "mediaType": "subtitle", "language": "de", "default": true, "segments": [{"asset": "en", "at": 0}, {"asset": "fr", "at": 11, "sourceRange": {"start": 0, "duration": 0}}, {"asset": "fr", "at": 5}]}"#
        )) == [
            #"tracks[2].segments[0].asset: asset "a" is not a subtitle file (.srt or .vtt); a subtitle track holds subtitle files"#,
            "tracks[2].segments[1].duration: only for still images; trim a subtitle file with sourceRange",
            "tracks[3].segments[1].sourceRange.duration: must be > 0",
            "tracks[3].segments[2]: overlaps segments[0] from 5 s to 6.5 s",
            #"tracks[1].language: "english" is not a BCP 47 language tag: it must start with a two- or three-letter language code, such as "en", "pt-BR" or "yue""#,
            "tracks[2].title: must not be empty (leave it out instead)",
            "tracks[3].default: tracks[2] is already the default subtitle track; at most one can be",
        ])
    }

    @Test func subtitleFilesAreRefusedInVideoAndAudioTracksAndMixes() {
        let json = Fixtures.composition(assets: Self.assetsJSON, tracks: """
            [{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}, {"asset": "en", "at": 10}]},
             {"id": 2, "mediaType": "audio", "segments": [{"asset": "fr", "at": 0}]},
             {"id": 3, "mediaType": "subtitle", "language": "en", "segments": []}]
            """, extra: #""audioMix": [{"track": 3, "volume": 0.5}]"#)
        #expect(problems(json) == [
            #"tracks[0].segments[1].asset: asset "en" is a subtitle file; place it in a subtitle track ("mediaType": "subtitle") or in videoComposition.captions"#,
            #"tracks[1].segments[0].asset: asset "fr" is a subtitle file; place it in a subtitle track ("mediaType": "subtitle") or in videoComposition.captions"#,
            "audioMix[0].track: track 3 is a subtitle track; audioMix needs an audio track",
        ])
    }

    @Test func malformedSubtitleFilesGiveOneProblemPerCue() {
        var assets = Self.assets
        assets["en"] = .malformed(reasons: ["en.srt line 2 (cue 1): bad timing", "en.srt line 9 (cue 3): bad text"])
        #expect(Fixtures.problems(composition(#"{"id": 2, "mediaType": "subtitle", "language": "en", "segments": [{"asset": "en", "at": 0}]}"#), assets: assets) == [
            "assets.en.url: en.srt line 2 (cue 1): bad timing",
            "assets.en.url: en.srt line 9 (cue 3): bad text",
        ])
    }

    @Test func overlappingCuesAreShownTogetherOneSampleAtATime() {
        let cues = [SubtitleCue(start: 0, end: 4, text: "A"), SubtitleCue(start: 2, end: 6, text: "B"),
                    SubtitleCue(start: 6, end: 7, text: "C"), SubtitleCue(start: 8, end: 9, text: "D", marks: [SubtitleTimeMark(offset: 0, time: Rational(17, 2))])]
        #expect(SubtitleCue.flattened(cues) == [
            SubtitleCue(start: 0, end: 2, text: "A"), SubtitleCue(start: 2, end: 4, text: "A\nB"), SubtitleCue(start: 4, end: 6, text: "B"),
            SubtitleCue(start: 6, end: 7, text: "C"), SubtitleCue(start: 8, end: 9, text: "D"),
        ])
        // Without overlaps (and marks) the cues come out as they went in.
        let plain = [SubtitleCue(start: 1, end: 2, text: "x"), SubtitleCue(start: 2, end: 3, text: "y")]
        #expect(SubtitleCue.flattened(plain.reversed()) == plain)
    }
}
