import Testing
@testable import ReelCore
import ReelThreadTesting

/// HEVC and ProRes output — presets, overrides, and the containers each codec allows.
@Suite(.blocking) struct VideoCodecTests {
    private func resolved(_ options: ExportOptions) -> ExportSettings {
        ExportSettings(resolving: options, frameDuration: Rational(1, 25))
    }

    @Test func presetsChooseTheirCodec() {
        let hevc = resolved(ExportOptions(preset: .hevcHighest))
        #expect(hevc.video == VideoExportSettings(codec: "hevc", profile: "main", crf: 22, x264Preset: "", gopDuration: Rational(2),
                                                  gopFrames: 50, bitRate: nil, x265Preset: "medium"))
        #expect(hevc.audio.bitRate == 192_000 && hevc.fileType == .mp4)

        let prores = resolved(ExportOptions(preset: .prores422))
        #expect(prores.video == VideoExportSettings(codec: "prores", profile: "422", crf: 0, x264Preset: "", gopDuration: Rational(2),
                                                    gopFrames: 50, bitRate: nil))
        #expect(prores.fileType == .mov, "ProRes goes in QuickTime when nothing else decides")
        #expect(resolved(ExportOptions(preset: .prores4444)).video.profile == "4444")
    }

    /// Alpha is written by default where the output can hold it, and only there.
    @Test func alphaDefaultsOnForProRes4444Only() {
        #expect(resolved(ExportOptions(preset: .prores4444)).video.alpha == true)
        let xq = resolved(ExportOptions(preset: .highest, video: VideoExportOverrides(codec: "prores", proresProfile: "4444xq")))
        #expect(xq.video.alpha == true && xq.video.profile == "4444xq" && xq.video.writesAlpha)
        let off = resolved(ExportOptions(preset: .prores4444, video: VideoExportOverrides(alpha: false)))
        #expect(off.video.alpha == nil && !off.video.writesAlpha)
        // Opaque outputs keep nil (not false), so their plans and chunk keys are what they were.
        for options in [ExportOptions(preset: .prores422), ExportOptions(preset: .highest), ExportOptions(preset: .hevcHighest)] {
            #expect(resolved(options).video.alpha == nil)
        }
    }

    /// VP9 in WebM writes alpha by default only when a background is transparent (nothing else
    /// can make a frame transparent); `alpha` decides when written.
    @Test func vp9AlphaDefaultsToTheBackgroundsTransparency() {
        let webm = ExportOptions(fileType: .webm)
        func settings(_ options: ExportOptions, transparent: Bool) -> ExportSettings {
            ExportSettings(resolving: options, frameDuration: Rational(1, 25), transparentBackground: transparent)
        }
        #expect(settings(webm, transparent: true).video.alpha == true)
        #expect(settings(webm, transparent: false).video.alpha == nil)
        let on = ExportOptions(fileType: .webm, video: VideoExportOverrides(alpha: true))
        #expect(settings(on, transparent: false).video.writesAlpha)
        let off = ExportOptions(fileType: .webm, video: VideoExportOverrides(alpha: false))
        #expect(settings(off, transparent: true).video.alpha == nil)
        // Other codecs in WebM, and H.264, never take it from the background.
        let av1 = ExportOptions(fileType: .webm, video: VideoExportOverrides(codec: "av1"))
        #expect(settings(av1, transparent: true).video.alpha == nil)
        #expect(settings(ExportOptions(), transparent: true).video.alpha == nil)
    }

    @Test func codecOverrideKeepsThePresetsQualityStep() {
        let medium = resolved(ExportOptions(preset: .medium, video: VideoExportOverrides(codec: "hevc")))
        #expect(medium.video.codec == "hevc" && medium.video.crf == 28 && medium.audio.bitRate == 128_000)
        let low = resolved(ExportOptions(preset: .low, video: VideoExportOverrides(codec: "hevc", crf: 35, x265Preset: "veryfast")))
        #expect(low.video.crf == 35 && low.video.x265Preset == "veryfast")
        let prores = resolved(ExportOptions(preset: .highest, video: VideoExportOverrides(codec: "prores", proresProfile: "hq")))
        #expect(prores.video.profile == "hq" && prores.video.bitRate == nil && prores.fileType == .mov)
        // The H.264 presets are untouched.
        #expect(resolved(ExportOptions()).video == VideoExportSettings(codec: "h264", profile: "high", crf: 18, x264Preset: "medium",
                                                                      gopDuration: Rational(2), gopFrames: 50, bitRate: nil))
    }

    @Test func newKeysParse() throws {
        let json = #"{"formatVersion": 1, "assets": {}, "tracks": [], "export": {"preset": "hevcHighest", "video": {"x265Preset": "slow", "proresProfile": "lt"}}}"#
        let export = try Composition.parse(Array(json.utf8)).export
        #expect(export.preset == .hevcHighest && export.video.x265Preset == "slow" && export.video.proresProfile == "lt")
        #expect(export.videoCodec == .hevc)
    }

    @Test func proResOutputNameMustBeQuickTime() throws {
        let prores = ExportOptions(video: VideoExportOverrides(codec: "prores"))
        #expect(try OutputContainer.fileType(forOutput: "out.mov", export: prores).get() == .mov)
        #expect(try OutputContainer.fileType(forOutput: "out.mp4", export: ExportOptions(preset: .hevcHighest)).get() == .mp4)
        guard case .failure(let byName) = OutputContainer.fileType(forOutput: "/tmp/x.mp4", export: prores),
              case .failure(let byBoth) = OutputContainer.fileType(forOutput: "x.mp4", export: ExportOptions(preset: .prores4444, fileType: .mp4)),
              case .failure(let m4v) = OutputContainer.fileType(forOutput: "clip.m4v", export: ExportOptions(preset: .prores422)) else {
            Issue.record("ProRes was accepted in an MP4 name"); return
        }
        #expect(byName.message == #"the output name x.mp4 gives MP4, but export.video.codec "prores" encodes ProRes, which Reel writes only in .mov: "#
                + "name the output .mov (for example x.mov), or choose another codec")
        #expect(byBoth.message == #"the output name x.mp4 and export.fileType "mp4" give MP4, but export.preset "prores4444" encodes ProRes, "#
                + #"which Reel writes only in .mov: set export.fileType to "mov" and name the output .mov, or choose another codec"#)
        #expect(m4v.message.hasPrefix(#"the output name clip.m4v gives MP4, but export.preset "prores422" encodes ProRes"#))
        // A name that disagrees with export.fileType is still reported as before.
        guard case .failure(let conflict) = OutputContainer.fileType(forOutput: "x.mp4", export: ExportOptions(fileType: .mov, video: .init(codec: "prores"))) else {
            Issue.record("a conflicting name was accepted"); return
        }
        #expect(conflict.message.hasPrefix("export.fileType is \"mov\" but the output name x.mp4 ends in .mp4"))
    }
}
