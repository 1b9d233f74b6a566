/// The connecting side of one connection (proto/PROTOCOL.md §5, client side) as a pure value:
/// it performs the handshake, verifies the server's MAC (mutual authentication), and sends
/// queued requests strictly one at a time.
///
/// Invariants: requests go out in the order `sendRequest` was called, each only after the
/// previous one's reply; any unexpected line closes the connection.
public struct ClientConnectionStateMachine: Sendable {
    public enum State: Hashable, Sendable {
        case idle
        case awaitingChallenge
        case awaitingWelcome(serverNonce: String)
        case ready
        case closed
    }

    public enum Action: Hashable, Sendable {
        /// Write this message.
        case send(Message)
        /// The handshake succeeded; then write `next` if a request was queued meanwhile.
        case handshakeSucceeded(next: Message?)
        /// The handshake failed: close and fail the connection attempt (and any queued request).
        case handshakeFailed(ReelProtocolError)
        /// The reply to the oldest outstanding request; then write `next` if one is queued.
        case deliver(Message, next: Message?)
        /// A protocol violation by the server: close and fail every queued request.
        case closeWithError(ReelProtocolError)
        case none
    }

    public private(set) var state: State = .idle
    private var queue: [Message] = []
    private var outstanding = false
    private let role: PeerRole
    private let name: String
    private let clientNonce: String
    private let authenticator: Authenticator

    public init(role: PeerRole, name: String, authenticator: Authenticator, clientNonce: String) {
        self.role = role
        self.name = name
        self.authenticator = authenticator
        self.clientNonce = clientNonce
    }

    /// The transport is up: say `HELLO`.
    public mutating func connected() -> Action {
        guard state == .idle else { return .none }
        state = .awaitingChallenge
        return .send(.hello(version: ProtocolLimits.version, role: role, name: name, clientNonce: clientNonce))
    }

    /// The caller wants `request` sent; it is queued until the connection is ready and idle.
    public mutating func sendRequest(_ request: Message) -> Action {
        switch state {
        case .closed:
            return .closeWithError(ReelProtocolError(.internal, "connection is closed"))
        case .ready where !outstanding:
            outstanding = true
            return .send(request)
        default:
            queue.append(request)
            return .none
        }
    }

    public mutating func received(_ message: Message) -> Action {
        switch state {
        case .idle, .closed:
            return .none
        case .awaitingChallenge:
            guard case let .challenge(serverNonce) = message else { return handshakeFailure(message) }
            state = .awaitingWelcome(serverNonce: serverNonce)
            return .send(.auth(mac: authenticator.clientMAC(role: role, name: name, serverNonce: serverNonce, clientNonce: clientNonce)))
        case let .awaitingWelcome(serverNonce):
            guard case let .welcome(mac) = message else { return handshakeFailure(message) }
            guard authenticator.verifyServerMAC(mac, role: role, name: name, serverNonce: serverNonce, clientNonce: clientNonce) else {
                state = .closed
                return .handshakeFailed(ReelProtocolError(.authFailed, "the server failed to prove it knows the secret"))
            }
            state = .ready
            return .handshakeSucceeded(next: nextQueued())
        case .ready:
            guard outstanding else {
                state = .closed
                return .closeWithError(ReelProtocolError(.malformed, "unsolicited \(message.verb) from the server"))
            }
            outstanding = false
            return .deliver(message, next: nextQueued())
        }
    }

    /// The line could not be parsed or framed: the stream cannot be trusted any more.
    public mutating func receivedMalformed(_ error: ReelProtocolError) -> Action {
        guard state != .closed else { return .none }
        let wasHandshaking = state != .ready
        state = .closed
        return wasHandshaking ? .handshakeFailed(error) : .closeWithError(error)
    }

    public mutating func closed() {
        state = .closed
    }

    private mutating func nextQueued() -> Message? {
        guard !queue.isEmpty else { return nil }
        outstanding = true
        return queue.removeFirst()
    }

    private mutating func handshakeFailure(_ message: Message) -> Action {
        state = .closed
        if case let .error(code, text) = message { return .handshakeFailed(ReelProtocolError(code, text)) }
        return .handshakeFailed(ReelProtocolError(.malformed, "unexpected \(message.verb) during the handshake"))
    }
}
