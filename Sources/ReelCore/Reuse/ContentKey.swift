import Crypto
import Dispatch
import Foundation
import Synchronization

/// A SHA-256 over everything that decides a render task's bytes (64 lower-case hex digits):
/// two tasks with the same key produce the same file, so a stored result of one stands for the
/// other (incremental re-rendering: after an edit only the chunks whose key changed are
/// rendered again, across jobs and submitters).
///
/// A video chunk's key covers, in `CanonicalEncoder` form: `rendererVersion`; the video
/// encoder settings (codec, profile, CRF, speed presets, GOP, bit rate) and the encoder thread
/// count; the render size, output size and frame duration; the
/// output colour (primaries, transfer, matrix, range, tone mapping); and for each frame of its range the
/// `FrameDescription` (`FrameCursor.frame(_:)`): time, background, every layer (track, source
/// by content hash, source time, transform, opacity, crop) and every overlay (its bitmap by
/// content hash or text/font/size/colour, frame, evaluated transform and opacity), and the
/// burned-in captions on screen (style, highlight, text and how far the highlight has reached). The audio
/// key covers the whole mix: every audio track's volume, ramps and segments (source by
/// content hash, source start, position, duration, and the source duration of a segment that
/// changes speed, with the track's `audioTimePitchAlgorithm` then, and its ducking), the audio export settings and the composition's duration and frame grid,
/// and the loudness target when the mix is normalised.
/// A video frame's source time already reflects any speed change.
///
/// Sources are named by content (`assetContent`: asset id → SHA-256 of the file), never by id or
/// path, so the same media under another name or in another job gives the same key. A key
/// cannot be made when a source has no known content hash (`nil`: render the task).
///
/// Not covered, so it must be the same wherever results are shared: the fonts installed on
/// agents (a text overlay is keyed by font name), and the renderer itself — see `rendererVersion`.
public enum ContentKey {
    /// Bump this whenever the output for the same input could change: any change to
    /// compositing, scaling, colour conversion, text rasterising, audio mixing or resampling,
    /// the encoder's or muxer's options or the FFmpeg/x264/x265 libraries Reel is built
    /// against, or to what a `FrameDescription` means. A bump makes every stored result
    /// unreachable for reuse (they are rendered again once), which is always safe; forgetting
    /// one would let stale chunks be stitched next to fresh ones.
    ///
    /// 3: `gaussianBlur` from σ 2.5 (in a plane's pixels) is Young and van Vliet's recursive
    /// filter instead of direct convolution (a few code values apart at the sharpest edges).
    /// (2 was used for a while by an affine-filter path since backed out; never reuse a number.)
    /// 4: runs of affine colour filters whose terms fit are worked out in 16-bit fixed point
    /// (`FixedAffine`): some code values one apart from the `Float` path's.
    /// 5: colour is managed: the compositor works in the output's Y'CbCr (BT.709 unless the
    /// composition says otherwise, where every output used to be BT.601), sources are converted
    /// from their own tags through zimg, HDR sources are tone-mapped, and outputs are tagged.
    /// The same composition now gives other pixels, and the key covers the colour settings.
    public static let rendererVersion = 5

    /// The key of video chunk `frames` of `plan` encoded with `encoderThreads` threads.
    public static func videoChunk(_ plan: RenderPlan, frames: FrameRange, encoderThreads: Int,
                                  assetContent: [String: String]) -> String? {
        videoChunks(plan, chunks: [frames], encoderThreads: encoderThreads, assetContent: assetContent)[0]
    }

    /// The keys of video chunks `chunks` of `plan` (in order), walking their frames with one
    /// `FrameCursor`: linear in the frames keyed, whatever the number of segments.
    ///
    /// A long job's chunks are keyed on every core at once, in contiguous parts of at least
    /// `minimumChunksPerPart` (a 16 h timeline walks 1.7 million frames while its submitter
    /// waits): each part walks its frames with its own cursor and memo, which decide how fast a
    /// frame is written, never what is written, so the keys are the ones one walk gives.
    public static func videoChunks(_ plan: RenderPlan, chunks: [FrameRange], encoderThreads: Int,
                                   assetContent: [String: String], minimumChunksPerPart: Int = 256) -> [String?] {
        let parts = max(1, min(ProcessInfo.processInfo.activeProcessorCount, chunks.count / max(1, minimumChunksPerPart)))
        guard parts > 1 else {
            return walkVideoChunks(plan, chunks: chunks, encoderThreads: encoderThreads, assetContent: assetContent) { digest($0) }
        }
        let bounds = (0...parts).map { $0 * chunks.count / parts }
        let keys = Mutex([[String?]](repeating: [], count: parts))
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            let partKeys = walkVideoChunks(plan, chunks: Array(chunks[bounds[part]..<bounds[part + 1]]), encoderThreads: encoderThreads,
                                           assetContent: assetContent) { digest($0) }
            keys.withLock { $0[part] = partKeys }
        }
        return keys.withLock { $0.flatMap { $0 } }
    }

    /// The canonical bytes the keys of `videoChunks` hash (nil where a source has no content hash).
    static func canonicalVideoChunks(_ plan: RenderPlan, chunks: [FrameRange], encoderThreads: Int,
                                     assetContent: [String: String]) -> [[UInt8]?] {
        walkVideoChunks(plan, chunks: chunks, encoderThreads: encoderThreads, assetContent: assetContent) { $0.bytes }
    }

    /// Writes each chunk's canonical form into one reused encoder and hands it to `finish`.
    /// `picture`: an HLS ladder's chunk picture key (`renditionChunks`), which writes the
    /// ladder's segment grid but none of its renditions.
    static func walkVideoChunks<T>(_ plan: RenderPlan, chunks: [FrameRange], encoderThreads: Int,
                                   assetContent: [String: String], picture: Bool = false,
                                   finish: (CanonicalEncoder) -> T) -> [T?] {
        var cursor = FrameCursor(plan: plan)
        let captions = plan.captions.map { _ in CaptionTimeline(plan) }
        var memo = FrameKeyMemo()
        var out = CanonicalEncoder()
        return chunks.map { frames in
            out.removeAll()
            start(&out, kind: picture ? "ladder-picture" : "video-chunk")
            let video = plan.export.video
            out.write("codec", video.codec)
            out.write("profile", video.profile)
            out.write("crf", video.crf)
            out.write("x264Preset", video.x264Preset)
            out.write("x265Preset", video.x265Preset ?? "none")
            out.write("gopDuration", video.gopDuration)
            out.write("gopFrames", video.gopFrames)
            out.write("bitRate", video.bitRate)
            // Written only when set, so the keys of H.264, HEVC and ProRes chunks stay as they were.
            if let speed = video.vp9Speed { out.write("vp9Speed", speed) }
            if let preset = video.svtav1Preset { out.write("svtav1Preset", preset) }
            // Only when the output writes alpha: the frames differ (their alpha, and the colour
            // of transparent pixels), and opaque outputs keep their keys.
            if video.writesAlpha { out.write("alpha", "true") }
            // Written only for an HLS ladder, so the keys of single-file chunks stay as they were.
            if let ladder = plan.export.ladder {
                if picture { out.write("segmentFrames", ladder.segmentFrames) } else { plan.write(ladder: ladder, to: &out) }
            }
            out.write("encoderThreads", encoderThreads)
            out.write("renderSize", plan.renderSize)
            out.write("outputSize", plan.outputSize)
            out.write("frameDuration", plan.frameDuration)
            plan.colour.write(to: &out)
            out.write("frames", frames.count)
            for k in frames.start..<frames.end {
                let frame = cursor.frame(k)
                guard plan.write(frame: frame, to: &out, memo: &memo, assetContent: assetContent) else { return nil }
                if let captions { plan.write(captionsAt: frame.time, timeline: captions, to: &out) }
            }
            return finish(out)
        }
    }

    /// The key of the audio task (the whole mix of `plan`).
    public static func audio(_ plan: RenderPlan, assetContent: [String: String]) -> String? {
        var out = CanonicalEncoder()
        start(&out, kind: "audio")
        let audio = plan.export.audio
        out.write("codec", audio.codec)
        out.write("bitRate", audio.bitRate)
        out.write("sampleRate", audio.sampleRate)
        out.write("channels", audio.channels)
        if let loudness = audio.loudness { plan.write(loudness: loudness, to: &out) }
        if let outputs = plan.export.audioOutputs { plan.write(audioOutputs: outputs, to: &out) }
        // An HLS ladder's audio is cut into segments on the ladder's grid.
        if let ladder = plan.export.ladder { out.write("segmentFrames", ladder.segmentFrames) }
        out.write("duration", plan.duration)
        out.write("frameDuration", plan.frameDuration)
        out.write("tracks", plan.audioTracks.count)
        for track in plan.audioTracks {
            out.write("track", track.id)
            out.write("volume", track.volume)
            out.write("ramps", track.volumeRamps.count)
            for ramp in track.volumeRamps {
                out.write("from", ramp.from); out.write("to", ramp.to)
                out.write("start", ramp.start); out.write("duration", ramp.duration)
            }
            out.write("segments", track.segments.count)
            for segment in track.segments {
                guard let content = assetContent[segment.asset] else { return nil }
                out.write("source", content)
                out.write("sourceStart", segment.sourceStart)
                out.write("at", segment.at)
                out.write("duration", segment.duration)
                // Written only for a speed change, so the keys of unscaled mixes stay as they were.
                if segment.isTimeScaled { out.write("sourceDuration", segment.sourceDuration) }
            }
            // The stretching only matters (and is only written) when a segment changes speed.
            if track.segments.contains(where: \.isTimeScaled) { out.write("timePitch", track.timePitchAlgorithm.rawValue) }
            // Written only when the track ducks, so the keys of other mixes stay as they were.
            if let duck = track.duck {
                out.write("duckUnder", duck.under.count)
                for id in duck.under { out.write("under", id) }
                out.write("amount", duck.amount); out.write("threshold", duck.threshold)
                out.write("attack", duck.attack); out.write("release", duck.release)
            }
        }
        return digest(out)
    }

    /// Every key starts with its kind and `rendererVersion`.
    static func start(_ out: inout CanonicalEncoder, kind: StaticString) {
        out.write("key", kind.description)
        out.write("renderer", rendererVersion)
    }

    /// SHA-256 of the encoder's bytes in lower-case hexadecimal.
    static func digest(_ out: CanonicalEncoder) -> String {
        var hasher = SHA256()
        out.withBytes { hasher.update(bufferPointer: $0) }
        let hash = hasher.finalize()
        return String(unsafeUninitializedCapacity: 64) { text in
            var i = 0
            for byte in hash {
                text[i] = hexDigits[Int(byte >> 4)]; text[i + 1] = hexDigits[Int(byte & 0xF)]
                i += 2
            }
            return i
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}

extension RenderPlan {
    /// Writes `frame` canonically; `false` when a source it draws has no content hash.
    fileprivate func write(frame: FrameDescription, to out: inout CanonicalEncoder, memo: inout FrameKeyMemo,
                           assetContent: [String: String]) -> Bool {
        out.write("time", frame.time)
        // Everything after the time is often what the previous frame wrote (a still held for
        // seconds): copied then, and only written out when something in it changed.
        if memo.repeatsLastFrame(frame) {
            memo.appendLastFrame(to: &out)
            return true
        }
        let recordStart = out.byteCount
        out.write("background", frame.background)
        out.write("layers", frame.layers.count)
        for (l, layer) in frame.layers.enumerated() {
            guard let content = memo.content(of: layer.asset, in: assetContent) else { return false }
            out.write("track", layer.trackID)
            out.write("source", content)
            out.write("sourceTime", layer.sourceTime)
            memo.writeTransform(layer.transform, ofLayer: l, to: &out)
            out.write("opacity", layer.opacity)
            out.write("crop", layer.crop)
            // Written only when present, so layers without effects keep the keys they had
            // before filters existed (their output did not change).
            if !layer.filters.isEmpty {
                guard write(filters: layer.filters, to: &out, assetContent: assetContent) else { return false }
            }
            if layer.blendMode != .normal { out.write("blendMode", layer.blendMode.rawValue) }
        }
        if !frame.filters.isEmpty {
            guard write(filters: frame.filters, to: &out, assetContent: assetContent) else { return false }
        }
        out.write("overlays", frame.overlays.count)
        for draw in frame.overlays {
            let overlay = overlays[draw.index]
            switch overlay.kind {
            case .image(let id):
                guard let content = assetContent[id] else { return false }
                out.write("image", content)
            case .text(let text, let font, let fontSize, let color):
                out.write("text", text)
                out.write("font", font)
                out.write("fontSize", fontSize)
                out.write("color", color)
            }
            out.write("frame", overlay.frame)
            out.write("transform", draw.transform)
            out.write("opacity", draw.opacity)
        }
        memo.remember(frame, record: out.bytes(from: recordStart))
        return true
    }

    /// Writes evaluated filters: each one's type, every numeric parameter by its path, its
    /// colour, and a LUT by the content hash of its file. `false` when a LUT has no hash.
    fileprivate func write(filters: [FilterDraw], to out: inout CanonicalEncoder, assetContent: [String: String]) -> Bool {
        out.write("filters", filters.count)
        for filter in filters {
            out.write("filter", filter.type.rawValue)
            for (path, value) in filter.parameters { out.write(named: path, value) }
            switch filter {
            case .vignette(_, _, let color, _, _), .chromaKey(let color, _, _, _): out.write("color", color)
            case .lut(let asset, _):
                guard let content = assetContent[asset] else { return false }
                out.write("lut", content)
            default: break
            }
        }
        return true
    }
}

/// What repeats from frame to frame of a key, kept so that a chunk's frames do not look up or
/// format it again: the last source's content hash and each layer position's last transform
/// field (six hexadecimal doubles, the longest field of a frame). Only an optimisation: the
/// bytes written are the same with or without it.
///
/// The bytes of a frame after its `time` field depend only on the frame's background, its
/// layers (track, asset — whose content hash is fixed for one walk —, source time, transform,
/// opacity, crop, filters, blend mode), its overlays (index into the plan's fixed list,
/// transform, opacity) and its picture filters. When all of those are the same as the last
/// frame's — doubles compared bit for bit, since the bytes are bit patterns — the last frame's
/// bytes are copied instead of written again. Frames with filters are always written out (their
/// parameters are not compared).
struct FrameKeyMemo {
    private var asset: String?
    private var content: String?
    private var transforms: [(bits: TransformBits?, field: [UInt8])] = []
    /// The last frame written in full, when it has no filters, and its bytes after `time`.
    private var lastFrame: FrameDescription?
    private var lastRecord: [UInt8] = []

    private struct TransformBits: Equatable {
        var a, b, c, d, tx, ty: UInt64
    }

    /// Whether `frame` writes the same bytes after its time as the frame `remember` was last given.
    func repeatsLastFrame(_ frame: FrameDescription) -> Bool {
        guard let last = lastFrame, frame.filters.isEmpty, last.background == frame.background,
              last.layers.count == frame.layers.count, last.overlays.count == frame.overlays.count else { return false }
        for (a, b) in zip(last.layers, frame.layers) {
            guard a.trackID == b.trackID, a.asset == b.asset, a.sourceTime == b.sourceTime,
                  Self.sameBits(a.transform, b.transform), a.opacity.bitPattern == b.opacity.bitPattern,
                  Self.sameBits(a.crop, b.crop), b.filters.isEmpty, a.blendMode == b.blendMode else { return false }
        }
        for (a, b) in zip(last.overlays, frame.overlays) {
            guard a.index == b.index, Self.sameBits(a.transform, b.transform),
                  a.opacity.bitPattern == b.opacity.bitPattern else { return false }
        }
        return true
    }

    /// Appends the bytes of the last frame remembered, after its time field.
    func appendLastFrame(to out: inout CanonicalEncoder) { out.append(lastRecord) }

    /// Remembers `frame` and the bytes written for it after its time (not for a frame with filters).
    mutating func remember(_ frame: FrameDescription, record: [UInt8]) {
        guard frame.filters.isEmpty, frame.layers.allSatisfy({ $0.filters.isEmpty }) else {
            lastFrame = nil
            return
        }
        lastFrame = frame
        lastRecord = record
    }

    private static func sameBits(_ a: AffineTransform, _ b: AffineTransform) -> Bool {
        a.a.bitPattern == b.a.bitPattern && a.b.bitPattern == b.b.bitPattern && a.c.bitPattern == b.c.bitPattern
            && a.d.bitPattern == b.d.bitPattern && a.tx.bitPattern == b.tx.bitPattern && a.ty.bitPattern == b.ty.bitPattern
    }

    private static func sameBits(_ a: Rect?, _ b: Rect?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.x.bitPattern == b.x.bitPattern && a.y.bitPattern == b.y.bitPattern
            && a.width.bitPattern == b.width.bitPattern && a.height.bitPattern == b.height.bitPattern
    }

    /// `assetContent[asset]`, remembered for the next call with the same asset.
    mutating func content(of asset: String, in assetContent: [String: String]) -> String? {
        if asset == self.asset, let content { return content }
        self.asset = asset
        content = assetContent[asset]
        return content
    }

    /// Writes `transform=…` for the layer at `position`, copying the bytes written last time if
    /// the transform is the same bit for bit (`==` would equate 0 and −0, which print apart).
    mutating func writeTransform(_ t: AffineTransform, ofLayer position: Int, to out: inout CanonicalEncoder) {
        let bits = TransformBits(a: t.a.bitPattern, b: t.b.bitPattern, c: t.c.bitPattern, d: t.d.bitPattern,
                                 tx: t.tx.bitPattern, ty: t.ty.bitPattern)
        while transforms.count <= position { transforms.append((nil, [])) }
        if transforms[position].bits == bits {
            out.append(transforms[position].field)
            return
        }
        let start = out.byteCount
        out.write("transform", t)
        transforms[position] = (bits, out.bytes(from: start))
    }
}
