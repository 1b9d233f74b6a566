import Crypto
import Foundation
import JWTKit
import ReelProtocol

/// What a console token allows.
public enum ConsoleRole: String, Codable, Sendable, CaseIterable {
    /// Reads and acts: cancel, retry, pause, resume, priority.
    case operator_ = "operator"
    /// Reads only; actions answer 403.
    case readOnly = "read-only"

    public var canAct: Bool { self == .operator_ }
}

/// The claims of a console token (a JWT, HS256).
struct ConsoleTokenPayload: JWTPayload {
    /// Always "reel-console": a JWT signed with the same key for another purpose is refused.
    var aud: AudienceClaim
    var sub: SubjectClaim
    var iat: IssuedAtClaim
    var exp: ExpirationClaim
    var role: ConsoleRole

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        try aud.verifyIntendedAudience(includes: ConsoleTokens.audience)
    }
}

/// Who a verified token belongs to.
public struct ConsoleAccess: Sendable, Hashable, Codable {
    public var role: ConsoleRole
    public var subject: String
    public var expiresAtMillis: Int64
}

/// Why a token was refused (the 401's message).
public struct ConsoleTokenError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// Issues and verifies console tokens: JWTs (HS256, jwt-kit) signed with a key derived from
/// the farm's shared secret (`Authenticator.derivedKey`), never the secret itself. Any holder
/// of the secret file (`reel token`) can issue one; the coordinator verifies signature, audience
/// and expiry. Tokens are not stored: to revoke every token, change the farm's secret.
public struct ConsoleTokens: Sendable {
    static let audience = "reel-console"
    /// The HKDF label of the signing key: changing it invalidates every token issued before.
    static let keyLabel = "reel console token HS256 v1"
    /// The longest lifetime `reel token --expires` accepts.
    public static let maximumLifetime: Duration = .seconds(366 * 86_400)

    private let keys: JWTKeyCollection

    private init(keys: JWTKeyCollection) { self.keys = keys }

    public static func make(authenticator: Authenticator) async -> ConsoleTokens {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(key: SymmetricKey(data: authenticator.derivedKey(label: keyLabel))), digestAlgorithm: .sha256)
        return ConsoleTokens(keys: keys)
    }

    /// A token for `role`, valid for `lifetime` from `now`.
    public func issue(role: ConsoleRole, subject: String, lifetime: Duration, now: Date = Date()) async throws -> String {
        let seconds = Double(lifetime.components.seconds) + Double(lifetime.components.attoseconds) / 1e18
        let payload = ConsoleTokenPayload(aud: AudienceClaim(value: [Self.audience]), sub: SubjectClaim(value: subject),
                                          iat: IssuedAtClaim(value: now), exp: ExpirationClaim(value: now.addingTimeInterval(seconds)),
                                          role: role)
        return try await keys.sign(payload)
    }

    /// The token's access, or `ConsoleTokenError` saying why it is refused.
    public func verify(_ token: String) async throws(ConsoleTokenError) -> ConsoleAccess {
        do {
            let payload = try await keys.verify(token, as: ConsoleTokenPayload.self)
            return ConsoleAccess(role: payload.role, subject: payload.sub.value,
                                 expiresAtMillis: Int64(payload.exp.value.timeIntervalSince1970 * 1000))
        } catch let error as JWTError {
            if error.errorType == .claimVerificationFailure, error.failedClaim is ExpirationClaim {
                throw ConsoleTokenError(description: "the token has expired; get a new one with `reel token`")
            }
            if error.errorType == .signatureVerificationFailed {
                throw ConsoleTokenError(description: "the token's signature does not match this farm's secret; get a token with `reel token` on this farm")
            }
            throw ConsoleTokenError(description: "the token is not a valid console token (\(error.errorType)); get one with `reel token`")
        } catch {
            throw ConsoleTokenError(description: "the token is not a valid console token; get one with `reel token`")
        }
    }

    /// Parses `30m`, `12h`, `7d`, `90s` (or a bare number of seconds) into a lifetime.
    public static func parseLifetime(_ text: String) -> Duration? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        var digits = Substring(text)
        var unit: Int64 = 1
        if let last = text.last, let multiplier = units[last] { unit = multiplier; digits = digits.dropLast() }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = Int64(digits), value > 0,
              value <= Int64(maximumLifetime.components.seconds) / unit else { return nil }
        return .seconds(value * unit)
    }
}
