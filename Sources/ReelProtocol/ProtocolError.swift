/// An error of the Reel line protocol: a `Code` from proto/PROTOCOL.md §6 plus a human message.
///
/// Thrown by the parser, the framer and the state machines, and by a `ReelRequestHandler`
/// to make the server answer `ERR code message`. Extensible like postgres-nio's `PSQLError`:
/// codes are a struct with static members, so a peer's unknown code still parses.
public struct ReelProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A machine-readable error code (`[a-z_]+`), as sent after `ERR`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let malformed = Code("malformed")
        public static let lineTooLong = Code("line_too_long")
        public static let payloadTooLarge = Code("payload_too_large")
        public static let unsupportedVersion = Code("unsupported_version")
        public static let notAuthenticated = Code("not_authenticated")
        public static let authFailed = Code("auth_failed")
        public static let replayedNonce = Code("replayed_nonce")
        public static let forbidden = Code("forbidden")
        public static let busy = Code("busy")
        public static let timeout = Code("timeout")
        public static let noCapabilities = Code("no_capabilities")
        public static let notFound = Code("not_found")
        public static let staleEpoch = Code("stale_epoch")
        public static let checksumMismatch = Code("checksum_mismatch")
        public static let badRange = Code("bad_range")
        public static let notReady = Code("not_ready")
        public static let conflict = Code("conflict")
        public static let invalidComposition = Code("invalid_composition")
        public static let shuttingDown = Code("shutting_down")
        public static let tooManyConnections = Code("too_many_connections")
        public static let `internal` = Code("internal")
        /// The storage hands out no presigned URLs (a local directory): move the bytes over
        /// `reel/1` (`FETCH`, `RESULTPART`, `PUT`, `OUTPUT`) instead (§4.5).
        public static let noDirect = Code("no_direct")

        /// Codes after which the server closes the connection (§6 "closes").
        public var closesConnection: Bool {
            [.lineTooLong, .payloadTooLarge, .unsupportedVersion, .notAuthenticated, .authFailed,
             .replayedNonce, .busy, .timeout, .shuttingDown, .tooManyConnections].contains(self)
        }
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }

    /// The `ERR` reply carrying this error (control characters in the message are replaced,
    /// since the `ERR` text is raw and must stay on one line).
    public var reply: Message { .error(code: code, message: message) }
}

extension ReelProtocolError {
    /// `ERR bad_range have=B …`: a ranged upload (`PUT`, `RESULTPART`) sent at an offset other than
    /// the bytes held. The text starts with `have=B` so the uploader can continue from `B` without
    /// a round trip of its own (proto/PROTOCOL.md §4.2, §4.3); the rest is for humans.
    public static func outOfOrder(have: Int64, _ message: String) -> ReelProtocolError {
        ReelProtocolError(.badRange, "have=\(have) \(message)")
    }

    /// The bytes held, from an `outOfOrder` error (`bad_range` whose text starts with `have=B`).
    public var heldBytes: Int64? {
        guard code == .badRange, message.hasPrefix("have=") else { return nil }
        let digits = message.dropFirst(5).prefix { $0 != " " }
        return ProtocolLine.canonicalInteger(String(digits))
    }
}

extension ReelProtocolError {
    /// Whether this answer to a direct-transfer request (`SOURCEURL`, `RESULTURL`, `ASSETURL`,
    /// `OUTPUTURL`) means "no presigned URLs here; use `reel/1`'s own transfers": `no_direct`,
    /// or `malformed` naming the verb as unknown (a coordinator that predates them).
    public var meansNoDirectTransfers: Bool {
        code == .noDirect || (code == .malformed && message.hasPrefix("unknown verb"))
    }
}
