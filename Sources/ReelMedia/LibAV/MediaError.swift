import CFFmpeg

/// A failure in the media layer: the libav error code (or 0 when the problem was found by
/// Reel itself), libav's own message for it, and what Reel was doing ("opening /x.mp4").
public struct MediaError: Error, CustomStringConvertible, Sendable, Hashable {
    /// What kind of failure this is, independent of the file involved.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate let raw: String
        /// A libav call returned a negative status.
        public static let libav = Code(raw: "libav")
        /// The file has no stream of the kind asked for.
        public static let noStream = Code(raw: "no stream")
        /// No decoder or encoder is available for a codec.
        public static let noCodec = Code(raw: "no codec")
        /// The media decoded, but yielded nothing usable (no frame, empty file).
        public static let noData = Code(raw: "no data")
        /// A caller passed something the layer cannot work with.
        public static let invalidArgument = Code(raw: "invalid argument")
        public var description: String { raw }
    }

    public var code: Code
    /// The libav status code (negative), or 0 when the error did not come from libav.
    public var status: Int32
    /// libav's message for `status` (`av_strerror`) or Reel's own explanation.
    public var message: String
    /// What was being attempted, e.g. "opening /x.mp4".
    public var context: String

    public init(code: Code, status: Int32 = 0, message: String, context: String) {
        self.code = code; self.status = status; self.message = message; self.context = context
    }

    /// An error for a failed libav call, with libav's message for `status`.
    public static func libav(_ status: Int32, _ context: String) -> MediaError {
        MediaError(code: .libav, status: status, message: avErrorString(status), context: context)
    }

    public var description: String { "\(context): \(message)" + (status != 0 ? " (libav error \(status))" : "") }
}

/// libav's message for an error code.
func avErrorString(_ status: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    reel_err2str(status, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Throws when a libav call returned a negative status; returns the status otherwise
/// (some calls return a useful count).
@discardableResult
func check(_ status: Int32, _ context: @autoclosure () -> String) throws -> Int32 {
    if status < 0 { throw MediaError.libav(status, context()) }
    return status
}

/// `AVERROR(EAGAIN)` and `AVERROR_EOF`, which the send/receive APIs use as flow control.
let averrorEAGAIN = reel_eagain()
let averrorEOF = reel_averror_eof()
let noPTS = reel_nopts_value()
