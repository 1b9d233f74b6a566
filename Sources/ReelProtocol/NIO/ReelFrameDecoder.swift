import NIOCore

/// Splits the byte stream into `Frame`s (proto/PROTOCOL.md §1): lines ending in `\n`, each
/// optionally followed by the exact payload its `size=` declares.
///
/// Bounded: it never buffers more than `maxLineLength + 1` bytes looking for a newline, nor a
/// payload above `maxPayloadLength`. A violation throws a `ReelProtocolError` (the
/// `ByteToMessageHandler` then stops decoding and the connection handler closes that one
/// connection). Like swift-nio-extras' `LineBasedFrameDecoder` it remembers how far it has
/// already scanned, so a line trickling in byte by byte is scanned once.
public struct ReelFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = Frame

    private let maxLineLength: Int
    private let maxPayloadLength: Int
    /// A header line whose payload is still arriving, and the payload's length.
    private var pending: (line: String, size: Int)?
    /// Bytes at the start of the readable region already known to hold no `\n`.
    private var scanned = 0

    public init(maxLineLength: Int = ProtocolLimits.maxLineLength, maxPayloadLength: Int = ProtocolLimits.maxPayloadLength) {
        self.maxLineLength = maxLineLength
        self.maxPayloadLength = maxPayloadLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = try nextFrame(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(frame))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A partial line or payload at EOF is dropped: the peer went away mid-message.
        try decode(context: context, buffer: &buffer)
    }

    /// The decoding step without a channel, so it can be driven directly.
    mutating func nextFrame(from buffer: inout ByteBuffer) throws(ReelProtocolError) -> Frame? {
        if let (line, size) = pending {
            guard let payload = buffer.readBytes(length: size) else { return nil }
            pending = nil
            return Frame(line: line, payload: payload)
        }
        let view = buffer.readableBytesView
        let limit = min(view.count, maxLineLength + 1)
        var newline: Int?
        if scanned < limit {
            let start = view.startIndex
            if let index = view[(start + scanned)..<(start + limit)].firstIndex(of: UInt8(ascii: "\n")) {
                newline = index - start
            }
        }
        guard let length = newline else {
            scanned = limit
            if view.count > maxLineLength {
                throw ReelProtocolError(.lineTooLong, "line longer than \(maxLineLength) bytes")
            }
            return nil
        }
        scanned = 0
        let bytes = buffer.readBytes(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        guard let line = String(validating: bytes, as: UTF8.self) else {
            throw ReelProtocolError(.malformed, "line is not valid UTF-8")
        }
        guard let size = try Frame.declaredPayloadLength(of: line, maxPayloadLength: maxPayloadLength) else {
            return Frame(line: line)
        }
        pending = (line, size)
        return try nextFrame(from: &buffer)
    }
}

/// Writes `Message`s as their exact wire bytes (header line, `\n`, payload).
public struct ReelMessageEncoder: MessageToByteEncoder {
    public typealias OutboundIn = Message

    public init() {}

    public func encode(data: Message, out: inout ByteBuffer) throws {
        out.writeString(data.headerLine)
        out.writeInteger(UInt8(ascii: "\n"))
        if let payload = data.payload { out.writeBytes(payload) }
    }
}
