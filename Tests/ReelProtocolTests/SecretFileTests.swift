import Foundation
import Testing
@testable import ReelProtocol
import ReelThreadTesting

/// `Authenticator(secretFile:)`: only owner-private secret files are accepted.
@Suite("Secret file permissions", .blocking)
struct SecretFileTests {
    static func secretFile(mode: mode_t, contents: String = "correct horse battery staple\n") throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("reel-secret-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("secret").path
        try contents.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(chmod(path, mode) == 0)
        return path
    }

    @Test("files other users can access are refused, naming the file and the fix", arguments: [0o644, 0o604, 0o444, 0o660, 0o620, 0o602, 0o777])
    func exposed(mode: Int) throws {
        let path = try Self.secretFile(mode: mode_t(mode))
        #expect(throws: SecretFileError(path: path, mode: UInt32(mode))) { try Authenticator(secretFile: path) }
        let message = SecretFileError(path: path, mode: UInt32(mode)).description
        #expect(message.contains("the secret file \(path) is accessible to other users (mode 0\(String(mode, radix: 8)))"))
        #expect(message.hasSuffix("chmod 600 \(path)"))
    }

    @Test("owner-only files are accepted", arguments: [0o600, 0o400])
    func private_(mode: Int) throws {
        let path = try Self.secretFile(mode: mode_t(mode))
        let fromFile = try Authenticator(secretFile: path)
        let direct = try Authenticator(secret: Samples.secret)
        let nonce = Authenticator.makeNonce()
        #expect(fromFile.clientMAC(role: .agent, name: "a", serverNonce: nonce, clientNonce: nonce)
                == direct.clientMAC(role: .agent, name: "a", serverNonce: nonce, clientNonce: nonce))
    }

    @Test("the rule: nothing for others; group read only for root-owned files (Kubernetes fsGroup mounts)")
    func rule() {
        for mode: UInt32 in [0o600, 0o400, 0o700] { #expect(SecretFileError.isPrivate(mode: mode, ownerUID: 1000)) }
        for mode: UInt32 in [0o640, 0o440, 0o604, 0o644, 0o620, 0o610] { #expect(!SecretFileError.isPrivate(mode: mode, ownerUID: 1000)) }
        for mode: UInt32 in [0o600, 0o640, 0o440, 0o400] { #expect(SecretFileError.isPrivate(mode: mode, ownerUID: 0)) }
        for mode: UInt32 in [0o644, 0o660, 0o604, 0o650, 0o444] { #expect(!SecretFileError.isPrivate(mode: mode, ownerUID: 0)) }
    }

    @Test("a missing file and a short one still fail as before")
    func missingAndShort() throws {
        #expect(throws: ReelProtocolError.self) { try Authenticator(secretFile: "/nonexistent/reel-secret") }
        let short = try Self.secretFile(mode: 0o600, contents: "short\n")
        #expect(throws: ReelProtocolError.self) { try Authenticator(secretFile: short) }
    }
}
