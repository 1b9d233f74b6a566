import Crypto
import Foundation
import ReelCore

/// The shared-secret challenge/response of proto/PROTOCOL.md §3.
///
/// Both MACs are HMAC-SHA256 over both nonces, the role and the name, with distinct labels
/// for the two directions, so the secret never crosses the wire, each MAC is single-use,
/// and the client verifies the server as well (mutual authentication). Comparisons are
/// constant-time. A value type holding only the key: cheap to copy into every connection.
public struct Authenticator: Sendable {
    /// The raw secret (`SymmetricKey` is not `Sendable`, so the key is rebuilt per MAC).
    let secret: [UInt8]

    /// The shortest secret accepted, in bytes.
    public static let minimumSecretLength = 16

    /// - Throws: if `secret` is shorter than `minimumSecretLength`.
    public init(secret: [UInt8]) throws {
        guard secret.count >= Authenticator.minimumSecretLength else {
            throw ReelProtocolError(.authFailed, "the shared secret must be at least \(Authenticator.minimumSecretLength) bytes")
        }
        self.secret = secret
    }

    /// Reads a secret file: its bytes, minus one trailing newline (as `echo > file` leaves).
    ///
    /// The file must be private (`SecretFileError.isPrivate`: 0600 or 0400; a root-owned file may
    /// also be group-readable), else a `SecretFileError` says `chmod 600 PATH` — a secret other
    /// users can read is a farm anyone on the host can join. The mode is checked on the open
    /// descriptor (`fstat`), so the file checked is the file read; symbolic links (Kubernetes
    /// secret volumes) are followed.
    /// - Throws: `SecretFileError` for an exposed file, `ReelProtocolError(.authFailed)` for an
    ///   unreadable or too short one.
    public init(secretFile path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ReelProtocolError(.authFailed, "cannot read secret file \(path)")
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw ReelProtocolError(.authFailed, "cannot read secret file \(path)")
        }
        let mode = UInt32(info.st_mode) & 0o7777
        guard SecretFileError.isPrivate(mode: mode, ownerUID: UInt32(info.st_uid)) else {
            throw SecretFileError(path: path, mode: mode)
        }
        guard let data = try? handle.readToEnd() ?? Data() else {
            throw ReelProtocolError(.authFailed, "cannot read secret file \(path)")
        }
        var bytes = [UInt8](data)
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        try self.init(secret: bytes)
    }

    /// A 32-byte key for another use of the farm's secret (the console's token signing key),
    /// derived with HKDF-SHA256 under `label`: knowing it reveals neither the secret nor the
    /// handshake's MACs, and different labels give unrelated keys.
    public func derivedKey(label: String) -> [UInt8] {
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: secret), salt: Array("reel/1 derived key".utf8),
                                         info: Array(label.utf8), outputByteCount: 32)
        return key.withUnsafeBytes { Array($0) }
    }

    /// A fresh 32-byte nonce from the system CSPRNG, as 64 lower-case hex digits.
    public static func makeNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return FileDigest.hex((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// What the client sends in `AUTH mac=`.
    public func clientMAC(role: PeerRole, name: String, serverNonce: String, clientNonce: String) -> String {
        mac(label: "client", role: role, name: name, serverNonce: serverNonce, clientNonce: clientNonce)
    }

    /// What the server sends in `WELCOME mac=`.
    public func serverMAC(role: PeerRole, name: String, serverNonce: String, clientNonce: String) -> String {
        mac(label: "server", role: role, name: name, serverNonce: serverNonce, clientNonce: clientNonce)
    }

    /// Constant-time check of a client's `AUTH mac=`.
    public func verifyClientMAC(_ candidate: String, role: PeerRole, name: String, serverNonce: String, clientNonce: String) -> Bool {
        Authenticator.constantTimeEqual(candidate, clientMAC(role: role, name: name, serverNonce: serverNonce, clientNonce: clientNonce))
    }

    /// Constant-time check of a server's `WELCOME mac=`.
    public func verifyServerMAC(_ candidate: String, role: PeerRole, name: String, serverNonce: String, clientNonce: String) -> Bool {
        Authenticator.constantTimeEqual(candidate, serverMAC(role: role, name: name, serverNonce: serverNonce, clientNonce: clientNonce))
    }

    private func mac(label: String, role: PeerRole, name: String, serverNonce: String, clientNonce: String) -> String {
        let message = "\(ProtocolLimits.version)|\(label)|\(role.rawValue)|\(name)|\(serverNonce)|\(clientNonce)"
        return FileDigest.hex(Array(HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: SymmetricKey(data: secret))))
    }

    /// Compares without an early exit, so timing does not reveal the matching prefix length.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8), b = Array(b.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
