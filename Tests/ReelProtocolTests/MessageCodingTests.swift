import Testing
@testable import ReelProtocol

@Suite("Message encoding and parsing", .blocking)
struct MessageCodingTests {
    @Test("every message round-trips through its wire bytes", arguments: Samples.messages)
    func roundTrip(_ message: Message) throws {
        let bytes = message.encode()
        var decoder = ReelFrameDecoder()
        var buffer = ByteBufferAllocator().buffer(bytes: bytes)
        let frame = try #require(try decoder.nextFrame(from: &buffer))
        #expect(buffer.readableBytes == 0)
        #expect(!frame.line.contains("\n"))
        #expect(try Message.parse(line: frame.line, payload: frame.payload) == message)
        #expect(frame.payload == message.payload)
    }

    @Test("encoders escape exactly the bytes outside the unreserved set")
    func escaping() {
        let line = Message.fail(task: 1, epoch: 1, reason: "a b=c%d,e\u{7F}é").headerLine
        #expect(line == "FAIL task=1 epoch=1 reason=a%20b%3Dc%25d,e%7F%C3%A9")
    }

    @Test("an agent's price goes as a plain decimal, and is absent when it names none")
    func costOnTheWire() throws {
        let priced = Message.capabilities(AgentCapabilities(threads: 4, encoders: ["libx264"], cacheBytes: 0, host: "h", costPerHour: 0.85))
        #expect(priced.headerLine == "CAPS threads=4 encoders=libx264 cache=0 host=h cost=0.85")
        let whole = Message.capabilities(AgentCapabilities(threads: 1, encoders: [], cacheBytes: 0, host: "h", costPerHour: 12))
        #expect(whole.headerLine.hasSuffix(" cost=12"))
        let unpriced = Message.capabilities(AgentCapabilities(threads: 1, encoders: [], cacheBytes: 0, host: "h"))
        #expect(!unpriced.headerLine.contains("cost="))
        guard case .capabilities(let caps) = try Message.parse(line: "CAPS threads=2 encoders= cache=0 host=h cost=1.250000") else {
            Issue.record("not CAPS"); return
        }
        #expect(caps.costPerHour == 1.25)
    }

    @Test("every verb is covered by the samples")
    func coverage() {
        let verbs = Set(Samples.messages.map(\.verb))
        #expect(verbs.count == 61)
    }

    @Test("malformed lines are refused with a typed error", arguments: [
        "", " PING", "PING ", "ping", "PING extra", "PING x=1", "NOPE", "HELLO reel/1 role=agent name=a",
        "HELLO reel/1 role=root name=a cnonce=\(Samples.hashA)",
        "HELLO role=agent name=a cnonce=\(Samples.hashA)",
        "HELLO reel/1 role=agent name= cnonce=\(Samples.hashA)",
        "HELLO reel/1 role=agent name=a cnonce=\(Samples.hashA.uppercased())",
        "HELLO reel/1 role=agent name=a cnonce=abc",
        "CLAIM wait=61", "CLAIM wait=-1", "CLAIM wait=07", "CLAIM wait=", "CLAIM wait=1 wait=2", "CLAIM  wait=1",
        "CLAIM Wait=1", "CLAIM wait=1x", "HEARTBEAT task=0 epoch=1", "HEARTBEAT task=1",
        "FAIL task=1 epoch=1 reason=a b", "FAIL task=1 epoch=1 reason=%zz", "FAIL task=1 epoch=1 reason=%C3",
        "FAIL task=1 epoch=1 reason=tab\there", "STATUS job=1 job=2", "STATUS wait=1", "STATUS job=1 wait=61", "STATUS job=1 wait=-1", "CLAIM wait=99999999999999999999",
        "ERR", "ERR BadCode text", "ERR code ", "CAPS threads=0 encoders= cache=0 host=h",
        "CAPS threads=1 encoders= cache=0 host=h cost=", "CAPS threads=1 encoders= cache=0 host=h cost=-1",
        "CAPS threads=1 encoders= cache=0 host=h cost=.5", "CAPS threads=1 encoders= cache=0 host=h cost=1.",
        "CAPS threads=1 encoders= cache=0 host=h cost=1e3", "CAPS threads=1 encoders= cache=0 host=h cost=0.1234567",
        "CAPS threads=1 encoders= cache=0 host=h cost=1234567890", "CAPS threads=1 encoders= cache=0 host=h cost=1.5.0",
        "JOB job=1 missing=abc", "FETCH sha256=\(Samples.hashA) offset=0 length=0",
        "PAUSE", "PAUSE job=0", "RESUME job=x", "PRIORITY job=1", "PRIORITY job=1 priority=1001", "PRIORITY job=1 priority=-1001",
        "PRIORITY job=1 priority=-0", "PRIORITY job=1 priority=-01", "PRIORITY job=1 priority=--1", "PRIORITY job=1 priority=+1",
        "EVENTS job=1", "EVENTS job=1 after=-1", "EVENTS after=0",
        "STORED task=1 sha256=\(Samples.hashA) have=1 total=2 expires=3", "STORED task=0 have=1 total=2 expires=3",
        "STORED task=1 have=1 total=2", "STORED task=1 have=1 expires=3",
        "SOURCEURL", "SOURCEURL sha256=abc", "RESULTURL task=1 epoch=1 sha256=\(Samples.hashA)",
        "RESULTDONE task=1 epoch=0 sha256=\(Samples.hashA) total=1", "ASSETURL sha256=\(Samples.hashA)",
        "ASSETDONE sha256=\(Samples.hashA) total=-1", "OUTPUTURL job=0",
        "URL method=DELETE url=http://h/b/k headers= expires=0 total=0", "URL method=GET url=ftp://h/b/k headers= expires=0 total=0",
        "URL method=GET url= headers= expires=0 total=0", "URL method=GET url=http://h/b/k headers=nocolon expires=0 total=0",
        "URL method=GET url=http://h/b/k headers=a:1,A:2 expires=0 total=0", "URL method=GET url=http://h/b/k expires=0 total=0",
    ])
    func malformed(_ line: String) {
        #expect(throws: ReelProtocolError.self) { try Message.parse(line: line) }
        do {
            _ = try Message.parse(line: line)
        } catch {
            #expect(error.code == .malformed)
        }
    }

    @Test("a presigned URL crosses the wire whole but never shows its signature when printed")
    func presignedURLRedaction() throws {
        let direct = DirectURL(method: "GET", url: Samples.presignedGET, headers: [:], expiresAtMillis: 1, total: 2)
        let line = Message.url(direct).headerLine
        #expect(line.hasPrefix("URL method=GET url=http://127.0.0.1:8333/reel/farm/assets/sha256/ab/\(Samples.hashA)%3FX-Amz-Algorithm%3D"))
        #expect(try Message.parse(line: line) == .url(direct))
        for printed in ["\(direct)", String(reflecting: direct), "\(Message.url(direct))"] {
            #expect(!printed.contains(Samples.hashB), "the signature leaked: \(printed)")
            #expect(!printed.contains("X-Amz-Credential"))
        }
        #expect(ReelProtocolError(.noDirect, "local directory").meansNoDirectTransfers)
        #expect(ReelProtocolError(.malformed, "unknown verb 'SOURCEURL'").meansNoDirectTransfers)
        #expect(!ReelProtocolError(.malformed, "SOURCEURL: missing sha256=").meansNoDirectTransfers)
    }

    @Test("payload presence and length must match size=")
    func payloadMismatch() throws {
        #expect(throws: ReelProtocolError.self) { try Message.parse(line: "SUBMIT size=3", payload: [1, 2]) }
        #expect(throws: ReelProtocolError.self) { try Message.parse(line: "SUBMIT size=3") }
        #expect(throws: ReelProtocolError.self) { try Message.parse(line: "PING", payload: []) }
        #expect(throws: ReelProtocolError.self) {
            try Message.parse(line: "DATA offset=5 total=6 size=2", payload: [1, 2])
        }
        // Hostile offsets must be refused, not overflow.
        #expect(throws: ReelProtocolError.self) {
            try Message.parse(line: "DATA offset=9223372036854775807 total=9223372036854775807 size=1", payload: [1])
        }
        #expect(throws: ReelProtocolError.self) {
            try Message.parse(line: "PUT sha256=\(Samples.hashA) offset=9223372036854775807 total=0 size=1", payload: [1])
        }
        #expect(try Message.parse(line: "SUBMIT size=3", payload: [1, 2, 3]) == .submit(document: [1, 2, 3]))
    }

    @Test("a result part must fit its total, carry its bytes and name a hash")
    func resultPartBounds() throws {
        let hash = Samples.hashA
        #expect(throws: ReelProtocolError.self) {
            try Message.parse(line: "RESULTPART task=1 epoch=1 sha256=\(hash) offset=4 total=5 size=2", payload: [1, 2])
        }
        #expect(throws: ReelProtocolError.self) {
            try Message.parse(line: "RESULTPART task=1 epoch=1 sha256=\(hash) offset=9223372036854775807 total=9223372036854775807 size=1", payload: [1])
        }
        #expect(throws: ReelProtocolError.self) { try Message.parse(line: "RESULTPART task=1 epoch=1 sha256=\(hash) offset=0 total=2 size=2") }
        #expect(throws: ReelProtocolError.self) {
            try Message.parse(line: "RESULTPART task=1 epoch=1 sha256=abc offset=0 total=2 size=2", payload: [1, 2])
        }
        #expect(throws: ReelProtocolError.self) {
            try Message.parse(line: "RESULTPART task=1 epoch=0 sha256=\(hash) offset=0 total=2 size=2", payload: [1, 2])
        }
        let part = try Message.parse(line: "RESULTPART total=70 size=2 offset=68 sha256=\(hash) epoch=3 task=9", payload: [1, 2])
        #expect(part == .resultPart(task: 9, epoch: 3, sha256: hash, offset: 68, total: 70, bytes: [1, 2]))
        #expect(part.requestRoles == [.agent])
        #expect(Message.resultStored(task: 9, have: 70, total: 70, expiresAtMillis: 1).requestRoles == nil, "a reply")
    }

    @Test("bad_range of a ranged upload tells the bytes held, and only it")
    func heldBytes() throws {
        let error = ReelProtocolError.outOfOrder(have: 16_777_216, "send offset 16777216")
        #expect(error.heldBytes == 16_777_216)
        guard case .error(let code, let text) = try Message.parse(line: error.reply.headerLine) else {
            Issue.record("not an ERR"); return
        }
        #expect(ReelProtocolError(code, text).heldBytes == 16_777_216, "survives the wire")
        #expect(ReelProtocolError(.badRange, "offset 9 is past the end").heldBytes == nil)
        #expect(ReelProtocolError(.badRange, "have=01 x").heldBytes == nil)
        #expect(ReelProtocolError(.internal, "have=5 x").heldBytes == nil)
        #expect(ReelProtocolError.outOfOrder(have: 0, "").heldBytes == 0)
    }

    @Test("keys are accepted in any order")
    func keyOrder() throws {
        #expect(try Message.parse(line: "HEARTBEAT epoch=2 task=9") == .heartbeat(task: 9, epoch: 2))
    }
}

import NIOCore
import ReelThreadTesting

@Suite("Parser robustness", .blocking)
struct ParserFuzzTests {
    @Test("mutated sample lines never trap, and whatever parses re-encodes to a message that parses back equal")
    func mutations() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("AZaz09 =%,:-_./\u{7F}\t".utf8) + [0xC3, 0xA9, 0xFF]
        var parsed = 0
        for round in 0..<5000 {
            let message = Samples.messages[round % Samples.messages.count]
            var bytes = Array(message.headerLine.utf8)
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let index = Int.random(in: 0...bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0 where index < bytes.count: bytes.remove(at: index)
                case 1 where index < bytes.count: bytes[index] = alphabet.randomElement(using: &generator)!
                default: bytes.insert(alphabet.randomElement(using: &generator)!, at: index)
                }
            }
            guard let line = String(validating: bytes, as: UTF8.self) else { continue }
            guard let result = try? Message.parse(line: line, payload: message.payload) else { continue }
            parsed += 1
            let again = try Message.parse(line: result.headerLine, payload: result.payload)
            #expect(again == result, "\(line)")
        }
        #expect(parsed > 0)
    }
}
