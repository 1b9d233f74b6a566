import Crypto
import Foundation
import NIOCore
import ReelObjectStore
import Testing

/// Presigned URLs used by a plain HTTP client (curl) that has no credentials: they do exactly
/// their one operation, and the server refuses them expired, tampered with, or used for another
/// key, method or body.
@Suite(.blocking, .enabled(if: TestS3.isConfigured, TestS3.skipReason))
struct S3PresignTests {
    /// Runs curl; returns the HTTP status and the body it received.
    static func curl(_ arguments: [String], output: String? = nil) throws -> (status: Int, body: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let bodyFile = output ?? FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)").path
        defer { if output == nil { unlink(bodyFile) } }
        // --path-as-is: send the path exactly as signed (curl would fold /./ and /../).
        process.arguments = ["curl", "-s", "--path-as-is", "-o", bodyFile, "-w", "%{http_code}", "--max-time", "60"] + arguments
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        let status = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let body = output == nil ? (FileManager.default.contents(atPath: bodyFile).map { String(decoding: $0, as: UTF8.self) } ?? "") : ""
        return (Int(String(decoding: status, as: UTF8.self)) ?? 0, body)
    }

    static func headers(_ presigned: PresignedRequest) -> [String] {
        presigned.headers.sorted { $0.key < $1.key }.flatMap { ["-H", "\($0.key): \($0.value)"] }
    }

    @Test("presigned PUT and GET move an object with no credentials")
    func putAndGet() async throws {
        let client = try await TestS3.client()
        for name in ["results/ab/\(String(repeating: "ab", count: 32))", "a b/ü+=~ 加.mov"] {
            let key = TestS3.prefix("presign") + name
            let bytes = TestS3.bytes(300_000, seed: 21)
            let path = try TestS3.file(bytes)
            defer { unlink(path) }
            let put = try client.presign(.putObject(key: key, sha256: nil))
            #expect(put.method == "PUT" && put.headers.isEmpty)
            #expect(try Self.curl(["-X", "PUT", "--data-binary", "@\(path)", put.url]).status == 200)
            #expect(try await client.headObject(key: key)?.size == 300_000)

            let get = try client.presign(.getObject(key: key))
            let target = path + ".down"
            defer { unlink(target) }
            #expect(try Self.curl([get.url], output: target).status == 200)
            #expect(FileManager.default.contents(atPath: target) == Data(bytes))
            // A byte range through the same URL (Range is not signed, so any range may be asked).
            let ranged = try Self.curl(["-r", "100-109", get.url], output: target)
            #expect(ranged.status == 206)
            #expect(FileManager.default.contents(atPath: target) == Data(bytes[100...109]))
        }
    }

    @Test("a presigned PUT bound to a SHA-256 accepts only those bytes, with that header")
    func putBoundToChecksum() async throws {
        let client = try await TestS3.client()
        let key = TestS3.prefix("presign-sha") + "chunk"
        let bytes = TestS3.bytes(100_000, seed: 22)
        let path = try TestS3.file(bytes)
        defer { unlink(path) }
        let presigned = try client.presign(.putObject(key: key, sha256: S3ClientTests.sha256(bytes)))
        #expect(presigned.headers.keys.sorted() == ["x-amz-checksum-sha256"])
        #expect(presigned.url.contains("X-Amz-SignedHeaders=host%3Bx-amz-checksum-sha256"))

        var other = bytes
        other[500] ^= 1
        let otherPath = try TestS3.file(other)
        defer { unlink(otherPath) }
        let wrongBody = try Self.curl(["-X", "PUT", "--data-binary", "@\(otherPath)"] + Self.headers(presigned) + [presigned.url])
        #expect(wrongBody.status == 400 && wrongBody.body.contains("BadDigest"), "\(wrongBody)")
        let noHeader = try Self.curl(["-X", "PUT", "--data-binary", "@\(path)", presigned.url])
        #expect(noHeader.status == 403, "\(noHeader)")
        #expect(try await client.headObject(key: key) == nil)

        #expect(try Self.curl(["-X", "PUT", "--data-binary", "@\(path)"] + Self.headers(presigned) + [presigned.url]).status == 200)
        #expect(try await client.headObject(key: key)?.sha256 == S3ClientTests.sha256(bytes))
    }

    @Test("presigned UploadPart URLs let a client without credentials send the parts")
    func presignedParts() async throws {
        let client = try await TestS3.client()
        let key = TestS3.prefix("presign-parts") + "output.mp4"
        let partSize = 5 << 20
        let bytes = TestS3.bytes(partSize + 1_234_567, seed: 23)
        let uploadID = try await client.createMultipartUpload(key: key)
        var parts: [UploadedPart] = []
        for number in 1...2 {
            let slice = Array(bytes[(number - 1) * partSize..<min(number * partSize, bytes.count)])
            let path = try TestS3.file(slice)
            defer { unlink(path) }
            let presigned = try client.presign(.uploadPart(key: key, uploadID: uploadID, partNumber: number, sha256: S3ClientTests.sha256(slice)))
            // Other bytes through the same URL are refused: the part's SHA-256 is signed in.
            let wrongPath = try TestS3.file(slice.map { $0 ^ 0x55 })
            defer { unlink(wrongPath) }
            let wrong = try Self.curl(["-X", "PUT", "--data-binary", "@\(wrongPath)"] + Self.headers(presigned) + [presigned.url])
            #expect(wrong.status == 400 && wrong.body.contains("BadDigest"), "\(wrong)")
            #expect(try Self.curl(["-X", "PUT", "--data-binary", "@\(path)"] + Self.headers(presigned) + [presigned.url]).status == 200)
            // The ETag comes from ListParts (the coordinator's view, not the uploader's word).
            parts.append(UploadedPart(number: number, etag: "", size: Int64(slice.count), sha256: S3ClientTests.sha256(slice)))
        }
        let listed = try await client.listParts(key: key, uploadID: uploadID)
        #expect(listed.map(\.size) == parts.map(\.size))
        for index in parts.indices { parts[index].etag = listed[index].etag }
        try await client.completeMultipartUpload(key: key, uploadID: uploadID, parts: parts)
        let whole = try await client.getObject(key: key)
        #expect(Array(whole.bytes.readableBytesView) == bytes)
    }

    @Test("the server refuses an expired presigned URL")
    func expired() async throws {
        let key = TestS3.prefix("presign-expired") + "x"
        try await TestS3.client().putObject(key: key, bytes: [1, 2, 3])
        // Signed two hours ago, valid for one minute.
        let past = try await TestS3.client(now: { Date().addingTimeInterval(-7200) })
        let presigned = try past.presign(.getObject(key: key), expires: 60)
        let answer = try Self.curl([presigned.url])
        #expect(answer.status == 403 && answer.body.contains("AccessDenied") && answer.body.contains("expired"), "\(answer)")
        // The same request signed now passes: only the expiry differed.
        #expect(try Self.curl([try await TestS3.client().presign(.getObject(key: key), expires: 60).url]).status == 200)
    }

    @Test("the server refuses a presigned URL with a changed signature, key, method or expiry")
    func tampered() async throws {
        let client = try await TestS3.client()
        let prefix = TestS3.prefix("presign-tampered")
        try await client.putObject(key: prefix + "a", bytes: [1])
        try await client.putObject(key: prefix + "b", bytes: [2])
        let get = try client.presign(.getObject(key: prefix + "a"))
        #expect(try Self.curl([get.url]).status == 200)

        let signature = String(get.url.split(separator: "=").last!)
        let flipped = String(signature.prefix(10)) + (signature.dropFirst(10).first == "0" ? "1" : "0") + String(signature.dropFirst(11))
        var variants = [
            ("signature", [get.url.replacingOccurrences(of: signature, with: flipped)]),
            ("key", [get.url.replacingOccurrences(of: "/a?", with: "/b?")]),
            ("expiry", [get.url.replacingOccurrences(of: "X-Amz-Expires=900", with: "X-Amz-Expires=604800")]),
            ("method", ["-X", "PUT", "--data-binary", "x", get.url]),
        ]
        variants.append(("method DELETE", ["-X", "DELETE", get.url]))
        for (what, arguments) in variants {
            let answer = try Self.curl(arguments)
            #expect(answer.status == 403, "\(what): \(answer)")
        }
        #expect(try await client.headObject(key: prefix + "a")?.size == 1)
    }
}
