/// An authenticated peer of one connection: what the server's `ReelRequestHandler` is told
/// about who sent a request.
public struct Peer: Hashable, Sendable {
    public var role: PeerRole
    /// The `HELLO name=` the peer authenticated under.
    public var name: String
    /// A server-unique number of the connection, for logs and for tying agents to connections.
    public var connectionID: UInt64

    public init(role: PeerRole, name: String, connectionID: UInt64) {
        self.role = role; self.name = name; self.connectionID = connectionID
    }
}
