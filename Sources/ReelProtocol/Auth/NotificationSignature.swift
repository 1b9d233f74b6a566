import Crypto
import Foundation
import ReelCore

/// The signature of a job-end notification (docs/notifications.md), in the style of webhook
/// signatures elsewhere: HMAC-SHA256 under the farm's secret (the secret file's bytes, as the
/// handshake uses them) over `TIMESTAMP.BODY`, sent as `Reel-Signature: t=TIMESTAMP,v1=HEX`.
/// The timestamp (Unix seconds) is inside the MAC, so a receiver can refuse old replays; the
/// message starts with digits, so it can never be a handshake MAC's message (`reel/1|…`).
public enum NotificationSignature {
    public static let header = "Reel-Signature"

    /// The header's value for `body` sent at `timestamp` (Unix seconds).
    public static func value(secret: [UInt8], timestamp: Int64, body: [UInt8]) -> String {
        "t=\(timestamp),v1=\(mac(secret: secret, timestamp: timestamp, body: body))"
    }

    /// Whether `header` signs `body` under `secret` (constant-time comparison).
    public static func verify(_ header: String, secret: [UInt8], body: [UInt8]) -> Bool {
        var timestamp: Int64?
        var signature: String?
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int64(pair[1]) }
            if pair[0] == "v1" { signature = pair[1] }
        }
        guard let timestamp, let signature else { return false }
        return Authenticator.constantTimeEqual(signature, mac(secret: secret, timestamp: timestamp, body: body))
    }

    private static func mac(secret: [UInt8], timestamp: Int64, body: [UInt8]) -> String {
        FileDigest.hex(Array(HMAC<SHA256>.authenticationCode(for: Array("\(timestamp).".utf8) + body, using: SymmetricKey(data: secret))))
    }
}

extension Authenticator {
    /// The `Reel-Signature` header value of a notification body (`NotificationSignature`).
    public func notificationSignature(timestamp: Int64, body: [UInt8]) -> String {
        NotificationSignature.value(secret: secret, timestamp: timestamp, body: body)
    }
}

extension JobSettings {
    /// Why `url` cannot be a job's `notify` URL, or `nil` if it can: an absolute `http` or
    /// `https` URL with a host, at most 2048 bytes. Checked by `reel submit` and by the
    /// coordinator (a raw `SUBMIT` may carry anything).
    public static func problem(withNotifyURL url: String) -> String? {
        guard url.utf8.count <= 2048 else { return "longer than 2048 bytes" }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            return "not a URL (expected http://HOST[:PORT]/PATH or https://…)"
        }
        guard scheme == "http" || scheme == "https" else { return "scheme \(scheme) is not supported (use http or https)" }
        guard let host = components.host, !host.isEmpty else { return "has no host (expected http://HOST[:PORT]/PATH)" }
        return nil
    }
}
