import NIOCore

/// Splits the byte stream into `Frame`s (proto/PROTOCOL.md §1): lines ending in `\n`, each
/// optionally followed by the exact payload its `size=` declares.
///
/// Bounded: it never buffers more than `maxLineLength + 1` bytes looking for a newline, nor a
/// payload above `maxPayloadLength`. A violation throws a `ReelProtocolError` (the
/// `ByteToMessageHandler` then stops decoding and the connection handler closes that one
/// connection). Like swift-nio-extras' `LineBasedFrameDecoder` it remembers how far it has
/// already scanned, so a line trickling in byte by byte is scanned once.
///
/// Made with `handshakeLineLength`, it starts in the **handshake** phase: lines are capped at
/// that much smaller length and no line may declare a payload, so an unauthenticated peer
/// cannot make the server buffer more than about one short line (§1, §7), until
/// `endHandshake()`. Servers use it through `ReelServerFrameDecoder`, which ends the phase
/// when `WELCOME` is written.
public struct ReelFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = Frame

    private let maxLineLength: Int
    private let maxPayloadLength: Int
    /// While the peer is not authenticated: the line cap. `nil` after `endHandshake()`, or when
    /// the decoder was made without a handshake phase (clients, tests).
    private var handshakeLineLength: Int?
    /// A header line whose payload is still arriving, and the payload's length.
    private var pending: (line: String, size: Int)?
    /// Bytes at the start of the readable region already known to hold no `\n`.
    private var scanned = 0

    /// - Parameter handshakeLineLength: when set, the decoder starts in the handshake phase
    ///   (servers: `ProtocolLimits.maxHandshakeLineLength`): lines at most this long, no payloads,
    ///   until `endHandshake()`.
    public init(maxLineLength: Int = ProtocolLimits.maxLineLength, maxPayloadLength: Int = ProtocolLimits.maxPayloadLength,
                handshakeLineLength: Int? = nil) {
        self.maxLineLength = maxLineLength
        self.maxPayloadLength = maxPayloadLength
        self.handshakeLineLength = handshakeLineLength.map { min($0, maxLineLength) }
    }

    /// Whether the decoder still applies the handshake limits.
    public var isInHandshake: Bool { handshakeLineLength != nil }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = try nextFrame(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(frame))
        return .continue
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A partial line or payload at EOF is dropped: the peer went away mid-message.
        try decode(context: context, buffer: &buffer)
    }

    /// The peer is authenticated: from the next frame on, the full line and payload limits apply.
    public mutating func endHandshake() {
        handshakeLineLength = nil
    }

    /// The decoding step without a channel, so it can be driven directly.
    mutating func nextFrame(from buffer: inout ByteBuffer) throws(ReelProtocolError) -> Frame? {
        if let (line, size) = pending {
            guard let payload = buffer.readBytes(length: size) else { return nil }
            pending = nil
            return Frame(line: line, payload: payload)
        }
        let lineLimit = handshakeLineLength ?? maxLineLength
        let view = buffer.readableBytesView
        let limit = min(view.count, lineLimit + 1)
        var newline: Int?
        if scanned < limit {
            let start = view.startIndex
            if let index = view[(start + scanned)..<(start + limit)].firstIndex(of: UInt8(ascii: "\n")) {
                newline = index - start
            }
        }
        guard let length = newline else {
            scanned = limit
            if view.count > lineLimit {
                throw ReelProtocolError(.lineTooLong, isInHandshake ? "line longer than \(lineLimit) bytes before authentication"
                                                                    : "line longer than \(lineLimit) bytes")
            }
            return nil
        }
        scanned = 0
        let bytes = buffer.readBytes(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        guard let line = String(validating: bytes, as: UTF8.self) else {
            throw ReelProtocolError(.malformed, "line is not valid UTF-8")
        }
        if isInHandshake {
            // Refused on the header alone: not one payload byte is read or buffered.
            if Frame.sizeArgument(of: line) != nil {
                throw ReelProtocolError(.notAuthenticated, "no payload (size=) is accepted before authentication")
            }
            return Frame(line: line)
        }
        guard let size = try Frame.declaredPayloadLength(of: line, maxPayloadLength: maxPayloadLength) else {
            return Frame(line: line)
        }
        pending = (line, size)
        return try nextFrame(from: &buffer)
    }
}

/// The server's framer: a `ReelFrameDecoder` in its handshake phase that watches the
/// connection's outgoing messages and ends that phase when `WELCOME` is written — the one
/// moment the peer is authenticated (proto/PROTOCOL.md §1, §5).
///
/// It must sit *after* the `ReelMessageEncoder` in the pipeline (closer to the connection
/// handler), so the writes it observes are `Message`s, not bytes. `ByteToMessageHandler`
/// delivers a write made while a frame is being handled (the connection handler answers `AUTH`
/// with `WELCOME` inside `channelRead`) before it decodes the next frame, so bytes after `AUTH`
/// are read with the full limits only once `WELCOME` has gone out, never before.
public struct ReelServerFrameDecoder: WriteObservingByteToMessageDecoder {
    public typealias InboundOut = Frame
    public typealias OutboundIn = Message

    private var decoder: ReelFrameDecoder

    public init(maxLineLength: Int = ProtocolLimits.maxLineLength, maxPayloadLength: Int = ProtocolLimits.maxPayloadLength,
                handshakeLineLength: Int = ProtocolLimits.maxHandshakeLineLength) {
        decoder = ReelFrameDecoder(maxLineLength: maxLineLength, maxPayloadLength: maxPayloadLength, handshakeLineLength: handshakeLineLength)
    }

    /// Whether the handshake limits still apply.
    public var isInHandshake: Bool { decoder.isInHandshake }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        try decoder.decode(context: context, buffer: &buffer)
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decoder.decodeLast(context: context, buffer: &buffer, seenEOF: seenEOF)
    }

    public mutating func write(data: Message) {
        if case .welcome = data { decoder.endHandshake() }
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
