extension ValidationRun {
    /// Checks the export overrides (DESIGN §3.3); the preset and file type were checked by parsing.
    func checkExport() -> ExportOptions {
        let export = composition.export
        let v = export.video, a = export.audio
        if let codec = v.codec, codec != "h264" { report("export.video.codec", "must be \"h264\" (the only video codec), not \"\(codec)\"") }
        if let crf = v.crf, !(0...51).contains(crf) { report("export.video.crf", "must be between 0 and 51") }
        if let preset = v.x264Preset, !VideoExportSettings.x264Presets.contains(preset) {
            report("export.video.x264Preset", "must be one of \(VideoExportSettings.x264Presets.joined(separator: ", ")), not \"\(preset)\"")
        }
        if let gop = v.gopDuration, gop <= .zero { report("export.video.gopDuration", "must be > 0") }
        if let rate = v.bitRate, rate <= 0 { report("export.video.bitRate", "must be > 0") }
        if let codec = a.codec, codec != "aac" { report("export.audio.codec", "must be \"aac\" (the only audio codec), not \"\(codec)\"") }
        if let rate = a.bitRate, rate <= 0 { report("export.audio.bitRate", "must be > 0") }
        if let rate = a.sampleRate, !AudioExportSettings.aacSampleRates.contains(rate) {
            report("export.audio.sampleRate", "must be one of AAC's sample rates: \(AudioExportSettings.aacSampleRates.map(String.init).joined(separator: ", "))")
        }
        if let channels = a.channels, channels != 1 && channels != 2 { report("export.audio.channels", "must be 1 or 2") }
        return export
    }
}
