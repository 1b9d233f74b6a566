import NIOCore
import NIOEmbedded
import Testing
@testable import ReelProtocol
import ReelThreadTesting

/// Byte-for-byte tests of the framer and encoder through `EmbeddedChannel`, in the manner of
/// swift-nio-extras' `LineBasedFrameDecoderTest`.
@Suite("Frame decoder and message encoder", .blocking)
struct FrameDecoderTests {
    static func channel(maxLine: Int = ProtocolLimits.maxLineLength, maxPayload: Int = ProtocolLimits.maxPayloadLength) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(ReelFrameDecoder(maxLineLength: maxLine, maxPayloadLength: maxPayload)))
        return channel
    }

    static let stream: [Message] = [
        .ping,
        .result(task: 3, epoch: 1, sha256: Samples.hashA, data: Array("line\nwith size=9\n".utf8)),
        .data(offset: 0, total: 0, bytes: []),
        .error(code: .conflict, message: "size=99 in text is not a payload"),
        .submit(document: [0, 255, 10, 13]),
        .ok,
    ]

    @Test("a stream split at every byte yields the same frames")
    func splitAtEveryByte() throws {
        let bytes = Self.stream.flatMap { $0.encode() }
        for split in 0...bytes.count {
            let channel = try Self.channel()
            try channel.writeInbound(ByteBuffer(bytes: bytes[..<split]))
            try channel.writeInbound(ByteBuffer(bytes: bytes[split...]))
            var messages: [Message] = []
            while let frame = try channel.readInbound(as: Frame.self) {
                messages.append(try Message.parse(line: frame.line, payload: frame.payload))
            }
            #expect(messages == Self.stream, "split at \(split)")
            #expect(try channel.finish().isClean)
        }
    }

    @Test("one byte at a time")
    func byteByByte() throws {
        let bytes = Self.stream.flatMap { $0.encode() }
        let channel = try Self.channel()
        var frames = 0
        for byte in bytes {
            try channel.writeInbound(ByteBuffer(bytes: [byte]))
            while try channel.readInbound(as: Frame.self) != nil { frames += 1 }
        }
        #expect(frames == Self.stream.count)
    }

    @Test("a payload is delivered only when complete")
    func payloadBoundary() throws {
        let channel = try Self.channel()
        try channel.writeInbound(ByteBuffer(string: "SUBMIT size=4\nab"))
        #expect(try channel.readInbound(as: Frame.self) == nil)
        try channel.writeInbound(ByteBuffer(string: "cdPING\n"))
        #expect(try channel.readInbound(as: Frame.self) == Frame(line: "SUBMIT size=4", payload: Array("abcd".utf8)))
        #expect(try channel.readInbound(as: Frame.self) == Frame(line: "PING"))
    }

    @Test("a line of exactly the maximum length passes; one byte more is an error")
    func lineLimit() throws {
        let ok = try Self.channel(maxLine: 32)
        try ok.writeInbound(ByteBuffer(string: String(repeating: "A", count: 32) + "\n"))
        #expect(try ok.readInbound(as: Frame.self)?.line.count == 32)

        let tooLong = try Self.channel(maxLine: 32)
        #expect {
            try tooLong.writeInbound(ByteBuffer(string: String(repeating: "A", count: 33)))
        } throws: { ($0 as? ReelProtocolError)?.code == .lineTooLong }
    }

    @Test("garbage without newlines is bounded: the decoder fails instead of buffering")
    func garbage() throws {
        let channel = try Self.channel(maxLine: 1024)
        var generator = SystemRandomNumberGenerator()
        let junk = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }.filter { $0 != 10 }
        #expect(throws: ReelProtocolError.self) { try channel.writeInbound(ByteBuffer(bytes: junk)) }
    }

    @Test("invalid UTF-8, bad and oversized size= are framing errors", arguments: [
        ([0xFF, 0xFE, 0x0A], ReelProtocolError.Code.malformed),
        (Array("SUBMIT size=x\n".utf8), .malformed),
        (Array("SUBMIT size=01\n".utf8), .malformed),
        (Array("SUBMIT size=1025\n".utf8), .payloadTooLarge),
    ])
    func framingErrors(_ bytes: [UInt8], _ code: ReelProtocolError.Code) throws {
        let channel = try Self.channel(maxPayload: 1024)
        #expect {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
        } throws: { ($0 as? ReelProtocolError)?.code == code }
    }

    @Test("the encoder writes exactly Message.encode()", arguments: Samples.messages)
    func encoder(_ message: Message) throws {
        let channel = EmbeddedChannel(handler: MessageToByteHandler(ReelMessageEncoder()))
        try channel.writeOutbound(message)
        var written = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(written.readBytes(length: written.readableBytes) == message.encode())
        _ = try channel.finish()
    }
}
