import Foundation
import Testing
@testable import ReelProtocol
import ReelThreadTesting

/// The worked examples of proto/PROTOCOL.md are golden tests: every line of every
/// ```` ```reel-example ```` block must parse, re-encode to exactly itself, and come from the
/// side that may send it.
@Suite("proto/PROTOCOL.md examples", .blocking)
struct SpecExampleTests {
    struct Example: CustomTestStringConvertible, Sendable {
        var name: String
        var lines: [String]
        var testDescription: String { name }
    }

    static let specURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("proto/PROTOCOL.md")

    static func examples() throws -> [Example] {
        let text = try String(contentsOf: specURL, encoding: .utf8)
        var examples: [Example] = []
        var current: Example?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if var example = current {
                if line == "```" {
                    examples.append(example)
                    current = nil
                } else {
                    example.lines.append(line)
                    current = example
                }
            } else if line.hasPrefix("```reel-example ") {
                current = Example(name: String(line.dropFirst("```reel-example ".count)), lines: [])
            }
        }
        return examples
    }

    @Test("the spec has the expected examples")
    func inventory() throws {
        let names = try Self.examples().map(\.name)
        #expect(names == ["direct-transfers", "upload-in-parts", "agent-finalise", "agent-session", "stale-lease", "ranged-result", "ranged-result-stale", "client-submit", "auth-vector", "refused"])
    }

    @Test("every example line parses, round-trips and is sent by the right side",
          arguments: try SpecExampleTests.examples())
    func golden(_ example: Example) throws {
        var index = 0
        var parsed = 0
        while index < example.lines.count {
            let line = example.lines[index]
            index += 1
            let fromClient = line.hasPrefix("C: ")
            #expect(fromClient || line.hasPrefix("S: "), "\(example.name): line without C:/S: — \(line)")
            let wire = String(line.dropFirst(3))
            var payload: [UInt8]?
            if let size = try Frame.declaredPayloadLength(of: wire, maxPayloadLength: ProtocolLimits.maxPayloadLength) {
                let description = try #require(index < example.lines.count ? example.lines[index] : nil)
                index += 1
                payload = try Self.payload(described: description, size: size)
            }
            let message = try Message.parse(line: wire, payload: payload)
            #expect(message.headerLine == wire, "\(example.name): not canonical — \(wire)")
            let isRequest = message.requestRoles != nil || ["HELLO", "AUTH"].contains(message.verb)
            #expect(isRequest == fromClient, "\(example.name): \(message.verb) sent by the wrong side")
            parsed += 1
        }
        #expect(parsed >= 4)
    }

    /// `[N bytes: text]` — when `text` is exactly N bytes it is the payload, else it only
    /// describes one (then N zero bytes stand in).
    static func payload(described line: String, size: Int) throws -> [UInt8] {
        let prefix = "[\(size) bytes: "
        #expect(line.hasPrefix(prefix) && line.hasSuffix("]"), "payload line \(line) does not declare \(size) bytes")
        let text = Array(line.dropFirst(prefix.count).dropLast().utf8)
        return text.count == size ? text : [UInt8](repeating: 0, count: size)
    }

    @Test("the auth-vector example's MACs are what the client and server state machines compute")
    func authVector() throws {
        let example = try #require(try Self.examples().first { $0.name == "auth-vector" })
        let messages = try example.lines.map { try Message.parse(line: String($0.dropFirst(3))) }
        let auth = try Authenticator(secret: Array("correct horse battery staple".utf8))
        guard case let .hello(_, role, name, clientNonce) = messages[0], case let .challenge(serverNonce) = messages[1] else {
            Issue.record("unexpected example shape"); return
        }
        var server = ServerConnectionStateMachine(authenticator: auth, replayCache: NonceReplayCache(),
                                                  serverNonce: serverNonce, connectionID: 1)
        var client = ClientConnectionStateMachine(role: role, name: name, authenticator: auth, clientNonce: clientNonce)
        #expect(client.connected() == .send(messages[0]))
        #expect(server.received(messages[0]) == .send(messages[1]))
        #expect(client.received(messages[1]) == .send(messages[2]))
        #expect(server.received(messages[2]) == .authenticated(Peer(role: role, name: name, connectionID: 1), welcome: messages[3]))
        #expect(client.received(messages[3]) == .handshakeSucceeded(next: nil))
    }
}
