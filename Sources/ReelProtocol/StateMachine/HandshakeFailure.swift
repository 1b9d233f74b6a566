/// A connection that did not get past the handshake (proto/PROTOCOL.md §3), with as much as
/// the server knows of who it was: what the server logs about a failed login.
public struct HandshakeFailure: Hashable, Sendable {
    /// `HELLO role=`, if a well-formed `HELLO` arrived.
    public var role: PeerRole?
    /// `HELLO name=` as the peer claimed it — unauthenticated text: print it escaped
    /// (`escapingControlCharacters`).
    public var name: String?
    /// What the peer was told (`auth_failed`, `replayed_nonce`, `unsupported_version`, `timeout`, …).
    public var error: ReelProtocolError

    public init(role: PeerRole?, name: String?, error: ReelProtocolError) {
        self.role = role; self.name = name; self.error = error
    }

    /// Why the login failed, in an operator's words.
    public var reason: String {
        switch error.code {
        case .authFailed: "bad MAC (the peer does not have this farm's secret)"
        case .replayedNonce: "replayed nonce (a HELLO seen before: a replay, or a broken client)"
        case .unsupportedVersion: "unsupported protocol version"
        case .timeout: "handshake timeout"
        case .tooManyConnections: "too many connections authenticating at once"
        case .notAuthenticated: "protocol violation before authentication"
        default: "malformed handshake"
        }
    }
}
