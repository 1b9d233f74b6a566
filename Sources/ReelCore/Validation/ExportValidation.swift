extension ValidationRun {
    /// Checks the export overrides (docs/composition.md, "Export"); the preset and file type were checked by parsing.
    func checkExport() -> ExportOptions {
        let export = composition.export
        let v = export.video, a = export.audio
        if let codec = v.codec, VideoCodec(rawValue: codec) == nil {
            report("export.video.codec", "must be one of \(VideoCodec.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), not \"\(codec)\"")
        }
        let crfRange = export.videoCodec?.crfRange ?? 0...51
        if let crf = v.crf, !crfRange.contains(crf) {
            report("export.video.crf", "must be between \(crfRange.lowerBound) and \(crfRange.upperBound)"
                   + (export.videoCodec == .vp9 ? " (libvpx's scale)" : export.videoCodec == .av1 ? " (SVT-AV1's scale)" : ""))
        }
        // x264's CRF 0 is lossless, which only the High 4:4:4 Predictive profile allows; Reel
        // encodes High or Main (what players decode), and libx264 refuses the pair.
        if v.crf == 0, export.videoCodec == .h264 {
            report("export.video.crf", "0 is H.264's lossless mode, which the High and Main profiles Reel encodes do not allow: "
                   + "use 1 or more (1 is visually lossless), or codec \"prores\" for an intermediate")
        }
        if let speed = v.vp9Speed, !VideoCodec.vp9SpeedRange.contains(speed) {
            report("export.video.vp9Speed", "must be between \(VideoCodec.vp9SpeedRange.lowerBound) and \(VideoCodec.vp9SpeedRange.upperBound)")
        }
        if let preset = v.svtav1Preset, !VideoCodec.svtav1PresetRange.contains(preset) {
            report("export.video.svtav1Preset", "must be between \(VideoCodec.svtav1PresetRange.lowerBound) and \(VideoCodec.svtav1PresetRange.upperBound)")
        }
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
        if let codec = a.codec, AudioCodec(rawValue: codec) == nil {
            report("export.audio.codec", "must be one of \(AudioCodec.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), not \"\(codec)\"")
        }
        if let rate = a.bitRate, rate <= 0 { report("export.audio.bitRate", "must be > 0") }
        let audioCodec = export.audioCodec ?? .aac
        if let rate = a.sampleRate, !audioCodec.sampleRates.contains(rate) {
            report("export.audio.sampleRate", "must be one of \(audioCodec.displayName)'s sample rates: \(audioCodec.sampleRates.map(String.init).joined(separator: ", "))")
        }
        if let channels = a.channels, channels != 1 && channels != 2 { report("export.audio.channels", "must be 1 or 2") }
        // A PNG sequence has no sound, so no default audio codec to pair (a written one is checked).
        if let codec = export.audioCodec, export.fileType != .png || a.codec != nil { checkAudioCodecPairing(codec, export) }
        if let loudness = a.loudness, loudness.standard == nil { checkLoudnessTarget(loudness, at: "export.audio.loudness") }
        checkLadderKeys(export)
        return export
    }

    /// Ladder keys on an output that is not HLS, and an HLS output without a picture (what
    /// needs no render size; `checkLadder` checks the rest once it is known).
    func checkLadderKeys(_ export: ExportOptions) {
        if let fileType = export.fileType, fileType != .hls {
            for (key, given) in [("renditions", export.renditions != nil), ("segmentDuration", export.segmentDuration != nil)] where given {
                report("export.\(key)", "applies only to an HLS output, but export.fileType is \"\(fileType.rawValue)\": set \"fileType\": \"hls\" "
                       + "(or name the output DIR/master.m3u8), or remove \(key)")
            }
            return
        }
        guard export.isLadder else { return }
        let at = export.fileType != nil ? "export.fileType" : export.renditions != nil ? "export.renditions" : "export.segmentDuration"
        if !composition.hasPicture {
            report(at, "an HLS ladder is a ladder of pictures, but the composition has no video track and no overlay: "
                   + "write a sound-only container (\"m4a\", \"wav\") instead")
        }
        if let codec = export.videoCodec, codec != .h264, export.fileType == nil {
            report(export.video.codec != nil ? "export.video.codec" : "export.preset",
                   "\(export.videoCodecOrigin) encodes \(codec.displayName), but HLS ladders are H.264 only so far: choose codec \"h264\"")
        }
        for (key, given) in [("bitRate", export.video.bitRate != nil), ("crf", export.video.crf != nil)] where given {
            report("export.video.\(key)", "an HLS ladder sets each rendition's bit rate in export.renditions[].video.bitRate: remove \(key)")
        }
        if let renditions = export.renditions, renditions.isEmpty {
            report("export.renditions", "needs at least one rendition; leave renditions out for the default ladder")
        }
        if let duration = export.segmentDuration, duration <= .zero { report("export.segmentDuration", "must be > 0") }
    }

    /// The resolved ladder against the render size and frame grid: names, sizes, bit rates and
    /// the segment grid, each reported at the key to change. True when it is sound.
    func checkLadder(_ ladder: RenditionLadder, export: ExportOptions, renderSize: PixelSize, frameDuration: Rational,
                     gopFrames: Int) -> Bool {
        let before = problems.count
        if let written = export.segmentDuration, written > .zero {
            let frames = written / frameDuration
            if frames.den != 1 {
                report("export.segmentDuration", "must be a whole number of frames of \(TimeFormatting.seconds(frameDuration)), and "
                       + "\(TimeFormatting.seconds(written)) is \(Double(frames.num) / Double(frames.den)) frames")
            } else if Int(frames.num) % gopFrames != 0 {
                report("export.segmentDuration", "must be a whole number of GOPs (export.video.gopDuration, \(gopFrames) frames), so every segment "
                       + "starts with an IDR frame, but it is \(frames.num) frames: use a multiple of \(TimeFormatting.seconds(frameDuration * gopFrames))")
            }
        }
        if ladder.renditions.count > RenditionLadder.maximumRenditions {
            report("export.renditions", "has \(ladder.renditions.count) renditions; a job encodes at most \(RenditionLadder.maximumRenditions)")
        }
        var names: [String: Int] = [:]
        for (index, rendition) in ladder.renditions.enumerated() {
            let path = "export.renditions[\(index)]"
            if rendition.name.isEmpty || rendition.name.count > 64 || !rendition.name.allSatisfy(RenditionLadder.nameCharacters.contains) {
                report("\(path).name", "must be 1…64 characters of a-z, 0-9, _ and - (it names the rendition's folder), not \"\(rendition.name)\"")
            } else if rendition.name == RenditionLadder.audioFolder {
                report("\(path).name", "\"\(RenditionLadder.audioFolder)\" is the folder of the ladder's sound: choose another name")
            } else if RenditionLadder.isReservedFolder(rendition.name) {
                report("\(path).name", "\"\(rendition.name)\" is the name of a folder of the ladder's audio outputs or subtitles (audio-N, subtitles-N): "
                       + "choose another name")
            } else if let first = names[rendition.name] {
                report("\(path).name", "\"\(rendition.name)\" is also the name of export.renditions[\(first)]: names must be unique")
            } else {
                names[rendition.name] = index
            }
            let size = rendition.size
            if size.width < 2 || size.height < 2 || size.width % 2 != 0 || size.height % 2 != 0 {
                report("\(path).renderSize", "must be even and at least 2 in both dimensions (4:2:0 video), not \(size)")
            } else if size.width > renderSize.width || size.height > renderSize.height {
                report("\(path).renderSize", "\(size) is larger than the render size \(renderSize): a rendition is never scaled up")
            }
            let video = rendition.video
            if video.codec != VideoCodec.h264.rawValue {
                report("\(path).video.codec", "must be \"h264\" (HLS ladders are H.264 only so far), not \"\(video.codec)\"")
            }
            if let preset = export.renditions?[index].video.x264Preset, !VideoCodec.speedPresets.contains(preset) {
                report("\(path).video.x264Preset", "must be one of \(VideoCodec.speedPresets.joined(separator: ", ")), not \"\(preset)\"")
            }
            if let rate = video.bitRate, rate <= 0 { report("\(path).video.bitRate", "must be > 0") }
            if let rate = video.bitRate, rate > 0, let peak = video.maxBitRate, peak < rate {
                report("\(path).video.maxBitRate", "must be at least bitRate (\(rate)), not \(peak)")
            }
        }
        return problems.count == before
    }

    /// An audio setting the codec has no use for, and a container the codec cannot go in.
    func checkAudioCodecPairing(_ codec: AudioCodec, _ export: ExportOptions) {
        let origin = export.audio.codec.map { "export.audio.codec \"\($0)\"" } ?? "the container's default"
        if !codec.hasBitRate, export.audio.bitRate != nil {
            report("export.audio.bitRate", "\(origin) is \(codec.displayName), uncompressed 16-bit samples with no bit rate: remove bitRate")
        }
        if let fileType = export.fileType, !codec.canBeWritten(in: fileType) {
            report("export.audio.codec", "is \"\(codec.rawValue)\", but export.fileType \"\(fileType.rawValue)\" cannot hold \(codec.displayName) "
                   + "(Reel writes it only in \(codec.fileTypes.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))): remove codec to get "
                   + "\(AudioCodec.default(for: fileType).displayName), or change fileType")
        }
    }
}

extension ValidationRun {
    /// Settings that belong to another codec than the one encoded, and a container the codec
    /// cannot go in: each reported at the key to change, naming where the codec came from.
    func checkCodecPairing(_ codec: VideoCodec, _ export: ExportOptions) {
        let v = export.video, origin = export.videoCodecOrigin
        let speedKeys: [(key: String, value: String?, codec: VideoCodec)] = [
            ("x264Preset", v.x264Preset, .h264), ("x265Preset", v.x265Preset, .hevc), ("vp9Speed", v.vp9Speed.map(String.init), .vp9),
            ("svtav1Preset", v.svtav1Preset.map(String.init), .av1),
        ]
        for (key, value, owner) in speedKeys where value != nil && owner != codec {
            let fix = codec.presetKey.map { "use \($0) instead" } ?? "\(codec.displayName) has no speed preset: remove it"
            report("export.video.\(key)", "applies only to codec \"\(owner.rawValue)\", but \(origin) encodes \(codec.displayName): \(fix)")
        }
        if v.proresProfile != nil && codec != .prores {
            report("export.video.proresProfile", "applies only to codec \"prores\", but \(origin) encodes \(codec.displayName): remove it, "
                   + "or set \"codec\": \"prores\"")
        }
        if v.alpha == true {
            let profile = v.proresProfile.flatMap(ProResProfile.init(rawValue:)) ?? export.preset.proresProfile
            if codec != .prores && codec != .vp9 && codec != .png {
                report("export.video.alpha", "is true, but \(origin) encodes \(codec.displayName), which Reel writes without alpha: "
                       + "set \"codec\": \"prores\" with \"proresProfile\": \"4444\" (or \"4444xq\"), or \"codec\": \"vp9\" in WebM, or remove alpha")
            } else if codec == .prores && !profile.hasAlpha {
                report("export.video.alpha", "is true, but ProRes profile \"\(profile.rawValue)\" has no alpha channel: "
                       + "set \"proresProfile\": \"4444\" (or \"4444xq\"), or remove alpha")
            }
        }
        if !codec.hasRateControl {
            for (key, given) in [("crf", v.crf != nil), ("bitRate", v.bitRate != nil)] where given {
                if codec == .png {
                    report("export.video.\(key)", "\(origin) is written as PNG, which is lossless, with no quality or bit rate to set: remove \(key)")
                    continue
                }
                report("export.video.\(key)", "\(origin) encodes ProRes, whose quality and bit rate are set by its profile: "
                       + "remove \(key), or choose \"proresProfile\" (\(ProResProfile.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
        }
        if export.fileType == .png, let written = v.codec, codec != .png {
            report("export.video.codec", "is \"\(written)\", but export.fileType \"png\" is a PNG sequence, whose frames are PNG pictures: "
                   + "remove codec, or choose another fileType")
            return
        }
        if let fileType = export.fileType, !fileType.isAudioOnly, !codec.canBeWritten(in: fileType) {
            report("export.fileType", "is \"\(fileType.rawValue)\", but \(origin) encodes \(codec.displayName), which Reel writes only in "
                   + "\(codec.fileTypes.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")): set \"fileType\": \"\(codec.defaultFileType.rawValue)\" "
                   + "(and name the output .\(codec.defaultFileType.rawValue)), or choose another codec")
        }
    }
}

extension ValidationRun {
    /// A PNG sequence holds pictures only. Decision: sound is refused, not dropped silently
    /// nor written beside the frames: a WAV of the same composition is one more render.
    func checkPNGSequence(_ export: ExportOptions, audioTracks: Int, subtitleTracks: Int) {
        if !composition.hasPicture {
            report("export.fileType", "is \"png\", a PNG sequence, but the composition has no video track and no overlay: "
                   + "write a sound-only container (\"m4a\", \"wav\") instead")
        }
        if audioTracks > 0 {
            report("tracks", "a PNG sequence holds pictures only, but the composition has \(audioTracks) audio track(s): remove them, "
                   + "or render the sound on its own to a .wav")
        }
        if subtitleTracks > 0 {
            report("tracks", "a PNG sequence holds pictures only, but the composition has \(subtitleTracks) subtitle track(s): "
                   + "burn them in as videoComposition.captions, or remove them")
        }
        if export.audioOutputs != nil { report("export.audioOutputs", "a PNG sequence holds no sound: remove audioOutputs") }
        if export.audio.loudness != nil { report("export.audio.loudness", "a PNG sequence holds no sound: remove loudness") }
    }
}
