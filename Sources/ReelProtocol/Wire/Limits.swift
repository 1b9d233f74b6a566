/// The protocol's fixed limits and timeouts (proto/PROTOCOL.md §7).
public enum ProtocolLimits {
    /// The only protocol version this build speaks.
    public static let version = "reel/1"
    /// Longest line in bytes, not counting its `\n`.
    public static let maxLineLength = 16_384
    /// Largest payload of one message in bytes.
    public static let maxPayloadLength = 64 * 1024 * 1024
    /// Longest `CLAIM wait`, in seconds.
    public static let maxClaimWait = 60
    /// Time from connect to `WELCOME`.
    public static let handshakeTimeoutSeconds: Int64 = 10
    /// Time without a received line after which the server closes a connection.
    public static let idleTimeoutSeconds: Int64 = 300
    /// How long a client nonce is remembered to refuse replays.
    public static let nonceReplayWindowSeconds: Int64 = 600
}
