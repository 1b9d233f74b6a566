import Testing
@testable import ReelCore
import ReelThreadTesting

/// Captions (videoComposition.captions) and loudness normalisation (export.audio.loudness)
/// as the pure core plans them.
@Suite("Captions and loudness planning", .blocking)
struct CaptionAndLoudnessPlanningTests {
    /// Cues 1–3 s "Never gonna" with a mark at 2 s on "gonna"; 2.5–4 s "overlap"; 21–23 s "late".
    static let words = SubtitleDocument(format: .webVTT, cues: [
        SubtitleCue(start: 1, end: 3, text: "Never gonna", marks: [SubtitleTimeMark(offset: 6, time: 2)]),
        SubtitleCue(start: Rational(5, 2), end: 4, text: "overlap"),
        SubtitleCue(start: 21, end: 23, text: "late"),
    ])
    static let assets = Fixtures.ruleAssets.merging(Fixtures.described([
        "words": AssetDescription(kind: .subtitle, duration: nil, video: nil, audio: nil, subtitles: words),
        "clip": Fixtures.movie(1280, 720, duration: 30),
        "music": Fixtures.sound(duration: 30),
    ])) { $1 }

    /// 30 s of `clip` at 10 fps (2 s GOPs) and `music`, with `videoComposition` extras and `export.audio` extras.
    func composition(captions: String? = nil, audio: String? = nil) -> String {
        #"""
        {"formatVersion": 1, "assets": {"clip": {"url": "c.mp4"}, "music": {"url": "m.m4a"}, "words": {"url": "w.vtt"}, "a": {"url": "a.mp4"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "clip", "at": 0}]},
                    {"id": 2, "mediaType": "audio", "segments": [{"asset": "music", "at": 0}]}],
         "videoComposition": {"frameDuration": "1/10"\#(captions.map { ", \"captions\": " + $0 } ?? "")}\#(audio.map { ", \"export\": {\"audio\": " + $0 + "}" } ?? "")}
        """#
    }

    func problems(_ json: String) -> [String] { Fixtures.problems(json, assets: Self.assets) }

    // MARK: - Captions

    @Test func captionStylesGetTheirDefaultsForTheRenderSize() throws {
        let plan = try Fixtures.plan(composition(captions: ##"[{"asset": "words"}, {"asset": "words", "highlight": "#FFFF00", "style": {"font": "serif", "fontSize": 64, "color": "#00FF00", "backgroundColor": "#00000000", "outlineColor": "#FF0000", "outlineWidth": 3, "position": "top", "margin": 20, "maxWidth": 0.5}}]"##),
                                     assets: Self.assets)
        let captions = try #require(plan.captions)
        #expect(captions.count == 2)
        #expect(captions[0].style == PlannedCaptionStyle(font: "sans-serif", fontSize: 40, color: .white,
                                                         backgroundColor: RGBAColor(r: 0, g: 0, b: 0, a: 0x99), outlineColor: .black,
                                                         outlineWidth: 0, position: .bottom, margin: 36, maxWidth: 0.9))
        #expect(captions[0].highlight == nil)
        #expect(captions[1].style == PlannedCaptionStyle(font: "serif", fontSize: 64, color: RGBAColor(r: 0, g: 255, b: 0),
                                                         backgroundColor: RGBAColor(r: 0, g: 0, b: 0, a: 0), outlineColor: RGBAColor(r: 255, g: 0, b: 0),
                                                         outlineWidth: 3, position: .top, margin: 20, maxWidth: 0.5))
        #expect(captions[1].highlight == RGBAColor(r: 255, g: 255, b: 0))
        // Cut at the composition's end (30 s): all three cues stay.
        #expect(captions[0].cues == Self.words.cues)
    }

    @Test func brokenCaptionsAreReportedAtTheirPaths() {
        #expect(problems(composition(captions: #"[{"asset": "music"}, {"asset": "nope"}, {"asset": "words", "style": {"font": "", "fontSize": 0, "outlineWidth": 65, "margin": 720, "maxWidth": 1.5}}]"#)) == [
            #"videoComposition.captions[0].asset: asset "music" is not a subtitle file (.srt or .vtt)"#,
            #"videoComposition.captions[1].asset: unknown asset "nope""#,
            "videoComposition.captions[2].style.font: must not be empty",
            "videoComposition.captions[2].style.fontSize: must be between 1 and 4096 pixels",
            "videoComposition.captions[2].style.outlineWidth: must be between 0 and 64 pixels",
            "videoComposition.captions[2].style.margin: must be ≥ 0 and less than the render height",
            "videoComposition.captions[2].style.maxWidth: must be a fraction of the render width: more than 0, at most 1",
        ])
        #expect(problems(composition(captions: ##"[{"style": {"position": "middle", "colour": "#FFFFFF"}}]"##)) == [
            "videoComposition.captions[0].asset: is required",
            "videoComposition.captions[0].style.colour: unknown key; expected one of: font, fontSize, color, backgroundColor, outlineColor, outlineWidth, position, margin, maxWidth",
            #"videoComposition.captions[0].style.position: must be one of "bottom", "top", not "middle""#,
        ])
    }

    @Test func theTimelineShowsCuesDuringTheirTimesAndStacksOverlaps() throws {
        let plan = try Fixtures.plan(composition(captions: ##"[{"asset": "words"}, {"asset": "words", "highlight": "#FFFF00"}]"##), assets: Self.assets)
        let timeline = CaptionTimeline(plan)
        #expect(timeline.draws(at: Rational(9, 10)).isEmpty)
        #expect(timeline.draws(at: 1) == [CaptionDraw(caption: 0, cues: [0], reached: [0]), CaptionDraw(caption: 1, cues: [0], reached: [6])])
        #expect(timeline.draws(at: 2).last == CaptionDraw(caption: 1, cues: [0], reached: [11]))
        #expect(timeline.draws(at: Rational(27, 10)).last == CaptionDraw(caption: 1, cues: [0, 1], reached: [11, 7]))
        #expect(timeline.draws(at: 3).last == CaptionDraw(caption: 1, cues: [1], reached: [7]))
        #expect(timeline.draws(at: 4).isEmpty)
        #expect(timeline.draws(at: Rational(229, 10)).map { $0.cues } == [[2], [2]])
        #expect(timeline.draws(at: 23).isEmpty)
    }

    @Test func captionsChangeTheKeysOfTheChunksTheyShowInOnly() throws {
        let content = ["clip": String(repeating: "a", count: 64), "music": String(repeating: "b", count: 64)]
        func keys(_ json: String) throws -> [String?] {
            let plan = try Fixtures.plan(json, assets: Self.assets)
            return ChunkPlanner.plan(for: plan, targetChunkSeconds: 10, minimumChunks: 1)
                .map { ContentKey.videoChunk(plan, frames: $0, encoderThreads: 4, assetContent: content) }
        }
        let none = try keys(composition())
        let plain = try keys(composition(captions: #"[{"asset": "words"}]"#))
        let lit = try keys(composition(captions: ##"[{"asset": "words", "highlight": "#FFFF00"}]"##))
        let bigger = try keys(composition(captions: #"[{"asset": "words", "style": {"fontSize": 41}}]"#))
        #expect(none.count == 3 && none.allSatisfy { $0 != nil })
        // Cues in [1, 4) touch chunk 0 and in [21, 23) chunk 2; chunk 1 has none.
        #expect(plain[0] != none[0] && plain[1] == none[1] && plain[2] != none[2])
        #expect(lit[0] != plain[0] && lit[1] == plain[1] && lit[2] != plain[2])
        #expect(bigger[0] != plain[0] && bigger[1] == plain[1] && bigger[2] != plain[2])
    }

    // MARK: - Loudness

    @Test(arguments: [
        (#""ebuR128""#, LoudnessTarget(standard: .ebuR128), -23.0, -1.0),
        (#""atscA85""#, LoudnessTarget(standard: .atscA85), -24.0, -2.0),
        (#""streaming""#, LoudnessTarget(standard: .streaming), -14.0, -1.0),
        (#"{"integrated": -16, "truePeak": -1.5}"#, LoudnessTarget(integrated: -16, truePeak: -1.5), -16.0, -1.5),
    ])
    func loudnessTargetsParse(json: String, target: LoudnessTarget, integrated: Double, truePeak: Double) throws {
        let plan = try Fixtures.plan(composition(audio: #"{"loudness": \#(json)}"#), assets: Self.assets)
        #expect(plan.export.audio.loudness == target)
        #expect(target.integrated == integrated && target.truePeak == truePeak)
    }

    @Test func badLoudnessTargetsAreRefused() {
        #expect(problems(composition(audio: #"{"loudness": "loud"}"#)) == [
            #"export.audio.loudness: must be one of "ebuR128", "atscA85", "streaming", not "loud""#])
        #expect(problems(composition(audio: #"{"loudness": {"integrated": -16, "peak": -1}}"#)) == [
            "export.audio.loudness.peak: unknown key; expected one of: integrated, truePeak",
            "export.audio.loudness.truePeak: is required"])
        #expect(problems(composition(audio: #"{"loudness": {"integrated": -3, "truePeak": 1}}"#)) == [
            "export.audio.loudness.integrated: must be between -60 and -5 LUFS",
            "export.audio.loudness.truePeak: must be between -20 and 0 dBTP"])
        #expect(problems(composition(audio: #"{"loudness": -23}"#)) == [
            #"export.audio.loudness: must be "ebuR128", "atscA85", "streaming" or {"integrated": LUFS, "truePeak": dBTP}, not a number"#])
    }

    /// Normalisation measures what it delivers in the output's own codec: AAC, Opus and PCM
    /// outputs all take a loudness target, whichever way their codec was chosen.
    @Test func loudnessIsAcceptedForEveryAudioCodec() {
        #expect(problems(composition(audio: #"{"loudness": "ebuR128", "codec": "pcm"}"#)).isEmpty)
        var wav = composition(audio: #"{"loudness": "streaming"}"#)
        wav = wav.replacingOccurrences(of: #""export": {"#, with: #""export": {"fileType": "wav", "#)
        #expect(problems(wav).isEmpty)
        #expect(problems(composition(audio: #"{"loudness": "ebuR128", "codec": "aac"}"#)).isEmpty)
    }

    @Test func theLoudnessTargetIsPartOfTheAudioKeyOnly() throws {
        let content = ["clip": String(repeating: "a", count: 64), "music": String(repeating: "b", count: 64)]
        let plain = try Fixtures.plan(composition(), assets: Self.assets)
        let r128 = try Fixtures.plan(composition(audio: #"{"loudness": "ebuR128"}"#), assets: Self.assets)
        let streaming = try Fixtures.plan(composition(audio: #"{"loudness": "streaming"}"#), assets: Self.assets)
        let keys = [plain, r128, streaming].map { ContentKey.audio($0, assetContent: content) }
        #expect(Set(keys).count == 3)
        let frames = FrameRange(start: 0, end: 20)
        #expect(ContentKey.videoChunk(plain, frames: frames, encoderThreads: 4, assetContent: content)
                == ContentKey.videoChunk(r128, frames: frames, encoderThreads: 4, assetContent: content))
    }

    @Test func gainAndSummaries() {
        let measured = LoudnessMeasurement(integrated: -12.34, range: 6.78, truePeak: -0.46)
        let target = LoudnessTarget(standard: .ebuR128)
        #expect(LoudnessReport.gain(for: measured, target: target) == -23 - -12.34)
        #expect(LoudnessReport.gain(for: LoudnessMeasurement(integrated: nil, range: 0, truePeak: nil), target: target) == 0)
        let report = LoudnessReport(target: target, before: measured, gain: -10.66, ceiling: -1.5,
                                    after: LoudnessMeasurement(integrated: -23.04, range: 6.7, truePeak: -11.1))
        #expect(report.summary == "normalised to ebuR128 (−23 LUFS, −1 dBTP): measured −12.3 LUFS, range 6.8 LU, true peak −0.5 dBTP; "
                + "gain −10.7 dB; output −23.0 LUFS, range 6.7 LU, true peak −11.1 dBTP")
        #expect(LoudnessTarget(integrated: -16, truePeak: -1.5).description == "−16 LUFS, −1.5 dBTP")

        // Several audio outputs: each output's summary under its label, in order.
        #expect(LoudnessReport.summary(of: [], outputs: nil) == nil)
        #expect(LoudnessReport.summary(of: [report], outputs: nil) == report.summary)
        let quieter = LoudnessReport(target: target, before: LoudnessMeasurement(integrated: -30, range: 3, truePeak: -9), gain: 7, ceiling: -1,
                                     after: LoudnessMeasurement(integrated: -23, range: 3, truePeak: -2))
        let outputs = [AudioOutput(language: try! LanguageTag.parse("en").get(), title: "English", tracks: [2]),
                       AudioOutput(language: try! LanguageTag.parse("pt-BR").get(), tracks: [3])]
        #expect(LoudnessReport.summary(of: [report, quieter], outputs: outputs)
                == #"en "English": \#(report.summary) | pt-BR: \#(quieter.summary)"#)
        #expect(LoudnessReport.summary(of: [report, quieter], outputs: nil) == "output 1: \(report.summary) | output 2: \(quieter.summary)")
    }
}
