import Testing
@testable import ReelCore
import ReelThreadTesting

/// The content key's bytes must never change by accident: a stored result is found again only
/// if its chunk's key comes out the same. The production encoder walks frames with one cursor
/// and formats numbers by hand for speed; here the same canonical form is written the plain
/// way — `String` formatting, every frame evaluated on its own (`RenderPlan.frame(k)`, a fresh
/// caption lookup) — and the two must give the same bytes for every chunk of a composition that
/// uses every keyed feature.
@Suite("Content keys against a reference encoder", .blocking)
struct ContentKeyReferenceTests {
    static let words = SubtitleDocument(format: .webVTT, cues: [
        SubtitleCue(start: 1, end: 3, text: "Never gonna", marks: [SubtitleTimeMark(offset: 6, time: 2)]),
        SubtitleCue(start: Rational(5, 2), end: 4, text: "overlap"),
        SubtitleCue(start: 9, end: 11, text: "late"),
    ])

    static let assets = Fixtures.described([
        "clip": Fixtures.movie(1280, 720, duration: 30),
        "phone": Fixtures.movie(1080, 1920, duration: 20, transform: Fixtures.portraitTransform(encodedHeight: 1920)),
        "logo": Fixtures.still(200, 100),
        "grade": AssetDescription(kind: .lut, duration: nil, video: nil, audio: nil, lut: LUTDescription(dimensions: 3, size: 33)),
        "words": AssetDescription(kind: .subtitle, duration: nil, video: nil, audio: nil, subtitles: words),
        "music": Fixtures.sound(duration: 30),
    ])

    static let content = [
        "clip": String(repeating: "1", count: 64), "phone": String(repeating: "2", count: 64),
        "logo": String(repeating: "3", count: 64), "grade": String(repeating: "4", count: 64),
        "words": String(repeating: "5", count: 64), "music": String(repeating: "6", count: 64),
    ]

    /// 12 s at 25 fps, rendered 1280×720 and encoded at 640×360 (preset low): two video tracks
    /// with a gap, a speed change and a still; instructions with transform, opacity and crop
    /// ramps, filters (animated, a LUT, colours) and blend modes; whole-picture filters;
    /// image and text overlays with keyframe animations; two caption blocks.
    static let composition = ##"""
    {"formatVersion": 1,
     "assets": {"clip": {"url": "c.mp4"}, "phone": {"url": "p.mp4"}, "logo": {"url": "l.png"},
                "grade": {"url": "g.cube"}, "words": {"url": "w.vtt"}, "music": {"url": "m.m4a"}},
     "tracks": [
       {"id": 1, "mediaType": "video", "segments": [
         {"asset": "clip", "at": 0, "sourceRange": {"start": 0, "duration": 4}},
         {"asset": "clip", "at": 4, "sourceRange": {"start": 10, "duration": 6}, "duration": 3},
         {"asset": "logo", "at": 8, "duration": 4}]},
       {"id": 2, "mediaType": "video", "segments": [
         {"asset": "phone", "at": 1, "sourceRange": {"start": 2, "duration": 5}},
         {"asset": "phone", "at": 9, "sourceRange": {"start": 0, "duration": 3}}]},
       {"id": 3, "mediaType": "audio", "segments": [{"asset": "music", "at": 0, "sourceRange": {"start": 0, "duration": 12}}]}],
     "videoComposition": {
       "renderSize": {"width": 1280, "height": 720}, "frameDuration": "1/25",
       "colorYCbCrMatrix": "ITU_R_601_4", "toneMapping": {"curve": "mobius", "param": 0.4, "peak": 12},
       "filters": [{"type": "exposure", "exposure": {"values": [-2, 0.3, 0], "keyTimes": [0, 0.7, 1], "duration": 2,
                                                      "timingFunction": "easeOut"}}],
       "instructions": [
         {"timeRange": {"start": 0, "duration": 5}, "backgroundColor": "#102040",
          "layerInstructions": [
            {"track": 2, "transform": "fit", "blendMode": "screen", "opacity": 0.75,
             "opacityRamps": [{"from": 0.75, "to": 0.2, "timeRange": {"start": 2, "duration": 1.5}}],
             "filters": [{"type": "gaussianBlur", "sigma": {"from": 0, "to": 6, "duration": 0.5, "autoreverses": true, "repeat": true}},
                         {"type": "lut", "asset": "grade", "intensity": 0.8}]},
            {"track": 1, "transform": {"a": 0.5, "b": 0, "c": 0, "d": 0.5, "tx": 100, "ty": 50},
             "transformRamps": [{"from": {"a": 0.5, "b": 0, "c": 0, "d": 0.5, "tx": 100, "ty": 50},
                                 "to": {"a": 1, "b": 0.1, "c": -0.1, "d": 1, "tx": 0, "ty": 0},
                                 "timeRange": {"start": 0.5, "duration": 2}}],
             "cropRectangle": {"x": 10, "y": 20, "width": 1000, "height": 600},
             "cropRectangleRamps": [{"from": {"x": 0, "y": 0, "width": 1280, "height": 720},
                                     "to": {"x": 640, "y": 0, "width": 0, "height": 720},
                                     "timeRange": {"start": 3, "duration": 1}}],
             "filters": [{"type": "sepia", "intensity": 0.6},
                         {"type": "colorMatrix", "matrix": [[0.9, 0.1, 0, 0.02], [0.05, 0.85, 0.1, 0], [0, 0.2, 0.8, -0.02]]},
                         {"type": "vignette", "color": "#200010", "start": 0.3, "end": 0.8},
                         {"type": "chromaKey", "color": "#20B040", "similarity": 0.2, "smoothness": 0.08, "spill": 0.8}]}]},
         {"timeRange": {"start": 5, "duration": 7},
          "layerInstructions": [
            {"track": 1, "transform": "fill", "blendMode": "multiply"},
            {"track": 2, "transform": "preferred", "filters": [{"type": "pixellate", "size": 12}, {"type": "toon"}]}]}],
       "overlays": [
         {"image": "logo", "frame": {"x": 40, "y": 40, "width": 128, "height": 64},
          "animations": [
            {"property": "position",
             "values": [{"x": 40, "y": 40}, {"x": 1112, "y": 40}, {"x": 1112, "y": 552}, {"x": 40, "y": 552}],
             "keyTimes": [0, 0.4, 0.6, 1], "timingFunction": "easeInEaseOut",
             "duration": 4, "autoreverses": true, "repeat": true},
            {"property": "opacity", "from": 0, "to": 1, "duration": 1, "timingFunction": {"controlPoints": [0, 0.6, 0.4, 1]}}]},
         {"text": "Hello, world", "fontSize": 48, "color": "#FFEEDD", "frame": {"x": 60, "y": 300, "width": 400, "height": 90},
          "timeRange": {"start": 2, "duration": 6},
          "animations": [{"property": "rotation", "from": 0, "to": 6.283185, "duration": 2, "repeat": true}]}],
       "captions": [{"asset": "words"}, {"asset": "words", "highlight": "#FFFF00", "style": {"position": "top"}}]},
     "export": {"preset": "low"}}
    """##

    static func plan() throws -> RenderPlan { try Fixtures.plan(composition, assets: assets) }

    /// Chunkings that cut the timeline in different places (whole GOPs, odd sizes, one frame).
    static func chunkings(_ plan: RenderPlan) -> [[FrameRange]] {
        let n = plan.frameCount
        func every(_ size: Int) -> [FrameRange] {
            stride(from: 0, to: n, by: size).map { FrameRange(start: $0, end: min(n, $0 + size)) }
        }
        return [ChunkPlanner.plan(for: plan), every(37), every(1).filter { $0.start % 29 == 0 }, [FrameRange(start: 0, end: n)]]
    }

    @Test func theCompositionUsesEveryKeyedFeature() throws {
        let plan = try Self.plan()
        #expect(plan.frameCount == 300)
        #expect(plan.outputSize != plan.renderSize, "the render → output scale is folded into every transform")
        let frames = (0..<plan.frameCount).map { plan.frame($0) }
        #expect(frames.contains { $0.layers.count == 2 } && frames.contains { $0.layers.count == 1 })
        #expect(frames.contains { $0.layers.contains { !$0.filters.isEmpty } && $0.layers.contains { $0.blendMode != .normal } })
        #expect(frames.contains { $0.layers.contains { $0.crop != nil } })
        #expect(frames.contains { $0.overlays.count == 2 })
        #expect(Set(frames.map(\.background)).count == 2)
        let captions = CaptionTimeline(plan)
        #expect((0..<plan.frameCount).contains { captions.draws(at: plan.time(ofFrame: $0)).count == 2 })
    }

    @Test func everyChunkHasTheReferenceBytes() throws {
        let plan = try Self.plan()
        for chunks in Self.chunkings(plan) {
            let fast = ContentKey.canonicalVideoChunks(plan, chunks: chunks, encoderThreads: 3, assetContent: Self.content)
            #expect(fast.count == chunks.count)
            for (chunk, bytes) in zip(chunks, fast) {
                let reference = ReferenceKey.videoChunk(plan, frames: chunk, encoderThreads: 3, assetContent: Self.content)
                guard let bytes else { Issue.record("no key for \(chunk)"); continue }
                if bytes != Array(reference.utf8) {
                    let at = zip(bytes, reference.utf8).prefix { $0 == $1 }.count
                    let got = String(decoding: bytes[at...].prefix(80), as: UTF8.self)
                    let expected = String(decoding: Array(reference.utf8.dropFirst(at).prefix(80)), as: UTF8.self)
                    Issue.record("chunk \(chunk): bytes differ at offset \(at): \(got) instead of \(expected)")
                }
            }
        }
    }

    /// Held pictures: stills on two tracks with gaps, a background that changes inside a still,
    /// overlays that appear, fade and stop in the middle of a still, an opacity ramp and a
    /// filter that start and end there, and captions. Most frames write what the frame before
    /// wrote after their time — the bytes the encoder copies instead of writing again
    /// (`FrameKeyMemo`) — and each change must still be written out.
    static let heldStills = ##"""
    {"formatVersion": 1,
     "assets": {"logo": {"url": "l.png"}, "clip": {"url": "c.mp4"}, "words": {"url": "w.vtt"}},
     "tracks": [
       {"id": 1, "mediaType": "video", "segments": [
         {"asset": "logo", "at": 0, "duration": 3}, {"asset": "logo", "at": 3, "duration": 2},
         {"asset": "clip", "at": 5, "sourceRange": {"start": 0, "duration": 1}}, {"asset": "logo", "at": 7, "duration": 5}]},
       {"id": 2, "mediaType": "video", "segments": [{"asset": "logo", "at": 2, "duration": 6}]}],
     "videoComposition": {
       "renderSize": {"width": 1280, "height": 720}, "frameDuration": "1/25",
       "instructions": [
         {"timeRange": {"start": 0, "duration": 4}, "backgroundColor": "#102040",
          "layerInstructions": [{"track": 2, "transform": {"a": 1, "b": 0, "c": 0, "d": 1, "tx": 300, "ty": -0.0}},
                                {"track": 1, "transform": "fit"}]},
         {"timeRange": {"start": 4, "duration": 8},
          "layerInstructions": [
            {"track": 2, "transform": "fill", "filters": [{"type": "sepia", "intensity": 0.5}]},
            {"track": 1, "transform": "fit", "opacity": 0.5,
             "opacityRamps": [{"from": 0.5, "to": 1, "timeRange": {"start": 8.5, "duration": 1}}]}]}],
       "overlays": [
         {"image": "logo", "frame": {"x": 40, "y": 40, "width": 128, "height": 64}, "timeRange": {"start": 1.5, "duration": 2}},
         {"text": "Held", "fontSize": 48, "color": "#FFEEDD", "frame": {"x": 60, "y": 300, "width": 400, "height": 90},
          "timeRange": {"start": 6, "duration": 4},
          "animations": [{"property": "opacity", "from": 0, "to": 1, "duration": 0.5}]}],
       "captions": [{"asset": "words"}]},
     "export": {"preset": "low"}}
    """##

    @Test func heldFramesHaveTheReferenceBytes() throws {
        let plan = try Fixtures.plan(Self.heldStills, assets: Self.assets)
        #expect(plan.frameCount == 300)
        // Most frames repeat the one before apart from their time, so the copy is what is tested.
        let frames = (0..<plan.frameCount).map { plan.frame($0) }
        let repeats = zip(frames, frames.dropFirst()).filter { a, b in
            a.background == b.background && a.layers == b.layers && a.overlays == b.overlays && b.layers.allSatisfy(\.filters.isEmpty)
        }.count
        #expect(repeats > 120)
        for chunks in Self.chunkings(plan) {
            let fast = ContentKey.canonicalVideoChunks(plan, chunks: chunks, encoderThreads: 1, assetContent: Self.content)
            for (chunk, bytes) in zip(chunks, fast) {
                let reference = ReferenceKey.videoChunk(plan, frames: chunk, encoderThreads: 1, assetContent: Self.content)
                guard let bytes else { Issue.record("no key for \(chunk)"); continue }
                if bytes != Array(reference.utf8) {
                    let at = zip(bytes, reference.utf8).prefix { $0 == $1 }.count
                    let got = String(decoding: bytes[at...].prefix(80), as: UTF8.self)
                    let expected = String(decoding: Array(reference.utf8.dropFirst(at).prefix(80)), as: UTF8.self)
                    Issue.record("chunk \(chunk): bytes differ at offset \(at): \(got) instead of \(expected)")
                }
            }
        }
    }

    /// A missing content hash (of a layer's source, an overlay's image or a LUT) means no key,
    /// exactly for the chunks that draw it.
    @Test func aMissingHashGivesNoKeyWhereItIsDrawn() throws {
        let plan = try Self.plan()
        let chunks = ChunkPlanner.plan(for: plan)
        for missing in ["clip", "phone", "logo", "grade"] {
            var content = Self.content
            content[missing] = nil
            let fast = ContentKey.canonicalVideoChunks(plan, chunks: chunks, encoderThreads: 3, assetContent: content)
            for (chunk, bytes) in zip(chunks, fast) {
                let drawn = (chunk.start..<chunk.end).contains { k in
                    let f = plan.frame(k)
                    return f.layers.contains { $0.asset == missing || $0.filters.contains { $0.asset == missing } }
                        || f.overlays.contains { if case .image(missing) = plan.overlays[$0.index].kind { true } else { false } }
                }
                #expect((bytes == nil) == drawn, "\(missing) in \(chunk)")
            }
        }
    }

    /// Keyed in parts on several cores (here one chunk a part at least), every key is the digest
    /// of the bytes one sequential walk writes for its chunk.
    @Test func keysInPartsAreTheKeysOfOneWalk() throws {
        let plan = try Self.plan()
        for chunks in Self.chunkings(plan) where chunks.count > 1 {
            let sequential = ContentKey.videoChunks(plan, chunks: chunks, encoderThreads: 3, assetContent: Self.content,
                                                    minimumChunksPerPart: .max)
            let parallel = ContentKey.videoChunks(plan, chunks: chunks, encoderThreads: 3, assetContent: Self.content, minimumChunksPerPart: 1)
            #expect(parallel == sequential, "\(chunks.count) chunks")
        }
    }

    /// The keys of this composition as the encoder wrote them before its rewrite for speed
    /// (computed with the encoder and frame cursor of commit c8fa177, the byte-at-a-time
    /// `[UInt8]` encoder of the first rewrite for speed; renderer version 5 since colour management,
    /// which added the output colour's fields, the composition's colour keys and the new keys
    /// below, vouched for by `ReferenceKey`). If this fails, stored results would no longer be found: restore the
    /// bytes, or bump `rendererVersion` on purpose and update these (the test that checks
    /// `ContentKey` against `ReferenceKey` vouches for the new ones).
    @Test func keysAreTheOnesStoredResultsHave() throws {
        let plan = try Self.plan()
        let keys = ContentKey.videoChunks(plan, chunks: ChunkPlanner.plan(for: plan), encoderThreads: 3, assetContent: Self.content)
        #expect(keys == Self.storedKeys)
        #expect(ContentKey.audio(plan, assetContent: Self.content) == Self.storedAudioKey)
    }

    static let storedKeys: [String?] = [
        "00136e316e781e1b92d72af37e893b48dc4208ec27fe509eaf54b361ef98934f",
        "0ab51cd6c8d77f3f427cdc7d71e4b2159f70c40ea543851d8ce2422a3519f55e",
    ]
    static let storedAudioKey: String? = "573a41c9af1f3613e0c536473c7ac0154c0d2a753fbfa9324d16e5ee6bbe13d6"
}

/// The canonical form of a video chunk written the plain way (see `CanonicalEncoder`):
/// `name=<byte count>:<value>\n` per field, integers and rationals in decimal, doubles as the
/// hexadecimal bit pattern.
private enum ReferenceKey {
    static func field(_ name: String, _ value: String) -> String { "\(name)=\(value.utf8.count):\(value)\n" }
    static func hex(_ v: Double) -> String { String(v.bitPattern, radix: 16) }
    static func rational(_ r: Rational) -> String { "\(r.num)/\(r.den)" }
    static func color(_ c: RGBAColor) -> String { "\(c.r),\(c.g),\(c.b),\(c.a)" }
    static func transform(_ t: AffineTransform) -> String { [t.a, t.b, t.c, t.d, t.tx, t.ty].map(hex).joined(separator: ",") }
    static func rect(_ r: Rect?) -> String { r.map { [$0.x, $0.y, $0.width, $0.height].map(hex).joined(separator: ",") } ?? "none" }

    static func videoChunk(_ plan: RenderPlan, frames: FrameRange, encoderThreads: Int, assetContent: [String: String]) -> String {
        let v = plan.export.video
        var out = field("key", "video-chunk") + field("renderer", String(ContentKey.rendererVersion))
        out += field("codec", v.codec) + field("profile", v.profile) + field("crf", String(v.crf))
        out += field("x264Preset", v.x264Preset) + field("x265Preset", v.x265Preset ?? "none")
        out += field("gopDuration", rational(v.gopDuration)) + field("gopFrames", String(v.gopFrames))
        out += field("bitRate", v.bitRate.map(String.init) ?? "none")
        if let s = v.vp9Speed { out += field("vp9Speed", String(s)) }
        if let s = v.svtav1Preset { out += field("svtav1Preset", String(s)) }
        if v.alpha == true { out += field("alpha", "true") }
        out += field("encoderThreads", String(encoderThreads))
        out += field("renderSize", "\(plan.renderSize.width)x\(plan.renderSize.height)")
        out += field("outputSize", "\(plan.outputSize.width)x\(plan.outputSize.height)")
        out += field("frameDuration", rational(plan.frameDuration))
        let colour = plan.colour, tone = colour.toneMapping
        out += field("primaries", String(colour.space.primaries.rawValue)) + field("transfer", String(colour.space.transfer.rawValue))
        out += field("matrix", String(colour.space.matrix.rawValue)) + field("range", colour.space.range.rawValue)
        out += field("toneMapping", tone.curve.rawValue) + field("toneParam", tone.param.map(hex) ?? "none")
        out += field("desat", hex(tone.desat)) + field("peak", tone.peak.map(hex) ?? "none")
        if let hdr = colour.hdr {
            out += field("masteringPrimaries", hdr.masteringDisplay.primaries.rawValue)
            out += field("masteringMax", hex(hdr.masteringDisplay.maxLuminance)) + field("masteringMin", hex(hdr.masteringDisplay.minLuminance))
            out += field("maxCLL", String(hdr.contentLightLevel.maxCLL)) + field("maxFALL", String(hdr.contentLightLevel.maxFALL))
        }
        out += field("frames", String(frames.count))
        for k in frames.start..<frames.end {
            let frame = plan.frame(k)
            out += field("time", rational(frame.time)) + field("background", color(frame.background))
            out += field("layers", String(frame.layers.count))
            for layer in frame.layers {
                out += field("track", String(layer.trackID)) + field("source", assetContent[layer.asset]!)
                out += field("sourceTime", rational(layer.sourceTime)) + field("transform", transform(layer.transform))
                out += field("opacity", hex(layer.opacity)) + field("crop", rect(layer.crop))
                if !layer.filters.isEmpty { out += filters(layer.filters, assetContent) }
                if layer.blendMode != .normal { out += field("blendMode", layer.blendMode.rawValue) }
            }
            if !frame.filters.isEmpty { out += filters(frame.filters, assetContent) }
            out += field("overlays", String(frame.overlays.count))
            for draw in frame.overlays {
                let overlay = plan.overlays[draw.index]
                switch overlay.kind {
                case .image(let id): out += field("image", assetContent[id]!)
                case .text(let text, let font, let size, let c):
                    out += field("text", text) + field("font", font) + field("fontSize", hex(size)) + field("color", color(c))
                }
                out += field("frame", rect(overlay.frame)) + field("transform", transform(draw.transform)) + field("opacity", hex(draw.opacity))
            }
            out += captions(plan, at: frame.time)
        }
        return out
    }

    static func filters(_ filters: [FilterDraw], _ assetContent: [String: String]) -> String {
        var out = field("filters", String(filters.count))
        for filter in filters {
            out += field("filter", filter.type.rawValue)
            for (path, value) in filter.parameters { out += field(path, hex(value)) }
            switch filter {
            case .vignette(_, _, let c, _, _), .chromaKey(let c, _, _, _): out += field("color", color(c))
            case .lut(let asset, _): out += field("lut", assetContent[asset]!)
            default: break
            }
        }
        return out
    }

    static func captions(_ plan: RenderPlan, at time: Rational) -> String {
        let draws = CaptionTimeline(plan).draws(at: time)
        guard !draws.isEmpty, let captions = plan.captions else { return "" }
        var out = field("captions", String(draws.count))
        for draw in draws {
            let caption = captions[draw.caption], s = caption.style
            out += field("caption", String(draw.caption)) + field("font", s.font) + field("fontSize", hex(s.fontSize))
            out += field("color", color(s.color)) + field("backgroundColor", color(s.backgroundColor))
            out += field("outlineColor", color(s.outlineColor)) + field("outlineWidth", hex(s.outlineWidth))
            out += field("position", s.position.rawValue) + field("margin", hex(s.margin)) + field("maxWidth", hex(s.maxWidth))
            out += field("highlight", caption.highlight.map(color) ?? "none") + field("cues", String(draw.cues.count))
            for (cue, reached) in zip(draw.cues, draw.reached) {
                out += field("text", caption.cues[cue].text) + field("reached", String(reached))
            }
        }
        return out
    }
}
