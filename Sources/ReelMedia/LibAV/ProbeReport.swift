import ReelCore

/// Everything `reel probe` shows about a file. `Codable` for `--json`; `description` is the
/// human-readable form. Times are exact rationals (seconds), as everywhere in Reel.
public struct ProbeReport: Sendable, Hashable, Codable, CustomStringConvertible {
    public struct Stream: Sendable, Hashable, Codable {
        public var index: Int
        /// `video`, `audio`, `subtitle`, `data`, `attachment`.
        public var type: String
        public var codec: String
        public var profile: String?
        public var bitRate: Int?
        public var timeBase: Rational?
        /// Stream duration (its own time base), if the container states one.
        public var duration: Rational?
        // Video
        public var pixelFormat: String?
        public var size: PixelSize?
        public var displaySize: PixelSize?
        public var preferredTransform: AffineTransform?
        /// Clockwise rotation on screen, degrees in [0, 360).
        public var rotationDegrees: Double?
        /// Average frame rate (frames / duration).
        public var averageFrameRate: Rational?
        /// Nominal (lowest common) frame rate, `r_frame_rate`.
        public var nominalFrameRate: Rational?
        public var hasAlpha: Bool?
        public var isAttachedPicture: Bool?
        /// The colour tags the stream carries (absent ones nil) and the colour space Reel reads
        /// it in (the tags, with the gaps guessed: docs/colour.md).
        public var colourTags: ColourTags?
        public var colour: ColourSpace?
        // Audio
        public var sampleRate: Int?
        public var channels: Int?
        public var channelLayout: String?
        public var sampleFormat: String?
    }

    /// Frames between consecutive keyframes of the first video stream, measured over its
    /// first ~10 s of packets (in decode order). `nil` when fewer than two keyframes were seen.
    public struct KeyframeInterval: Sendable, Hashable, Codable {
        public var minimum: Int
        public var maximum: Int
        /// Keyframes seen in the scanned packets.
        public var keyframes: Int
        /// Packets scanned.
        public var packets: Int
    }

    public var path: String
    /// Demuxer name(s), e.g. `mov,mp4,m4a,3gp,3g2,mj2`.
    public var format: String
    public var formatLongName: String?
    public var duration: Rational?
    public var startTime: Rational
    public var bitRate: Int?
    public var streams: [Stream]
    public var keyframeInterval: KeyframeInterval?
    /// What Reel's core will see (kind, duration, first video/audio track).
    public var asset: AssetDescription

    public var description: String {
        var lines: [String] = []
        lines.append("\(path): \(format)\(formatLongName.map { " (\($0))" } ?? "")")
        lines.append("  kind: \(asset.kind.rawValue)")
        lines.append("  duration: \(duration.map(Self.seconds) ?? "unknown"), start: \(Self.seconds(startTime))"
                     + (bitRate.map { ", bit rate: \($0 / 1000) kb/s" } ?? ""))
        for s in streams {
            var parts = ["#\(s.index) \(s.type): \(s.codec)" + (s.profile.map { " (\($0))" } ?? "")]
            if let f = s.pixelFormat { parts.append(f) }
            if let size = s.size { parts.append("\(size)") }
            if let d = s.displaySize, d != s.size { parts.append("display \(d)") }
            if let r = s.rotationDegrees, r != 0 {
                // ffprobe's number (counter-clockwise, in (-180, 180]), so the two tools agree.
                let ccw = (360 - Int(r)) % 360
                parts.append("rotation \(ccw > 180 ? ccw - 360 : ccw)° (as ffprobe: counter-clockwise)")
            }
            if let t = s.preferredTransform, t != .identity { parts.append("transform \(t)") }
            if let fps = s.averageFrameRate { parts.append("\(Self.rate(fps)) fps avg") }
            if let fps = s.nominalFrameRate, fps != s.averageFrameRate { parts.append("\(Self.rate(fps)) fps nominal") }
            if let rate = s.sampleRate { parts.append("\(rate) Hz") }
            if let ch = s.channels { parts.append("\(ch) ch" + (s.channelLayout.map { " (\($0))" } ?? "")) }
            if let f = s.sampleFormat { parts.append(f) }
            if let tb = s.timeBase { parts.append("tb \(tb)") }
            if let d = s.duration { parts.append("duration \(Self.seconds(d))") }
            if let b = s.bitRate { parts.append("\(b / 1000) kb/s") }
            if s.hasAlpha == true { parts.append("alpha") }
            if s.isAttachedPicture == true { parts.append("attached picture") }
            lines.append("  " + parts.joined(separator: ", "))
            if let colour = s.colour, let tags = s.colourTags {
                let tagged = [tags.matrix?.name, tags.primaries?.name, tags.transfer?.name, tags.range?.name]
                let said = tagged.allSatisfy { $0 == nil } ? "untagged"
                    : "tagged " + tagged.map { $0 ?? "unspecified" }.joined(separator: "/")
                lines.append("    colour: \(said); read as \(colour.summary)" + (colour.isHighDynamicRange ? " (HDR: tone-mapped into SDR outputs)" : ""))
            }
        }
        if let k = keyframeInterval {
            let span = k.minimum == k.maximum ? "\(k.minimum)" : "\(k.minimum)–\(k.maximum)"
            lines.append("  keyframe interval: \(span) frames (\(k.keyframes) keyframes in \(k.packets) packets)")
        } else if streams.contains(where: { $0.type == "video" }) {
            lines.append("  keyframe interval: unknown (fewer than two keyframes in the first 10 s)")
        }
        return lines.joined(separator: "\n")
    }

    private static func seconds(_ r: Rational) -> String {
        let s = r.seconds
        return r.den == 1 ? "\(r.num) s" : "\((s * 1_000_000).rounded() / 1_000_000) s (\(r))"
    }
    private static func rate(_ r: Rational) -> String {
        r.den == 1 ? "\(r.num)" : "\((r.seconds * 1000).rounded() / 1000) (\(r))"
    }
}
