import Logging
import ReelCore
import ReelProtocol

/// How the coordinator logs a refused login: one warning per refused connection with
/// the peer's address, the role and name it claimed (escaped: they are unauthenticated text)
/// and the reason — so an operator sees a mistyped secret, a stale agent build or a scan.
enum LoginFailureLog {
    static func record(_ failure: HandshakeFailure, remoteAddress: String, to logger: Logger) {
        logger.warning("login failed", metadata: [
            "remote": "\(remoteAddress)",
            "role": "\(failure.role?.rawValue ?? "-")",
            "name": "\(failure.name?.escapingControlCharacters ?? "-")",
            "reason": "\(failure.reason)",
            "error": "\(failure.error.code): \(failure.error.message.escapingControlCharacters)",
        ])
    }
}
