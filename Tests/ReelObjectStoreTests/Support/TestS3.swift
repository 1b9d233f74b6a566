import AsyncHTTPClient
import Foundation
import Logging
import ReelObjectStore
import Testing

/// The real S3-compatible server of the object-store tests: SeaweedFS started by ops/s3.sh,
/// named by `REEL_TEST_S3_ENDPOINT`, with its credentials in the shared-credentials file named by
/// `REEL_TEST_S3_CREDENTIALS` (ops/test.sh sets both). Without the endpoint the tests that need
/// it are skipped, saying so; CI always sets it.
enum TestS3 {
    static let environment = ProcessInfo.processInfo.environment

    static var isConfigured: Bool { !(environment["REEL_TEST_S3_ENDPOINT"] ?? "").isEmpty }

    static let skipReason: Comment = """
        REEL_TEST_S3_ENDPOINT is not set: start a server with `ops/s3.sh start DIR PORT` and export \
        REEL_TEST_S3_ENDPOINT (its output) and REEL_TEST_S3_CREDENTIALS=DIR/credentials (ops/test.sh does)
        """

    /// One bucket per test process, so runs never see each other's objects.
    static let bucket = "reel-test-\(UInt32.random(in: 0...UInt32.max))"

    static func endpoint() throws -> S3Endpoint { try S3Endpoint(environment["REEL_TEST_S3_ENDPOINT"] ?? "") }

    /// The server's credentials, found the way the farm finds them: through the AWS chain, here
    /// pointed at ops/s3.sh's credentials file.
    static func credentials() throws -> S3Credentials {
        var chain = CredentialChain(environment: [:])
        if let file = environment["REEL_TEST_S3_CREDENTIALS"], !file.isEmpty {
            chain.environment = ["AWS_SHARED_CREDENTIALS_FILE": file, "HOME": "/nonexistent"]
        } else {
            chain.environment = environment
        }
        return try chain.resolve()
    }

    /// A client of the test bucket (created if need be).
    static func client(partSize: Int = 5 << 20, retry: RetryPolicy = RetryPolicy(), credentials: S3Credentials? = nil,
                       logger: Logger = Logger(label: "reel.s3.test"), now: @escaping @Sendable () -> Date = { Date() }) async throws -> S3Client {
        let configuration = S3ClientConfiguration(endpoint: try endpoint(), bucket: bucket, retry: retry, partSize: partSize)
        let client = S3Client(configuration: configuration, credentials: try credentials ?? Self.credentials(), logger: logger, now: now)
        try await bucketCreated.value
        return client
    }

    /// The test bucket, created once for the whole process (SeaweedFS answers concurrent
    /// creations of one bucket with NoSuchBucket).
    static let bucketCreated = Task {
        try await S3Client(configuration: S3ClientConfiguration(endpoint: try endpoint(), bucket: bucket), credentials: try credentials())
            .createBucket()
    }

    /// An HTTP client that gives up connecting after half a second, for tests of unreachable
    /// servers (AsyncHTTPClient keeps trying to connect until its connect timeout). Never shut
    /// down: it lives as long as the test process.
    static let impatientHTTPClient: HTTPClient = {
        var settings = HTTPClient.Configuration()
        settings.timeout.connect = .milliseconds(500)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: settings)
    }()

    /// A key of its own for each test: `test/<name>/<uuid>/…`.
    static func prefix(_ name: String) -> String { "test/\(name)/\(UUID().uuidString)/" }

    /// `count` bytes of a deterministic pseudo-random sequence (no two 1 MiB blocks alike, so a
    /// misplaced part or range shows).
    static func bytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var out = [UInt8](repeating: 0, count: count)
        // A word at a time, with wrapping shifts: byte by byte, a debug build spent seconds of
        // the tests' time here, on the threads the async tests share.
        out.withUnsafeMutableBytes { buffer in
            let words = count / 8
            func next() -> UInt64 {
                state ^= state &<< 13; state ^= state &>> 7; state ^= state &<< 17
                return state.littleEndian
            }
            for index in 0..<words { buffer.storeBytes(of: next(), toByteOffset: index * 8, as: UInt64.self) }
            if count > words * 8 {
                withUnsafeBytes(of: next()) { buffer.baseAddress!.advanced(by: words * 8).copyMemory(from: $0.baseAddress!, byteCount: count - words * 8) }
            }
        }
        return out
    }

    /// Writes `bytes` to a new file under the temporary directory; returns its path.
    static func file(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reel-s3-\(UUID().uuidString)").path
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw ObjectStoreError(.localFile, "cannot write \(path)")
        }
        return path
    }
}
