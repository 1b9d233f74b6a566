import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import ReelLogTesting
import ReelObjectStore
import Synchronization
import Testing

/// The client against a real S3-compatible server (SeaweedFS, ops/s3.sh): objects in and out,
/// ranges, listings, and the server's refusals (a wrong secret, a body that does not match its
/// checksum) reported with their S3 codes and without the secret.
@Suite(.enabled(if: TestS3.isConfigured, TestS3.skipReason))
struct S3ClientTests {
    static func sha256(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

    @Test("put, head, get, ranged get and delete round-trip exact bytes")
    func roundTrip() async throws {
        let client = try await TestS3.client()
        let key = TestS3.prefix("round-trip") + "clip.mp4"
        let bytes = TestS3.bytes(3_000_001, seed: 7)

        let put = try await client.putObject(key: key, bytes: bytes, contentType: "video/mp4")
        #expect(put.serverVerifiedSHA256)
        let info = try #require(try await client.headObject(key: key))
        #expect(info.size == Int64(bytes.count))
        #expect(info.sha256 == Self.sha256(bytes))
        #expect(info.etag == put.etag)

        let whole = try await client.getObject(key: key)
        #expect(Array(whole.bytes.readableBytesView) == bytes)
        #expect(whole.objectSize == Int64(bytes.count))

        for range: Range<Int64> in [0..<1, 1_048_575..<1_048_577, 2_999_990..<3_000_001, 17..<2_000_017] {
            let part = try await client.getObject(key: key, range: range)
            #expect(Array(part.bytes.readableBytesView) == Array(bytes[Int(range.lowerBound)..<Int(range.upperBound)]), "\(range)")
            #expect(part.objectSize == Int64(bytes.count))
        }
        // A range running past the end is cut at the end, as HTTP says.
        let tail = try await client.getObject(key: key, range: 2_999_999..<4_000_000)
        #expect(Array(tail.bytes.readableBytesView) == Array(bytes[2_999_999...]))
        // A range starting past the end is refused by the server.
        await #expect { _ = try await client.getObject(key: key, range: 3_000_001..<3_000_002) } throws: { error in
            (error as? ObjectStoreError)?.s3Code == "InvalidRange"
        }

        try await client.deleteObject(key: key)
        #expect(try await client.headObject(key: key) == nil)
        await #expect { _ = try await client.getObject(key: key) } throws: { error in
            (error as? ObjectStoreError)?.code == .notFound && (error as? ObjectStoreError)?.s3Code == "NoSuchKey"
        }
        try await client.deleteObject(key: key)  // deleting again is not an error
    }

    /// The unusual keys a round trip can check on SeaweedFS, which keeps keys as file paths: it
    /// refuses `.` and `..` segments (InvalidRequest), lists `a//b` as `a/b`, and makes a key
    /// ending in `/` a folder whose bytes are dropped (AWS S3 keeps all of them as they are). Those
    /// keys are checked for their signature only (SigV4SignerTests). Reel's own keys have none.
    static let roundTripKeys = SigV4SignerTests.unusualKeys.filter { name in
        !(name.contains("//") || name.split(separator: "/").contains { $0 == "." || $0 == ".." } || name.hasSuffix("/"))
    }

    @Test("keys with unusual characters are stored and read under exactly their names", arguments: roundTripKeys)
    func unusualKeys(name: String) async throws {
        let client = try await TestS3.client()
        let prefix = TestS3.prefix("unusual")
        let key = prefix + name
        let bytes = Array("content of \(name)".utf8)
        try await client.putObject(key: key, bytes: bytes)
        #expect(Array(try await client.getObject(key: key).bytes.readableBytesView) == bytes)
        let listed = try await client.listAllObjects(prefix: prefix)
        // SeaweedFS lists a backslash as a slash (it keeps keys as file paths); the object is
        // still read and written under the name with the backslash.
        #expect(listed.map(\.key) == [key.replacingOccurrences(of: "\\", with: "/")])
        #expect(listed.first?.size == Int64(bytes.count))
        try await client.deleteObject(key: key)
    }

    @Test("a file streams up and down, verified by SHA-256 at both ends")
    func fileUploadAndDownload() async throws {
        let client = try await TestS3.client()
        let key = TestS3.prefix("file") + "asset"
        let bytes = TestS3.bytes(4_500_000, seed: 3)
        let path = try TestS3.file(bytes)
        defer { unlink(path) }
        let digest = Self.sha256(bytes)

        try await client.putObject(key: key, file: path, sha256: digest)
        #expect(try await client.headObject(key: key)?.sha256 == digest)

        let target = path + ".down"
        defer { unlink(target) }
        let got = try await client.download(key: key, to: target, expectedSHA256: digest)
        #expect(got.size == Int64(bytes.count) && got.sha256 == digest)
        #expect(FileManager.default.contents(atPath: target) == Data(bytes))

        // A download that does not match what was expected leaves nothing under the name.
        let wrong = target + ".wrong"
        await #expect { try await client.download(key: key, to: wrong, expectedSHA256: String(repeating: "0", count: 64)) } throws: { error in
            (error as? ObjectStoreError)?.code == .integrity
        }
        #expect(!FileManager.default.fileExists(atPath: wrong))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: (target as NSString).deletingLastPathComponent)
            .filter { $0.hasPrefix((wrong as NSString).lastPathComponent) }
        #expect(leftovers.isEmpty)

        // A declared SHA-256 the file does not have stops the upload before it is stored.
        let other = TestS3.prefix("file") + "never"
        await #expect { try await client.putObject(key: other, file: path, sha256: Self.sha256([1, 2, 3])) } throws: { error in
            (error as? ObjectStoreError)?.code == .integrity
        }
        #expect(try await client.headObject(key: other) == nil)
    }

    @Test("the server refuses a body whose x-amz-checksum-sha256 does not match it")
    func serverChecksBody() async throws {
        // Signed correctly, but the checksum header names other bytes: only the server can say no.
        let credentials = try TestS3.credentials()
        _ = try await TestS3.client()
        let key = TestS3.prefix("bad-digest") + "x"
        let body = Array("the bytes actually sent".utf8)
        var request = SignableRequest(method: "PUT", endpoint: try TestS3.endpoint(), bucket: TestS3.bucket, key: key,
                                      headers: ["x-amz-checksum-sha256": Data(SHA256.hash(data: Array("other bytes".utf8))).base64EncodedString()])
        request.setHeader("content-length", String(body.count))
        let signed = SigV4Signer(credentials: credentials, region: "us-east-1").sign(request, payload: .sha256(Self.sha256(body)), at: AmzDate(Date()))
        var http = HTTPClientRequest(url: request.url)
        http.method = .PUT
        for (name, value) in signed.headers { http.headers.replaceOrAdd(name: name, value: value) }
        http.body = .bytes(ByteBuffer(bytes: body))
        let response = try await S3Client.sharedHTTPClient.execute(http, timeout: .seconds(30))
        let answer = String(buffer: try await response.body.collect(upTo: 1 << 16))
        #expect(response.status.code == 400, "\(answer)")
        #expect(answer.contains("BadDigest"))
        #expect(try await TestS3.client().headObject(key: key) == nil)
    }

    @Test("listing pages through every object under a prefix, in key order")
    func listing() async throws {
        let client = try await TestS3.client()
        let prefix = TestS3.prefix("list")
        let keys = (0..<23).map { prefix + String(format: "results/%02d/%064x", $0 % 5, $0) }
        for key in keys { try await client.putObject(key: key, bytes: Array(key.utf8)) }
        try await client.putObject(key: TestS3.prefix("list-elsewhere") + "x", bytes: [1])

        var pages = 0
        var seen: [ObjectSummary] = []
        try await client.forEachPage(prefix: prefix, pageSize: 5) { page in
            pages += 1
            #expect(page.count <= 5)
            seen += page
        }
        #expect(pages == 5)
        #expect(seen.map(\.key) == keys.sorted())
        #expect(seen.allSatisfy { $0.size == Int64($0.key.utf8.count) && $0.lastModified != nil })
        #expect(try await client.listAllObjects(prefix: prefix + "results/03/").map(\.key) == keys.filter { $0.contains("/results/03/") }.sorted())
        #expect(try await client.listAllObjects(prefix: prefix + "nothing/").isEmpty)
    }

    @Test("a wrong secret is refused by the server: SignatureDoesNotMatch, and the secret is in no error")
    func wrongSecret() async throws {
        let real = try TestS3.credentials()
        let wrongSecret = "not-the-secret-\(UUID().uuidString)"
        let client = try await TestS3.client(credentials: S3Credentials(accessKeyID: real.accessKeyID, secretAccessKey: wrongSecret))
        let key = TestS3.prefix("wrong-secret") + "x"
        for attempt in [{ _ = try await client.putObject(key: key, bytes: [1, 2, 3]) },
                        { _ = try await client.getObject(key: key) },
                        { _ = try await client.listObjects(prefix: "") }] as [@Sendable () async throws -> Void] {
            await #expect { try await attempt() } throws: { error in
                guard let error = error as? ObjectStoreError else { return false }
                return error.code == .accessDenied && error.s3Code == "SignatureDoesNotMatch" && error.status == 403
                    && !"\(error)".contains(wrongSecret) && !"\(error)".contains(real.secretAccessKey.revealed)
            }
        }
        // HEAD answers carry no body: the status alone says it.
        await #expect { _ = try await client.headObject(key: key) } throws: { error in
            (error as? ObjectStoreError)?.code == .accessDenied
        }
        // An unknown access key is refused too.
        let stranger = try await TestS3.client(credentials: S3Credentials(accessKeyID: "NOSUCHKEY", secretAccessKey: real.secretAccessKey.revealed))
        await #expect { _ = try await stranger.listObjects(prefix: "") } throws: { error in
            (error as? ObjectStoreError)?.code == .accessDenied
        }
    }

    @Test("a server that cannot be reached is retried with growing delays, then reported")
    func unreachableIsRetried() async throws {
        let delays = Mutex<[Duration]>([])
        // Port 1 on loopback: nothing listens there, connections are refused at once.
        let client = S3Client(configuration: S3ClientConfiguration(endpoint: try S3Endpoint("http://127.0.0.1:1"), bucket: "b",
                                                                   retry: RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(100), maxDelay: .seconds(1))),
                              credentials: S3Credentials(accessKeyID: "k", secretAccessKey: "s"), httpClient: TestS3.impatientHTTPClient,
                              sleep: { delay in delays.withLock { $0.append(delay) } })
        await #expect { _ = try await client.headObject(key: "x") } throws: { error in
            (error as? ObjectStoreError)?.code == .transport && "\(error)".contains("127.0.0.1:1")
        }
        let waited = delays.withLock { $0 }
        #expect(waited.count == 3)
        for (index, delay) in waited.enumerated() {
            let ceiling = Duration.milliseconds(100 << index)
            #expect(delay >= ceiling / 2 && delay <= ceiling, "\(index): \(delay)")
        }
    }

    @Test("no log line and no error says the secret or a presigned URL's signature")
    func nothingSecretIsLogged() async throws {
        let capture = LogCapture()
        let credentials = try TestS3.credentials()
        let client = try await TestS3.client(logger: capture.logger)
        let key = TestS3.prefix("logging") + "x"
        var errors: [String] = []
        try await client.putObject(key: key, bytes: [1, 2, 3])
        _ = try await client.getObject(key: key, range: 0..<2)
        _ = try await client.headObject(key: key)
        let presigned = try client.presign(.getObject(key: key))
        let signature = try #require(presigned.url.split(separator: "=").last.map(String.init))
        #expect(signature.count == 64)
        let wrong = try await TestS3.client(credentials: S3Credentials(accessKeyID: credentials.accessKeyID, secretAccessKey: credentials.secretAccessKey.revealed + "x"),
                                            logger: capture.logger)
        do { _ = try await wrong.getObject(key: key) } catch { errors.append("\(error)") }
        let unreachable = S3Client(configuration: S3ClientConfiguration(endpoint: try S3Endpoint("http://127.0.0.1:1"), bucket: "b",
                                                                        retry: RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1))),
                                   credentials: credentials, httpClient: TestS3.impatientHTTPClient, logger: capture.logger)
        do { _ = try await unreachable.headObject(key: key) } catch { errors.append("\(error)") }
        capture.logger.info("presigned", metadata: ["request": "\(presigned)"])  // as a careless caller would log it

        let lines = capture.records.map { "\($0.message) \($0.metadata)" }
        #expect(lines.contains { $0.contains("s3 request") })
        #expect(lines.contains { $0.contains("retrying") })
        #expect(errors.count == 2)
        for text in lines + errors + ["\(presigned)", String(reflecting: presigned), "\(credentials)"] {
            #expect(!text.contains(credentials.secretAccessKey.revealed), "\(text)")
            #expect(!text.contains(signature), "\(text)")
        }
        try await client.deleteObject(key: key)
    }
}
