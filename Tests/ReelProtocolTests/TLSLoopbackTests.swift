import Foundation
import NIOCore
import NIOSSL
import Testing
@testable import ReelProtocol

/// The same protocol inside TLS: a self-signed certificate made with the openssl CLI at test time.
@Suite("TLS loopback", .timeLimit(.minutes(1)))
struct TLSLoopbackTests {
    /// Runs a command with posix_spawn (no pipes) and returns its exit status.
    static func spawn(_ arguments: [String]) -> Int32 {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        guard posix_spawnp(&pid, arguments[0], nil, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
    }

    @Test("handshake, auth and a request over TLS; a client not trusting the certificate fails")
    func tls() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path, cert = directory.appendingPathComponent("cert.pem").path
        let status = Self.spawn(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                 "-nodes", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                                 "-days", "1", "-keyout", key, "-out", cert])
        try #require(status == 0, "openssl failed")
        let certificate = try #require(try NIOSSLCertificate.fromPEMFile(cert).first)
        let serverTLS = try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: [.certificate(certificate)], privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))))
        var trusting = TLSConfiguration.makeClientConfiguration()
        trusting.trustRoots = .certificates([certificate])
        let clientTLS = try NIOSSLContext(configuration: trusting)

        let auth = try Authenticator(secret: Samples.secret)
        let server = try await ReelServer.start(
            configuration: ReelServerConfiguration(host: "127.0.0.1", port: 0, tls: serverTLS), authenticator: auth, handler: EchoHandler())
        let port = try #require(server.localAddress?.port)
        let client = try await ReelClient.connect(
            configuration: ReelClientConfiguration(host: "127.0.0.1", port: port, role: .client, name: "tls-user",
                                                   tls: clientTLS, tlsServerHostname: "localhost"),
            authenticator: auth)
        #expect(try await client.request(.status(job: 9)) == .report(json: Array(#"{"job":9,"peer":"tls-user"}"#.utf8)))
        await client.close()

        let untrusting = try NIOSSLContext(configuration: .makeClientConfiguration()) // system roots only
        await #expect(throws: (any Error).self) {
            _ = try await ReelClient.connect(
                configuration: ReelClientConfiguration(host: "127.0.0.1", port: port, role: .client, name: "x",
                                                       tls: untrusting, tlsServerHostname: "localhost"),
                authenticator: auth)
        }
        try await server.close()
    }
}
