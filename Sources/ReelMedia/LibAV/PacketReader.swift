import CFFmpeg
import ReelCore

/// Reads the compressed packets of one stream of a file, for stream copy (the finaliser
/// joins chunks this way): packets come out in decode order with times in the stream's
/// time base, which is also `parameters.timeBase`, so they can go straight to a
/// `MovieWriter` created with `parameters`.
///
/// Not thread-safe: used from one thread at a time (`@unchecked Sendable` so it can move).
public final class PacketReader: @unchecked Sendable {
    /// The stream's codec parameters and time base (for `MovieWriter`).
    public let parameters: CodecParameters
    public let streamIndex: Int
    private let input: InputFile
    private let packet = Packet()

    /// Opens `path` and selects its first stream of `kind` ("video" or "audio"). The
    /// container's header describes the streams (no frames are decoded to probe them).
    public convenience init(path: String, kind: String) throws {
        try self.init(try MediaSources.local.location(of: path), kind: kind)
    }

    /// Opens `location` (see `init(path:kind:)`).
    public init(_ location: MediaLocation, kind: String) throws {
        input = try InputFile(location, findStreamInfo: false)
        let type = kind == "audio" ? AVMEDIA_TYPE_AUDIO : AVMEDIA_TYPE_VIDEO
        guard kind == "audio" || kind == "video", let index = input.firstStream(of: type) else {
            throw MediaError(code: .noStream, message: "no \(kind) stream", context: "opening \(location)")
        }
        streamIndex = index
        let stream = input.stream(index)
        let rate = Rational(stream.pointee.avg_frame_rate)
        parameters = try CodecParameters(copying: stream.pointee.codecpar,
                                         timeBase: Rational(stream.pointee.time_base) ?? Rational(1, 90000),
                                         frameDuration: rate.flatMap { $0.num > 0 ? .one / $0 : nil })
    }

    /// The next packet of the stream, or nil at the end of the file.
    public func next() throws -> EncodedPacket? {
        while try input.read(into: packet) {
            if packet.streamIndex == streamIndex { return EncodedPacket(copying: packet.pointer) }
        }
        return nil
    }
}
