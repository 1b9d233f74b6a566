import Testing
@testable import ReelCore
import ReelThreadTesting

/// VP9 (and AV1) in WebM — the defaults they resolve to, the containers they go in,
/// the audio WebM takes, and the problems validation names.
@Suite(.blocking) struct WebCodecTests {
    private func resolved(_ options: ExportOptions) -> ExportSettings {
        ExportSettings(resolving: options, frameDuration: Rational(1, 25))
    }

    @Test func vp9ResolvesToWebMWithOpus() {
        let vp9 = resolved(ExportOptions(video: VideoExportOverrides(codec: "vp9")))
        #expect(vp9.video == VideoExportSettings(codec: "vp9", profile: "0", crf: 24, x264Preset: "", gopDuration: Rational(2),
                                                 gopFrames: 50, bitRate: nil, vp9Speed: 4))
        #expect(vp9.fileType == .webm && vp9.audio.codec == "opus" && vp9.audio.bitRate == 192_000)
        let fast = resolved(ExportOptions(preset: .low, video: VideoExportOverrides(codec: "vp9", crf: 40, vp9Speed: 8)))
        #expect(fast.video.crf == 40 && fast.video.vp9Speed == 8 && fast.audio.bitRate == 96_000)
        // The other codecs carry no VP9 speed (their chunks' content keys stay as they were).
        #expect(resolved(ExportOptions()).video.vp9Speed == nil)
    }

    @Test func av1ResolvesToMP4OrWebM() {
        let av1 = resolved(ExportOptions(preset: .medium, video: VideoExportOverrides(codec: "av1")))
        #expect(av1.video == VideoExportSettings(codec: "av1", profile: "main", crf: 32, x264Preset: "", gopDuration: Rational(2),
                                                 gopFrames: 50, bitRate: nil, svtav1Preset: 8))
        #expect(av1.fileType == .mp4 && av1.audio.codec == "aac", "AV1 goes in MP4 with AAC when nothing else decides")
        let webm = resolved(ExportOptions(fileType: .webm, video: VideoExportOverrides(codec: "av1", svtav1Preset: 12)))
        #expect(webm.video.svtav1Preset == 12 && webm.video.crf == 24 && webm.audio.codec == "opus")
        #expect(webm.video.vp9Speed == nil && resolved(ExportOptions()).video.svtav1Preset == nil)
    }

    @Test func webmTurnsAnH264PresetIntoVP9() {
        let medium = resolved(ExportOptions(preset: .medium, fileType: .webm))
        #expect(medium.video.codec == "vp9" && medium.video.crf == 31 && medium.audio.codec == "opus" && medium.audio.bitRate == 128_000)
        #expect(ExportOptions(fileType: .webm).videoCodecOrigin == "WebM's default codec")
        #expect(ExportOptions(preset: .hevcHighest, fileType: .webm).videoCodec == .hevc, "a codec's own preset is not replaced")
    }

    @Test func webmOutputNames() throws {
        #expect(try OutputContainer.fileType(forOutput: "clip.webm", export: ExportOptions()).get() == .webm)
        #expect(try OutputContainer.fileType(forOutput: "clip.webm", export: ExportOptions(video: .init(codec: "vp9"))).get() == .webm)
        guard case .failure(let hevc) = OutputContainer.fileType(forOutput: "clip.webm", export: ExportOptions(preset: .hevcHighest)),
              case .failure(let vp9) = OutputContainer.fileType(forOutput: "clip.mp4", export: ExportOptions(video: .init(codec: "vp9"))),
              case .failure(let aac) = OutputContainer.fileType(forOutput: "clip.webm", export: ExportOptions(audio: .init(codec: "aac"))) else {
            Issue.record("a codec was accepted in a container that cannot hold it"); return
        }
        #expect(hevc.message == #"the output name clip.webm gives WebM, but export.preset "hevcHighest" encodes HEVC, which Reel writes only in "#
                + ".mp4 or .mov: name the output .mp4 or .mov (for example clip.mp4), or choose another codec")
        #expect(vp9.message.hasPrefix(#"the output name clip.mp4 gives MP4, but export.video.codec "vp9" encodes VP9, which Reel writes only in .webm"#))
        #expect(aac.message == #"the output name clip.webm gives WebM, which cannot hold export.audio.codec "aac" (AAC goes only in .mp4, .mov, .m4a): "#
                + "name the output .mp4, .mov, .m4a, or remove the codec to get Opus")
    }

    @Test func newKeysParse() throws {
        let json = #"{"formatVersion": 1, "assets": {}, "tracks": [], "export": {"fileType": "webm", "video": {"codec": "vp9", "vp9Speed": 6}, "audio": {"codec": "opus"}}}"#
        let export = try Composition.parse(Array(json.utf8)).export
        #expect(export.fileType == .webm && export.video.vp9Speed == 6 && export.videoCodec == .vp9 && export.audioCodec == .opus)
    }

    @Test func av1OutputNames() throws {
        let av1 = ExportOptions(video: .init(codec: "av1"))
        #expect(try OutputContainer.fileType(forOutput: "clip.mp4", export: av1).get() == .mp4)
        #expect(try OutputContainer.fileType(forOutput: "clip.webm", export: av1).get() == .webm)
        guard case .failure(let mov) = OutputContainer.fileType(forOutput: "clip.mov", export: av1) else {
            Issue.record("AV1 was accepted in QuickTime"); return
        }
        #expect(mov.message == #"the output name clip.mov gives QuickTime, but export.video.codec "av1" encodes AV1, which Reel writes only in "#
                + ".mp4 or .webm: name the output .mp4 or .webm (for example clip.mp4), or choose another codec")
    }

    @Test(arguments: [
        (#"{"fileType": "mp4", "video": {"codec": "vp9"}}"#,
         [#"export.fileType: is "mp4", but export.video.codec "vp9" encodes VP9, which Reel writes only in "webm": set "fileType": "webm" (and name the output .webm), or choose another codec"#]),
        (#"{"fileType": "webm", "video": {"codec": "h264"}}"#,
         [#"export.fileType: is "webm", but export.video.codec "h264" encodes H.264, which Reel writes only in "mp4" or "mov": set "fileType": "mp4" (and name the output .mp4), or choose another codec"#]),
        (#"{"fileType": "webm", "video": {"crf": 63, "vp9Speed": 0}}"#, []),
        (#"{"video": {"codec": "vp9", "crf": 64, "vp9Speed": 9}}"#,
         ["export.video.crf: must be between 0 and 63 (libvpx's scale)", "export.video.vp9Speed: must be between 0 and 8"]),
        (#"{"video": {"crf": 60}}"#, ["export.video.crf: must be between 0 and 51"]),
        (#"{"video": {"vp9Speed": 5}}"#,
         [#"export.video.vp9Speed: applies only to codec "vp9", but export.preset "highest" encodes H.264: use x264Preset instead"#]),
        (#"{"fileType": "webm", "video": {"x264Preset": "fast"}}"#,
         [#"export.video.x264Preset: applies only to codec "h264", but WebM's default codec encodes VP9: use vp9Speed instead"#]),
        (#"{"fileType": "mp4", "video": {"codec": "av1", "crf": 63, "svtav1Preset": 13}}"#, []),
        (#"{"fileType": "webm", "video": {"codec": "av1", "svtav1Preset": 14, "crf": 64}}"#,
         ["export.video.crf: must be between 0 and 63 (SVT-AV1's scale)", "export.video.svtav1Preset: must be between 0 and 13"]),
        (#"{"fileType": "mov", "video": {"codec": "av1"}}"#,
         [#"export.fileType: is "mov", but export.video.codec "av1" encodes AV1, which Reel writes only in "mp4" or "webm": set "fileType": "mp4" (and name the output .mp4), or choose another codec"#]),
        (#"{"video": {"codec": "av1", "vp9Speed": 8}}"#,
         [#"export.video.vp9Speed: applies only to codec "vp9", but export.video.codec "av1" encodes AV1: use svtav1Preset instead"#]),
        (#"{"fileType": "webm", "audio": {"sampleRate": 44100}}"#,
         ["export.audio.sampleRate: must be one of Opus's sample rates: 8000, 12000, 16000, 24000, 48000"]),
        (#"{"fileType": "webm", "audio": {"codec": "aac"}}"#,
         [#"export.audio.codec: is "aac", but export.fileType "webm" cannot hold AAC (Reel writes it only in "mp4", "mov", "m4a"): remove codec to get Opus, or change fileType"#]),
    ])
    func validation(export: String, expected: [String]) {
        #expect(Fixtures.problems(Fixtures.composition(extra: #""export": \#(export)"#)) == expected)
    }
}
