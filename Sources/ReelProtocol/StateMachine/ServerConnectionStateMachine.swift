/// The server side of one connection (proto/PROTOCOL.md §5) as a pure value: every event is a
/// `mutating func` returning the `Action` the channel handler must carry out, so handshake,
/// authentication, per-role verb rules and "what closes the connection" are tested with no I/O.
///
/// Invariants: at most one request is being processed; nothing but `HELLO` then `AUTH` is
/// accepted before `ready`; once `closed`, every event yields `.none`.
public struct ServerConnectionStateMachine: Sendable {
    public enum State: Hashable, Sendable {
        case awaitingHello
        case awaitingAuth(role: PeerRole, name: String, clientNonce: String)
        case ready(Peer)
        case processing(Peer)
        case closed
    }

    public enum Action: Hashable, Sendable {
        /// Write this message and keep reading.
        case send(Message)
        /// Write this message, then close the connection.
        case sendAndClose(Message)
        /// A login failed: write this `ERR`, close the connection, and report the failure (the
        /// server logs it with the peer's address).
        case refuse(Message, HandshakeFailure)
        /// Write `WELCOME`: the peer is authenticated (stop the handshake timer).
        case authenticated(Peer, welcome: Message)
        /// Hand this request to the `ReelRequestHandler`; call `replyReady` with its answer.
        case dispatch(Message, Peer)
        /// Close without writing.
        case close
        case none
    }

    public private(set) var state: State = .awaitingHello
    /// Whether the agent has sent `CAPS` (a `CLAIM` before it is refused).
    public private(set) var hasCapabilities = false
    /// The server is draining: the outstanding request gets its reply, then the connection closes.
    public private(set) var isDraining = false
    private let authenticator: Authenticator
    private let replayCache: NonceReplayCache
    private let serverNonce: String
    private let connectionID: UInt64

    /// - Parameters:
    ///   - serverNonce: this connection's fresh `CHALLENGE` nonce (`Authenticator.makeNonce()`).
    ///   - replayCache: shared by all connections of the server.
    public init(authenticator: Authenticator, replayCache: NonceReplayCache, serverNonce: String, connectionID: UInt64) {
        self.authenticator = authenticator
        self.replayCache = replayCache
        self.serverNonce = serverNonce
        self.connectionID = connectionID
    }

    /// A well-framed line parsed into `message`.
    public mutating func received(_ message: Message) -> Action {
        switch state {
        case .closed:
            return .none
        case .awaitingHello:
            guard case let .hello(version, role, name, clientNonce) = message else {
                return fail(.notAuthenticated, "expected HELLO")
            }
            guard version == ProtocolLimits.version else {
                return fail(.unsupportedVersion, "server speaks \(ProtocolLimits.version)", claimed: (role, name))
            }
            guard replayCache.insert(clientNonce) else {
                return fail(.replayedNonce, "client nonce already used", claimed: (role, name))
            }
            state = .awaitingAuth(role: role, name: name, clientNonce: clientNonce)
            return .send(.challenge(nonce: serverNonce))
        case let .awaitingAuth(role, name, clientNonce):
            guard case let .auth(mac) = message else {
                return fail(.notAuthenticated, "expected AUTH")
            }
            guard authenticator.verifyClientMAC(mac, role: role, name: name, serverNonce: serverNonce, clientNonce: clientNonce) else {
                return fail(.authFailed, "authentication failed")
            }
            let peer = Peer(role: role, name: name, connectionID: connectionID)
            state = .ready(peer)
            let welcome = authenticator.serverMAC(role: role, name: name, serverNonce: serverNonce, clientNonce: clientNonce)
            return .authenticated(peer, welcome: .welcome(mac: welcome))
        case .processing:
            return fail(.busy, "a request is already outstanding (no pipelining)")
        case let .ready(peer):
            switch message {
            case .ping:
                return .send(.pong)
            case .quit:
                state = .closed
                return .sendAndClose(.bye)
            default:
                break
            }
            guard let roles = message.requestRoles else {
                return .send(ReelProtocolError(.malformed, "\(message.verb) is not a request").reply)
            }
            guard roles.contains(peer.role) else {
                return .send(ReelProtocolError(.forbidden, "\(message.verb) is not allowed for role \(peer.role.rawValue)").reply)
            }
            if case .claim = message, !hasCapabilities {
                return .send(ReelProtocolError(.noCapabilities, "send CAPS before CLAIM").reply)
            }
            if case .capabilities = message { hasCapabilities = true }
            state = .processing(peer)
            return .dispatch(message, peer)
        }
    }

    /// A well-framed line that does not parse.
    public mutating func receivedMalformed(_ error: ReelProtocolError) -> Action {
        switch state {
        case .closed: return .none
        case .ready: return .send(error.reply)
        case .processing: return fail(.busy, "a request is already outstanding (no pipelining)")
        case .awaitingHello, .awaitingAuth: return fail(error.code, error.message)
        }
    }

    /// The framer failed (over-long line, bad `size=`, invalid UTF-8): the byte stream is lost.
    public mutating func framingFailed(_ error: ReelProtocolError) -> Action {
        fail(error.code, error.message)
    }

    /// The request handler answered the outstanding request (a handler error is passed as
    /// its `ERR` reply).
    public mutating func replyReady(_ reply: Message) -> Action {
        guard case let .processing(peer) = state else { return .none }
        if isDraining {
            state = .closed
            return .sendAndClose(reply)
        }
        if case let .error(code, _) = reply, code.closesConnection {
            state = .closed
            return .sendAndClose(reply)
        }
        state = .ready(peer)
        return .send(reply)
    }

    /// The server already holds its maximum of unauthenticated connections
    /// (`ProtocolLimits.maxUnauthenticatedConnections`); called right after accept.
    public mutating func tooManyConnections() -> Action {
        fail(.tooManyConnections, "too many connections are authenticating; try again shortly")
    }

    /// The handshake deadline passed.
    public mutating func handshakeTimedOut() -> Action {
        switch state {
        case .awaitingHello, .awaitingAuth: return fail(.timeout, "handshake not completed in time")
        default: return .none
        }
    }

    /// Nothing was received for the idle timeout.
    public mutating func idleTimedOut() -> Action {
        guard state != .closed else { return .none }
        state = .closed
        return .close
    }

    /// The server is draining (SIGTERM): an idle connection is told `ERR shutting_down` and
    /// closed; one with a request in flight closes right after sending its reply.
    public mutating func shuttingDown() -> Action {
        switch state {
        case .processing:
            isDraining = true
            return .none
        default:
            return fail(.shuttingDown, "coordinator is shutting down")
        }
    }

    /// The connection went away.
    public mutating func closed() {
        state = .closed
    }

    /// Closes with `ERR code message`. Before `ready` that is a failed login, reported with
    /// whatever identity the peer has claimed so far (`claimed`: a `HELLO` being refused).
    private mutating func fail(_ code: ReelProtocolError.Code, _ message: String,
                               claimed: (role: PeerRole, name: String)? = nil) -> Action {
        let reply = Message.error(code: code, message: message)
        let failure: HandshakeFailure
        switch state {
        case .closed:
            return .none
        case .ready, .processing:
            state = .closed
            return .sendAndClose(reply)
        case .awaitingHello:
            failure = HandshakeFailure(role: claimed?.role, name: claimed?.name, error: ReelProtocolError(code, message))
        case let .awaitingAuth(role, name, _):
            failure = HandshakeFailure(role: role, name: name, error: ReelProtocolError(code, message))
        }
        state = .closed
        // A coordinator going down is not a failed login.
        return code == .shuttingDown ? .sendAndClose(reply) : .refuse(reply, failure)
    }
}
