import Testing
@testable import ReelProtocol
import ReelThreadTesting

@Suite("Connection state machines", .blocking)
struct StateMachineTests {
    static let auth = try! Authenticator(secret: Samples.secret)
    static let serverNonce = String(repeating: "5", count: 64)

    static func server(cache: NonceReplayCache = NonceReplayCache()) -> ServerConnectionStateMachine {
        ServerConnectionStateMachine(authenticator: auth, replayCache: cache, serverNonce: serverNonce, connectionID: 7)
    }

    /// Drives a server through the handshake as `role`.
    static func authenticated(_ role: PeerRole) -> ServerConnectionStateMachine {
        var machine = server()
        let client = Authenticator.makeNonce()
        _ = machine.received(.hello(version: "reel/1", role: role, name: "n", clientNonce: client))
        let mac = auth.clientMAC(role: role, name: "n", serverNonce: serverNonce, clientNonce: client)
        _ = machine.received(.auth(mac: mac))
        return machine
    }

    @Test("client and server machines complete a handshake against each other")
    func handshake() throws {
        var server = Self.server()
        var client = ClientConnectionStateMachine(role: .agent, name: "render-01", authenticator: Self.auth,
                                                  clientNonce: Authenticator.makeNonce())
        #expect(client.sendRequest(.ping) == .none) // queued until ready
        guard case let .send(hello) = client.connected() else { Issue.record("no HELLO"); return }
        guard case let .send(challenge) = server.received(hello) else { Issue.record("no CHALLENGE"); return }
        guard case let .send(authLine) = client.received(challenge) else { Issue.record("no AUTH"); return }
        guard case let .authenticated(peer, welcome) = server.received(authLine) else { Issue.record("no WELCOME"); return }
        #expect(peer == Peer(role: .agent, name: "render-01", connectionID: 7))
        #expect(client.received(welcome) == .handshakeSucceeded(next: .ping))
        #expect(server.received(.ping) == .send(.pong))
        #expect(client.received(.pong) == .deliver(.pong, next: nil))
        #expect(client.state == .ready)
    }

    @Test("a wrong secret is refused and closes")
    func wrongSecret() throws {
        var server = Self.server()
        let nonce = Authenticator.makeNonce()
        _ = server.received(.hello(version: "reel/1", role: .client, name: "m", clientNonce: nonce))
        let wrong = try Authenticator(secret: Array("not the shared secret at all".utf8))
        let mac = wrong.clientMAC(role: .client, name: "m", serverNonce: Self.serverNonce, clientNonce: nonce)
        #expect(server.received(.auth(mac: mac)) == .refuse(
            .error(code: .authFailed, message: "authentication failed"),
            HandshakeFailure(role: .client, name: "m", error: ReelProtocolError(.authFailed, "authentication failed"))))
        #expect(server.state == .closed)
        #expect(server.received(.ping) == .none)
    }

    @Test("a client refuses a server that does not know the secret")
    func serverImpostor() throws {
        var client = ClientConnectionStateMachine(role: .client, name: "c", authenticator: Self.auth, clientNonce: Samples.hashA)
        _ = client.connected()
        _ = client.received(.challenge(nonce: Samples.hashB))
        let impostor = try Authenticator(secret: Array("impostor secret 1234567".utf8))
        let mac = impostor.serverMAC(role: .client, name: "c", serverNonce: Samples.hashB, clientNonce: Samples.hashA)
        guard case let .handshakeFailed(error) = client.received(.welcome(mac: mac)) else { Issue.record("accepted"); return }
        #expect(error.code == .authFailed)
        // Replaying the client's own MAC as the server's does not work either (distinct labels).
        var again = ClientConnectionStateMachine(role: .client, name: "c", authenticator: Self.auth, clientNonce: Samples.hashA)
        _ = again.connected()
        guard case let .send(.auth(clientMac)) = again.received(.challenge(nonce: Samples.hashB)) else { Issue.record("no AUTH after CHALLENGE"); return }
        guard case .handshakeFailed = again.received(.welcome(mac: clientMac)) else { Issue.record("reflected MAC accepted"); return }
    }

    @Test("a replayed client nonce is refused")
    func replay() {
        let cache = NonceReplayCache()
        var first = Self.server(cache: cache), second = Self.server(cache: cache)
        let hello = Message.hello(version: "reel/1", role: .agent, name: "a", clientNonce: Samples.hashA)
        #expect(first.received(hello) == .send(.challenge(nonce: Self.serverNonce)))
        guard case let .refuse(.error(code, _), failure) = second.received(hello) else { Issue.record("replay accepted"); return }
        #expect(code == .replayedNonce)
        #expect(failure.role == .agent && failure.name == "a" && failure.error.code == .replayedNonce)
    }

    @Test("anything but HELLO first, or an unknown version, closes", arguments: [
        Message.ping, .claim(waitSeconds: 1), .auth(mac: Samples.hashA),
        .hello(version: "reel/2", role: .agent, name: "a", clientNonce: Samples.hashB),
    ])
    func beforeHello(_ message: Message) {
        var machine = Self.server()
        guard case let .refuse(.error(code, _), failure) = machine.received(message) else { Issue.record("accepted"); return }
        #expect(code == (message.verb == "HELLO" ? .unsupportedVersion : .notAuthenticated))
        #expect(failure.error.code == code)
        // A refused HELLO still says who the peer claimed to be, for the log.
        #expect(failure.name == (message.verb == "HELLO" ? "a" : nil))
        #expect(machine.state == .closed)
    }

    @Test("role rules: each request verb is dispatched only for its role", arguments: Samples.messages)
    func roles(_ message: Message) {
        for role in PeerRole.allCases {
            var machine = Self.authenticated(role)
            _ = machine.received(.capabilities(AgentCapabilities(threads: 1, encoders: [], cacheBytes: 0, host: "h")))
            _ = machine.replyReady(.ok)
            let action = machine.received(message)
            switch (message, message.requestRoles) {
            case (.ping, _): #expect(action == .send(.pong))
            case (.quit, _): #expect(action == .sendAndClose(.bye))
            case (_, nil):
                guard case .send(.error(.malformed, _)) = action else { Issue.record("\(action)"); continue }
            case let (_, roles?) where roles.contains(role):
                #expect(action == .dispatch(message, Peer(role: role, name: "n", connectionID: 7)))
            default:
                guard case .send(.error(.forbidden, _)) = action else { Issue.record("\(action)"); continue }
            }
        }
    }

    @Test("a second request while one is processing closes with busy; a reply reopens")
    func noPipelining() {
        var machine = Self.authenticated(.client)
        guard case .dispatch = machine.received(.status(job: nil)) else { Issue.record("not dispatched"); return }
        #expect(machine.replyReady(.report(json: [])) == .send(.report(json: [])))
        guard case .dispatch = machine.received(.agents) else { Issue.record("not dispatched"); return }
        guard case .sendAndClose(.error(.busy, _)) = machine.received(.agents) else { Issue.record("pipelining accepted"); return }
        #expect(machine.replyReady(.ok) == .none)
    }

    @Test("CLAIM before CAPS is refused without closing")
    func claimNeedsCapabilities() {
        var machine = Self.authenticated(.agent)
        guard case .send(.error(.noCapabilities, _)) = machine.received(.claim(waitSeconds: 5)) else { Issue.record("accepted"); return }
        guard case .dispatch = machine.received(.capabilities(.init(threads: 2, encoders: ["libx264"], cacheBytes: 1, host: "h"))) else { Issue.record("CAPS not dispatched"); return }
        _ = machine.replyReady(.ok)
        guard case .dispatch = machine.received(.claim(waitSeconds: 5)) else { Issue.record("not dispatched"); return }
    }

    @Test("malformed lines: error and stay open when ready, close before")
    func malformed() {
        let error = ReelProtocolError(.malformed, "x")
        var ready = Self.authenticated(.agent)
        #expect(ready.receivedMalformed(error) == .send(error.reply))
        var fresh = Self.server()
        #expect(fresh.receivedMalformed(error) == .refuse(error.reply, HandshakeFailure(role: nil, name: nil, error: error)))
        #expect(ready.framingFailed(ReelProtocolError(.lineTooLong, "y")) == .sendAndClose(.error(code: .lineTooLong, message: "y")))
    }

    @Test("timeouts")
    func timeouts() {
        var fresh = Self.server()
        guard case let .refuse(.error(.timeout, _), failure) = fresh.handshakeTimedOut() else { Issue.record("no timeout"); return }
        #expect(failure.error.code == .timeout)
        var halfway = Self.server()
        _ = halfway.received(.hello(version: "reel/1", role: .agent, name: "slow", clientNonce: Authenticator.makeNonce()))
        guard case let .refuse(_, late) = halfway.handshakeTimedOut() else { Issue.record("no timeout"); return }
        #expect(late == HandshakeFailure(role: .agent, name: "slow", error: ReelProtocolError(.timeout, "handshake not completed in time")))
        var ready = Self.authenticated(.client)
        #expect(ready.handshakeTimedOut() == .none)
        #expect(ready.idleTimedOut() == .close)
    }

    @Test("over the unauthenticated-connection cap: refused with too_many_connections, reported")
    func tooManyConnections() {
        var fresh = Self.server()
        guard case let .refuse(.error(.tooManyConnections, _), failure) = fresh.tooManyConnections() else { Issue.record("not refused"); return }
        #expect(failure.role == nil && failure.error.code == .tooManyConnections)
        #expect(fresh.state == .closed)
        #expect(fresh.received(.ping) == .none)
    }

    @Test("shutting down before WELCOME closes but is not a failed login")
    func shutdownBeforeWelcome() {
        var fresh = Self.server()
        guard case .sendAndClose(.error(.shuttingDown, _)) = fresh.shuttingDown() else { Issue.record("not closed"); return }
    }

    @Test("a handler error whose code closes the connection closes it")
    func closingReply() {
        var machine = Self.authenticated(.agent)
        _ = machine.received(.fetch(sha256: Samples.hashA, offset: 0, length: 1))
        let reply = Message.error(code: .shuttingDown, message: "bye")
        #expect(machine.replyReady(reply) == .sendAndClose(reply))
    }

    @Test("the client closes on an unsolicited line and delivers replies in order")
    func clientOrdering() {
        var client = ClientConnectionStateMachine(role: .client, name: "c", authenticator: Self.auth, clientNonce: Samples.hashA)
        _ = client.connected()
        guard case .send(.auth) = client.received(.challenge(nonce: Samples.hashB)) else { Issue.record("no AUTH after CHALLENGE"); return }
        let welcome = Self.auth.serverMAC(role: .client, name: "c", serverNonce: Samples.hashB, clientNonce: Samples.hashA)
        #expect(client.received(.welcome(mac: welcome)) == .handshakeSucceeded(next: nil))
        #expect(client.sendRequest(.status(job: 1)) == .send(.status(job: 1)))
        #expect(client.sendRequest(.agents) == .none)
        #expect(client.received(.report(json: [1])) == .deliver(.report(json: [1]), next: .agents))
        #expect(client.received(.report(json: [2])) == .deliver(.report(json: [2]), next: nil))
        guard case .closeWithError = client.received(.ok) else { Issue.record("unsolicited accepted"); return }
    }
}

@Suite("Server state machine draining", .blocking)
struct DrainingTests {
    @Test("idle connections close with shutting_down; a busy one after its reply")
    func draining() {
        var idle = StateMachineTests.authenticated(.agent)
        guard case .sendAndClose(.error(.shuttingDown, _)) = idle.shuttingDown() else { Issue.record("idle not closed"); return }
        var busy = StateMachineTests.authenticated(.client)
        _ = busy.received(.agents)
        #expect(busy.shuttingDown() == .none)
        #expect(busy.replyReady(.report(json: [])) == .sendAndClose(.report(json: [])))
        #expect(busy.state == .closed)
    }
}
