extension Composition {
    /// Parses a v1 composition from its JSON bytes.
    ///
    /// Unknown keys and wrong types are errors, and every problem is collected (with its
    /// JSON path) before throwing, so one run lists everything to fix. A JSON syntax error
    /// is reported alone, as `invalid JSON at line:column: …`. Cross-references and value
    /// ranges are left to `CompositionValidator`.
    public static func parse(_ bytes: [UInt8]) throws(CompositionError) -> Composition {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes)
        } catch {
            throw CompositionError(problems: [Problem(path: "", message: "invalid JSON at \(error.line):\(error.column): \(error.message)")])
        }
        let reader = JSONFieldReader()
        let composition = CompositionDecoding(reader: reader).composition(json)
        if !reader.problems.isEmpty { throw CompositionError(problems: reader.problems) }
        guard let composition else {
            // Unreachable in practice: every nil result reports a problem first.
            throw CompositionError(problems: [Problem(path: "", message: "not a composition")])
        }
        return composition
    }

    /// Parses the UTF-8 encoding of `text`.
    public static func parse(_ text: String) throws(CompositionError) -> Composition {
        try parse(Array(text.utf8))
    }
}

/// The composition schema of docs/composition.md expressed as reads from a `JSONFieldReader`.
struct CompositionDecoding {
    let reader: JSONFieldReader

    func composition(_ json: JSONValue) -> Composition? {
        let r = reader
        let keys = ["formatVersion", "assets", "tracks", "audioMix", "videoComposition", "export"]
        if case .object(let o) = json, o.contains(key: "variables") {
            // A template read where only a composition can be (`Template` reads templates).
            r.report("variables", "this file is a template (docs/templates.md): reel render, validate and thumbnail read it, with --set name=value "
                     + "for its variables; this command reads plain compositions only")
            _ = r.object(.object(JSONObject(o.members.filter { $0.key != "variables" })), at: "", keys: keys)
            return nil
        }
        guard let o = r.object(json, at: "", keys: keys) else { return nil }
        let version = r.required(o, "formatVersion", at: "", r.int)
        let assets = r.required(o, "assets", at: "", assetTable)
        let tracks = r.required(o, "tracks", at: "") { r.array($0, at: $1, track) }
        let audioMix = r.optional(o, "audioMix", at: "") { r.array($0, at: $1, audioMixParameters) }
        let video = r.optional(o, "videoComposition", at: "", videoComposition)
        let export = r.optional(o, "export", at: "", exportOptions)
        guard let version, let assets, let tracks else { return nil }
        return Composition(formatVersion: version, assets: assets, tracks: tracks, audioMix: audioMix ?? [],
                           videoComposition: video, export: export ?? ExportOptions())
    }

    // MARK: - Assets and tracks

    func assetTable(_ value: JSONValue, at path: String) -> [String: AssetReference]? {
        let r = reader
        guard case .object(let o) = value else {
            r.report(path, "must be an object mapping asset ids to {\"url\": …}, not \(value.typeName)")
            return nil
        }
        var table: [String: AssetReference] = [:]
        for member in o {
            let assetPath = JSONFieldReader.child(path, member.key)
            if member.key.isEmpty { r.report(assetPath, "asset id must not be empty") }
            guard let a = r.object(member.value, at: assetPath, keys: ["url"]),
                  let url = r.required(a, "url", at: assetPath, r.string) else { continue }
            if url.isEmpty { r.report(JSONFieldReader.child(assetPath, "url"), "must not be empty"); continue }
            table[member.key] = AssetReference(url: url)
        }
        return table
    }

    func track(_ value: JSONValue, at path: String) -> Track? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["id", "mediaType", "segments"] + subtitleTrackKeys) else { return nil }
        let id = r.required(o, "id", at: path, r.int)
        let type = r.required(o, "mediaType", at: path) { r.choice($0, at: $1, MediaType.self) }
        let segments = r.required(o, "segments", at: path) { r.array($0, at: $1, segment) }
        let subtitle = subtitleTrackOptions(o, mediaType: type, at: path)
        guard let id, let type, let segments else { return nil }
        return Track(id: id, mediaType: type, segments: segments, subtitle: subtitle)
    }

    func segment(_ value: JSONValue, at path: String) -> Segment? {
        let r = reader
        if case .object(let probe) = value, probe.contains(key: "empty") {
            guard let o = r.object(value, at: path, keys: ["empty"]) else { return nil }
            return r.required(o, "empty", at: path, r.timeRange).map(Segment.empty)
        }
        guard let o = r.object(value, at: path, keys: ["asset", "at", "sourceRange", "duration", "empty"]) else { return nil }
        let asset = r.required(o, "asset", at: path, r.string)
        let at = r.optional(o, "at", at: path, r.time)
        let sourceRange = r.optional(o, "sourceRange", at: path, r.timeRange)
        let duration = r.optional(o, "duration", at: path, r.time)
        // A present but malformed `at` is reported; it must not silently become "after the previous one".
        guard let asset, at != nil || !o.contains(key: "at") else { return nil }
        return .media(MediaSegment(asset: asset, at: at, sourceRange: sourceRange, duration: duration))
    }

    // MARK: - Audio mix

    func audioMixParameters(_ value: JSONValue, at path: String) -> AudioMixParameters? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["track", "volume", "volumeRamps", "audioTimePitchAlgorithm", "duck"]) else { return nil }
        let track = r.required(o, "track", at: path, r.int)
        let volume = r.optional(o, "volume", at: path, r.double)
        let ramps = r.optional(o, "volumeRamps", at: path) { r.array($0, at: $1) { r.ramp($0, at: $1, r.double) } }
        let algorithm = r.optional(o, "audioTimePitchAlgorithm", at: path) { value, p -> AudioTimePitchAlgorithm? in
            guard let name = r.string(value, at: p) else { return nil }
            guard let algorithm = AudioTimePitchAlgorithm(rawValue: name) else {
                r.report(p, "unknown algorithm \"\(name)\"; expected one of: "
                    + AudioTimePitchAlgorithm.allCases.map(\.rawValue).joined(separator: ", "))
                return nil
            }
            return algorithm
        }
        let duck = r.optional(o, "duck", at: path, ducking)
        guard let track else { return nil }
        return AudioMixParameters(track: track, volume: volume ?? 1, volumeRamps: ramps ?? [],
                                  audioTimePitchAlgorithm: algorithm ?? .spectral, duck: duck)
    }

    func ducking(_ value: JSONValue, at path: String) -> Ducking? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["under", "amount", "threshold", "attack", "release"]) else { return nil }
        let under = r.required(o, "under", at: path) { r.array($0, at: $1, r.int) }
        let amount = r.optional(o, "amount", at: path, r.double)
        let threshold = r.optional(o, "threshold", at: path, r.double)
        let attack = r.optional(o, "attack", at: path, r.double)
        let release = r.optional(o, "release", at: path, r.double)
        guard let under else { return nil }
        return Ducking(under: under, amount: amount ?? Ducking.defaultAmount, threshold: threshold ?? Ducking.defaultThreshold,
                       attack: attack ?? Ducking.defaultAttack, release: release ?? Ducking.defaultRelease)
    }

    // MARK: - Video composition

    func videoComposition(_ value: JSONValue, at path: String) -> VideoComposition? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["renderSize", "frameDuration", "instructions", "overlays", "filters", "captions",
                                                         "colorPrimaries", "colorTransferFunction", "colorYCbCrMatrix", "toneMapping",
                                                         "masteringDisplay", "contentLightLevel"]) else {
            return nil
        }
        let size = r.optional(o, "renderSize", at: path, r.pixelSize)
        let frameDuration = r.optional(o, "frameDuration", at: path, r.time)
        let instructions = r.optional(o, "instructions", at: path) { r.array($0, at: $1, instruction) }
        let overlays = r.optional(o, "overlays", at: path) { r.array($0, at: $1, overlay) }
        let filters = r.optional(o, "filters", at: path) { r.array($0, at: $1, filter) }
        let captions = r.optional(o, "captions", at: path) { r.array($0, at: $1, caption) }
        let primaries = r.optional(o, "colorPrimaries", at: path) { r.choice($0, at: $1, CompositionColorPrimaries.self) }
        let transfer = r.optional(o, "colorTransferFunction", at: path) { r.choice($0, at: $1, CompositionTransferFunction.self) }
        let matrix = r.optional(o, "colorYCbCrMatrix", at: path) { r.choice($0, at: $1, CompositionYCbCrMatrix.self) }
        let toneMapping = r.optional(o, "toneMapping", at: path, toneMapping)
        let mastering = r.optional(o, "masteringDisplay", at: path, masteringDisplay)
        let lightLevel = r.optional(o, "contentLightLevel", at: path, contentLightLevel)
        return VideoComposition(renderSize: size, frameDuration: frameDuration, instructions: instructions, overlays: overlays ?? [],
                                filters: filters ?? [], captions: captions ?? [], colorPrimaries: primaries,
                                colorTransferFunction: transfer, colorYCbCrMatrix: matrix, toneMapping: toneMapping,
                                masteringDisplay: mastering, contentLightLevel: lightLevel)
    }

    /// `{"primaries": "P3_D65", "maxLuminance": 1000, "minLuminance": 0.0001}`.
    func masteringDisplay(_ value: JSONValue, at path: String) -> MasteringDisplay? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["primaries", "maxLuminance", "minLuminance"]) else { return nil }
        let primaries = r.required(o, "primaries", at: path) { r.choice($0, at: $1, CompositionColorPrimaries.self) }
        let maxLuminance = r.required(o, "maxLuminance", at: path, r.double)
        let minLuminance = r.required(o, "minLuminance", at: path, r.double)
        guard let primaries, let maxLuminance, let minLuminance else { return nil }
        return MasteringDisplay(primaries: primaries, maxLuminance: maxLuminance, minLuminance: minLuminance)
    }

    /// `{"maxCLL": 1000, "maxFALL": 400}`.
    func contentLightLevel(_ value: JSONValue, at path: String) -> ContentLightLevel? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["maxCLL", "maxFALL"]) else { return nil }
        let maxCLL = r.required(o, "maxCLL", at: path, r.int)
        let maxFALL = r.required(o, "maxFALL", at: path, r.int)
        guard let maxCLL, let maxFALL else { return nil }
        return ContentLightLevel(maxCLL: maxCLL, maxFALL: maxFALL)
    }

    /// `"hable"`, or `{"curve": "hable", "param": …, "desat": …, "peak": …}`.
    func toneMapping(_ value: JSONValue, at path: String) -> ToneMapping? {
        let r = reader
        if case .string = value {
            return r.choice(value, at: path, ToneMapping.Curve.self).map { ToneMapping(curve: $0) }
        }
        guard let o = r.object(value, at: path, keys: ["curve", "param", "desat", "peak"]) else { return nil }
        let curve = r.optional(o, "curve", at: path) { r.choice($0, at: $1, ToneMapping.Curve.self) }
        let param = r.optional(o, "param", at: path, r.double)
        let desat = r.optional(o, "desat", at: path, r.double)
        let peak = r.optional(o, "peak", at: path, r.double)
        if o["curve"] != nil, curve == nil { return nil }
        return ToneMapping(curve: curve ?? .bt2390, param: param, desat: desat ?? ToneMapping.defaultDesat, peak: peak)
    }

    func instruction(_ value: JSONValue, at path: String) -> Instruction? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["timeRange", "backgroundColor", "layerInstructions"]) else { return nil }
        let range = r.required(o, "timeRange", at: path, r.timeRange)
        let background = r.optional(o, "backgroundColor", at: path, r.color)
        let layers = r.optional(o, "layerInstructions", at: path) { r.array($0, at: $1, layerInstruction) }
        guard let range else { return nil }
        return Instruction(timeRange: range, backgroundColor: background ?? .black, layerInstructions: layers ?? [])
    }

    func layerInstruction(_ value: JSONValue, at path: String) -> LayerInstruction? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["track", "transform", "transformRamps", "opacity", "opacityRamps", "cropRectangle",
                                                      "cropRectangleRamps", "filters", "blendMode"]) else { return nil }
        let track = r.required(o, "track", at: path, r.int)
        let transform = r.optional(o, "transform", at: path, transformSetting)
        let transformRamps = r.optional(o, "transformRamps", at: path) { r.array($0, at: $1) { r.ramp($0, at: $1, r.affineTransform) } }
        let opacity = r.optional(o, "opacity", at: path, r.double)
        let opacityRamps = r.optional(o, "opacityRamps", at: path) { r.array($0, at: $1) { r.ramp($0, at: $1, r.double) } }
        let crop = r.optional(o, "cropRectangle", at: path, r.rect)
        let cropRamps = r.optional(o, "cropRectangleRamps", at: path) { r.array($0, at: $1) { r.ramp($0, at: $1, r.rect) } }
        let filters = r.optional(o, "filters", at: path) { r.array($0, at: $1, filter) }
        let blendMode = r.optional(o, "blendMode", at: path) { r.choice($0, at: $1, BlendMode.self) }
        guard let track else { return nil }
        return LayerInstruction(track: track, transform: transform ?? .preferred, transformRamps: transformRamps ?? [],
                                opacity: opacity ?? 1, opacityRamps: opacityRamps ?? [], cropRectangle: crop,
                                cropRectangleRamps: cropRamps ?? [], filters: filters ?? [], blendMode: blendMode ?? .normal)
    }

    /// `"preferred"`, `"fit"`, `"fill"` or a transform object.
    func transformSetting(_ value: JSONValue, at path: String) -> TransformSetting? {
        if case .string(let s) = value {
            switch s {
            case "preferred": return .preferred
            case "fit": return .fit
            case "fill": return .fill
            default:
                reader.report(path, "must be \"preferred\", \"fit\", \"fill\" or a transform object {\"a\",\"b\",\"c\",\"d\",\"tx\",\"ty\"}, not \"\(s)\"")
                return nil
            }
        }
        return reader.affineTransform(value, at: path).map(TransformSetting.matrix)
    }

    // MARK: - Overlays

    func overlay(_ value: JSONValue, at path: String) -> Overlay? {
        let r = reader
        let textKeys = ["text", "font", "fontSize", "color"]
        let common = ["image", "frame", "opacity", "timeRange", "animations"]
        guard let o = r.object(value, at: path, keys: common + textKeys) else { return nil }
        let image = r.optional(o, "image", at: path, r.string)
        let text = r.optional(o, "text", at: path, r.string)
        let font = r.optional(o, "font", at: path, r.string)
        let fontSize = r.optional(o, "fontSize", at: path, r.double)
        let color = r.optional(o, "color", at: path, r.color)
        let frame = r.required(o, "frame", at: path, r.rect)
        let opacity = r.optional(o, "opacity", at: path, r.double)
        let range = r.optional(o, "timeRange", at: path, r.timeRange)
        let animations = r.optional(o, "animations", at: path) { r.array($0, at: $1, animation) }

        let content: OverlayContent?
        switch (o.contains(key: "image"), o.contains(key: "text")) {
        case (true, true):
            r.report(path, "give either image or text, not both")
            content = nil
        case (false, false):
            r.report(path, "needs image (a still asset id) or text")
            content = nil
        case (true, false):
            for key in textKeys.dropFirst() where o.contains(key: key) {
                r.report(JSONFieldReader.child(path, key), "only allowed for a text overlay")
            }
            content = image.map { .image(asset: $0) }
        case (false, true):
            content = text.map {
                .text(OverlayText(text: $0, font: font ?? OverlayText.defaultFont,
                                  fontSize: fontSize ?? OverlayText.defaultFontSize, color: color ?? .white))
            }
        }
        guard let content, let frame else { return nil }
        return Overlay(content: content, frame: frame, opacity: opacity ?? 1, timeRange: range, animations: animations ?? [])
    }

    private enum AnimatedProperty: String, CaseIterable {
        case rotation, opacity, position, scale
    }

    func animation(_ value: JSONValue, at path: String) -> OverlayAnimation? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["property"] + JSONFieldReader.animationKeys) else { return nil }
        let property = r.required(o, "property", at: path) { r.choice($0, at: $1, AnimatedProperty.self) }
        switch property {
        case .position:
            return r.keyframeAnimation(o, at: path, r.point).map { OverlayAnimation(change: .position($0)) }
        case .rotation:
            return r.keyframeAnimation(o, at: path, r.double).map { OverlayAnimation(change: .rotation($0)) }
        case .opacity:
            return r.keyframeAnimation(o, at: path, r.double).map { OverlayAnimation(change: .opacity($0)) }
        case .scale:
            return r.keyframeAnimation(o, at: path, r.double).map { OverlayAnimation(change: .scale($0)) }
        case nil:
            // Still read the rest, so its problems are reported in the same run.
            _ = r.keyframeAnimation(o, at: path) { _, _ -> Double? in 0 }
            return nil
        }
    }

    // MARK: - Export

    func exportOptions(_ value: JSONValue, at path: String) -> ExportOptions? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["preset", "fileType", "optimizeForNetworkUse", "video", "audio",
                                                       "renditions", "segmentDuration", "audioOutputs"]) else { return nil }
        let preset = r.optional(o, "preset", at: path) { r.choice($0, at: $1, ExportPreset.self) }
        let fileType = r.optional(o, "fileType", at: path) { r.choice($0, at: $1, FileType.self) }
        let fast = r.optional(o, "optimizeForNetworkUse", at: path, r.bool)
        let video = r.optional(o, "video", at: path, videoOverrides)
        let audio = r.optional(o, "audio", at: path, audioOverrides)
        let renditions = r.optional(o, "renditions", at: path) { value, path in r.array(value, at: path, rendition) }
        let segmentDuration = r.optional(o, "segmentDuration", at: path, r.time)
        let audioOutputs = r.optional(o, "audioOutputs", at: path) { value, path in r.array(value, at: path, audioOutput) }
        return ExportOptions(preset: preset ?? .highest, fileType: fileType, optimizeForNetworkUse: fast ?? false,
                             video: video ?? .init(), audio: audio ?? .init(),
                             renditions: renditions, segmentDuration: segmentDuration, audioOutputs: audioOutputs)
    }

    /// `{"language", "title", "tracks": [ids]}`.
    func audioOutput(_ value: JSONValue, at path: String) -> AudioOutputOptions? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["language", "title", "tracks"]) else { return nil }
        let language = r.required(o, "language", at: path, r.string)
        let title = r.optional(o, "title", at: path, r.string)
        let tracks = r.required(o, "tracks", at: path) { value, path in r.array(value, at: path, r.int) }
        guard let language, let tracks else { return nil }
        return AudioOutputOptions(language: language, title: title, tracks: tracks)
    }

    func rendition(_ value: JSONValue, at path: String) -> RenditionOptions? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["name", "renderSize", "video"]) else { return nil }
        let name = r.required(o, "name", at: path, r.string)
        let size = r.required(o, "renderSize", at: path, r.pixelSize)
        let video = r.required(o, "video", at: path) { value, path -> RenditionVideoOptions? in
            guard let v = r.object(value, at: path, keys: ["codec", "x264Preset", "bitRate", "maxBitRate"]) else { return nil }
            return RenditionVideoOptions(codec: r.optional(v, "codec", at: path, r.string),
                                         x264Preset: r.optional(v, "x264Preset", at: path, r.string),
                                         bitRate: r.required(v, "bitRate", at: path, r.int),
                                         maxBitRate: r.optional(v, "maxBitRate", at: path, r.int))
        }
        guard let name, let size, let video else { return nil }
        return RenditionOptions(name: name, renderSize: size, video: video)
    }

    func videoOverrides(_ value: JSONValue, at path: String) -> VideoExportOverrides? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["codec", "crf", "x264Preset", "x265Preset", "proresProfile", "vp9Speed", "svtav1Preset",
                                                       "gopDuration", "bitRate", "alpha"])
        else { return nil }
        return VideoExportOverrides(codec: r.optional(o, "codec", at: path, r.string),
                                    crf: r.optional(o, "crf", at: path, r.int),
                                    x264Preset: r.optional(o, "x264Preset", at: path, r.string),
                                    gopDuration: r.optional(o, "gopDuration", at: path, r.time),
                                    bitRate: r.optional(o, "bitRate", at: path, r.int),
                                    x265Preset: r.optional(o, "x265Preset", at: path, r.string),
                                    proresProfile: r.optional(o, "proresProfile", at: path, r.string),
                                    vp9Speed: r.optional(o, "vp9Speed", at: path, r.int),
                                    svtav1Preset: r.optional(o, "svtav1Preset", at: path, r.int),
                                    alpha: r.optional(o, "alpha", at: path, r.bool))
    }

    func audioOverrides(_ value: JSONValue, at path: String) -> AudioExportOverrides? {
        let r = reader
        guard let o = r.object(value, at: path, keys: ["codec", "bitRate", "sampleRate", "channels", "loudness"]) else { return nil }
        return AudioExportOverrides(codec: r.optional(o, "codec", at: path, r.string),
                                    bitRate: r.optional(o, "bitRate", at: path, r.int),
                                    sampleRate: r.optional(o, "sampleRate", at: path, r.int),
                                    channels: r.optional(o, "channels", at: path, r.int),
                                    loudness: r.optional(o, "loudness", at: path, loudnessTarget))
    }
}
