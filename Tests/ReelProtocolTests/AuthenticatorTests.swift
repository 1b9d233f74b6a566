import Testing
@testable import ReelProtocol
import ReelThreadTesting

@Suite("Authenticator and nonce replay cache", .blocking)
struct AuthenticatorTests {
    let auth = try! Authenticator(secret: Samples.secret)

    @Test("the right secret verifies both directions; a wrong one does not")
    func macs() throws {
        let server = Authenticator.makeNonce(), client = Authenticator.makeNonce()
        let mac = auth.clientMAC(role: .agent, name: "a", serverNonce: server, clientNonce: client)
        #expect(auth.verifyClientMAC(mac, role: .agent, name: "a", serverNonce: server, clientNonce: client))
        let other = try Authenticator(secret: Array("another secret of enough length".utf8))
        #expect(!other.verifyClientMAC(mac, role: .agent, name: "a", serverNonce: server, clientNonce: client))
        // Bound to every input: role, name, both nonces, and the direction label.
        #expect(!auth.verifyClientMAC(mac, role: .client, name: "a", serverNonce: server, clientNonce: client))
        #expect(!auth.verifyClientMAC(mac, role: .agent, name: "b", serverNonce: server, clientNonce: client))
        #expect(!auth.verifyClientMAC(mac, role: .agent, name: "a", serverNonce: client, clientNonce: server))
        #expect(!auth.verifyServerMAC(mac, role: .agent, name: "a", serverNonce: server, clientNonce: client))
    }

    @Test("MAC matches an independent HMAC-SHA256 computation (openssl)")
    func knownVector() throws {
        // HMAC-SHA256(key = "correct horse battery staple", "reel/1|client|agent|a|" + 64×"0" + "|" + 64×"1"),
        // computed with `openssl dgst -sha256 -hmac` when the test was written.
        let mac = auth.clientMAC(role: .agent, name: "a", serverNonce: String(repeating: "0", count: 64),
                                 clientNonce: String(repeating: "1", count: 64))
        #expect(mac == AuthenticatorTests.expectedVector)
    }

    static let expectedVector = "cde36b246f9d88cc25767b8fcdb68e10b24a1a39404aa76c48f3dbbd7f39f06f"

    @Test("nonces are 64 hex digits and differ")
    func nonces() {
        let nonces = (0..<100).map { _ in Authenticator.makeNonce() }
        #expect(Set(nonces).count == 100)
        #expect(nonces.allSatisfy(ProtocolLine.isHex256))
    }

    @Test("short secrets are refused")
    func shortSecret() {
        #expect(throws: ReelProtocolError.self) { try Authenticator(secret: Array("short".utf8)) }
    }

    @Test("constant-time comparison")
    func compare() {
        #expect(Authenticator.constantTimeEqual("abc", "abc"))
        #expect(!Authenticator.constantTimeEqual("abc", "abd"))
        #expect(!Authenticator.constantTimeEqual("abc", "abcd"))
    }

    @Test("a nonce is refused within the window and accepted after it")
    func replayWindow() {
        let clock = TestClock()
        let cache = NonceReplayCache(windowSeconds: 10, capacity: 100, now: { clock.now })
        #expect(cache.insert("n1"))
        #expect(!cache.insert("n1"))
        clock.now = 9
        #expect(!cache.insert("n1"))
        clock.now = 10
        #expect(cache.insert("n1"))
        #expect(cache.insert("n2"))
    }
}

/// A settable clock for the replay cache (tests only; unsynchronised on purpose, each test
/// drives it from one task).
final class TestClock: @unchecked Sendable {
    var now: Int64 = 0
}
