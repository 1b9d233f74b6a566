/// The protocol's fixed limits and timeouts (proto/PROTOCOL.md §7).
public enum ProtocolLimits {
    /// The only protocol version this build speaks.
    public static let version = "reel/1"
    /// Longest line in bytes, not counting its `\n`.
    public static let maxLineLength = 16_384
    /// Longest line a server reads before `WELCOME` (`HELLO`, `AUTH`). Handshake lines are
    /// short (`HELLO` with a 64-digit nonce and a name), so an unauthenticated peer can make the
    /// server hold at most this much of its data.
    public static let maxHandshakeLineLength = 1024
    /// Largest payload of one message in bytes (only after `WELCOME`; none before).
    public static let maxPayloadLength = 64 * 1024 * 1024
    /// Most connections a server keeps open that have not reached `WELCOME` yet; further ones
    /// are refused with `ERR too_many_connections` at once.
    public static let maxUnauthenticatedConnections = 256
    /// Longest `CLAIM wait`, in seconds.
    public static let maxClaimWait = 60
    /// Longest `STATUS wait`, in seconds.
    public static let maxStatusWait = 60
    /// Time from connect to `WELCOME`.
    public static let handshakeTimeoutSeconds: Int64 = 10
    /// Time without a received line after which the server closes a connection.
    public static let idleTimeoutSeconds: Int64 = 300
    /// How long a client nonce is remembered to refuse replays.
    public static let nonceReplayWindowSeconds: Int64 = 600
}
