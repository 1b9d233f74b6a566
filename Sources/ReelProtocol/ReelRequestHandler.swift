/// What the server does with requests: the coordinator's business logic lives behind this
/// protocol, the connection machinery in `ReelServer`.
///
/// The server calls `handle` for every authenticated request except `PING` and `QUIT` (which
/// the state machine answers itself), one at a time per connection, concurrently across
/// connections. Throw a `ReelProtocolError` to answer `ERR code message`; any other error
/// becomes `ERR internal`. Replies must be reply messages (`OK`, `TASK`, `DATA`, …).
public protocol ReelRequestHandler: Sendable {
    func handle(_ request: Message, from peer: Peer) async throws -> Message

    /// The connection of an authenticated peer closed (an agent went away, for instance).
    func connectionClosed(_ peer: Peer) async

    /// A connection was refused before `WELCOME` (bad MAC, replayed nonce, wrong version,
    /// handshake timeout, a framing error, too many connections authenticating): log it.
    /// `remoteAddress` is the peer's `host:port`. Called on the connection's event loop, once
    /// per refused connection, so it must not block.
    func handshakeFailed(_ failure: HandshakeFailure, remoteAddress: String)
}

extension ReelRequestHandler {
    public func connectionClosed(_ peer: Peer) async {}
    public func handshakeFailed(_ failure: HandshakeFailure, remoteAddress: String) {}
}
