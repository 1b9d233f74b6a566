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

    /// Opens `path` and selects its first stream of `kind` ("video" or "audio"), or with
    /// `ordinal` its stream of that kind numbered `ordinal` from 0. The container's header
    /// describes the streams (no frames are decoded to probe them).
    public convenience init(path: String, kind: String, ordinal: Int = 0) throws {
        try self.init(try MediaSources.local.location(of: path), kind: kind, ordinal: ordinal)
    }

    /// Opens `location` (see `init(path:kind:ordinal:)`).
    public init(_ location: MediaLocation, kind: String, ordinal: Int = 0) throws {
        let input = try InputFile(location, findStreamInfo: false)
        self.input = input
        let type = kind == "audio" ? AVMEDIA_TYPE_AUDIO : AVMEDIA_TYPE_VIDEO
        let first = input.firstStream(of: type)
        let index = ordinal == 0 ? first : first.flatMap { first in
            (first..<input.streamCount).filter { input.stream($0).pointee.codecpar.pointee.codec_type == type }.dropFirst(ordinal).first
        }
        guard kind == "audio" || kind == "video", let index else {
            throw MediaError(code: .noStream, message: ordinal == 0 ? "no \(kind) stream" : "no \(kind) stream number \(ordinal + 1)",
                             context: "opening \(location)")
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
