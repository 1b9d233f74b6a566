extension ValidationRun {
    /// Checks the export overrides (docs/composition.md, "Export"); the preset and file type were checked by parsing.
    func checkExport() -> ExportOptions {
        let export = composition.export
        let v = export.video, a = export.audio
        if let codec = v.codec, VideoCodec(rawValue: codec) == nil {
            report("export.video.codec", "must be one of \(VideoCodec.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), not \"\(codec)\"")
        }
        if let crf = v.crf, !(0...51).contains(crf) { report("export.video.crf", "must be between 0 and 51") }
        for (key, value) in [("x264Preset", v.x264Preset), ("x265Preset", v.x265Preset)] {
            if let value, !VideoCodec.speedPresets.contains(value) {
                report("export.video.\(key)", "must be one of \(VideoCodec.speedPresets.joined(separator: ", ")), not \"\(value)\"")
            }
        }
        if let profile = v.proresProfile, ProResProfile(rawValue: profile) == nil {
            report("export.video.proresProfile", "must be one of \(ProResProfile.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), not \"\(profile)\"")
        }
        if let gop = v.gopDuration, gop <= .zero { report("export.video.gopDuration", "must be > 0") }
        if let rate = v.bitRate, rate <= 0 { report("export.video.bitRate", "must be > 0") }
        if let codec = export.videoCodec { checkCodecPairing(codec, export) }
        if let codec = a.codec, codec != "aac" { report("export.audio.codec", "must be \"aac\" (the only audio codec), not \"\(codec)\"") }
        if let rate = a.bitRate, rate <= 0 { report("export.audio.bitRate", "must be > 0") }
        if let rate = a.sampleRate, !AudioExportSettings.aacSampleRates.contains(rate) {
            report("export.audio.sampleRate", "must be one of AAC's sample rates: \(AudioExportSettings.aacSampleRates.map(String.init).joined(separator: ", "))")
        }
        if let channels = a.channels, channels != 1 && channels != 2 { report("export.audio.channels", "must be 1 or 2") }
        if let loudness = a.loudness, loudness.standard == nil { checkLoudnessTarget(loudness, at: "export.audio.loudness") }
        return export
    }
}

extension ValidationRun {
    /// Settings that belong to another codec than the one encoded, and a container the codec
    /// cannot go in: each reported at the key to change, naming where the codec came from.
    func checkCodecPairing(_ codec: VideoCodec, _ export: ExportOptions) {
        let v = export.video, origin = export.videoCodecOrigin
        let speedKeys: [(key: String, value: String?, codec: VideoCodec)] = [("x264Preset", v.x264Preset, .h264), ("x265Preset", v.x265Preset, .hevc)]
        for (key, value, owner) in speedKeys where value != nil && owner != codec {
            let fix = codec.presetKey.map { "use \($0) instead" } ?? "\(codec.displayName) has no speed preset: remove it"
            report("export.video.\(key)", "applies only to codec \"\(owner.rawValue)\", but \(origin) encodes \(codec.displayName): \(fix)")
        }
        if v.proresProfile != nil && codec != .prores {
            report("export.video.proresProfile", "applies only to codec \"prores\", but \(origin) encodes \(codec.displayName): remove it, "
                   + "or set \"codec\": \"prores\"")
        }
        if !codec.hasRateControl {
            for (key, given) in [("crf", v.crf != nil), ("bitRate", v.bitRate != nil)] where given {
                report("export.video.\(key)", "\(origin) encodes ProRes, whose quality and bit rate are set by its profile: "
                       + "remove \(key), or choose \"proresProfile\" (\(ProResProfile.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
        }
        if let fileType = export.fileType, !codec.fileTypes.contains(fileType) {
            report("export.fileType", "is \"\(fileType.rawValue)\", but \(origin) encodes \(codec.displayName), which Reel writes only in "
                   + "\(codec.fileTypes.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")): set \"fileType\": \"\(codec.defaultFileType.rawValue)\" "
                   + "(and name the output .\(codec.defaultFileType.rawValue)), or choose another codec")
        }
    }
}
