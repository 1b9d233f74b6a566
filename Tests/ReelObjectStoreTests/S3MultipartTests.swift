import Crypto
import Foundation
import NIOCore
import ReelObjectStore
import Synchronization
import Testing

/// Multipart uploads against a real S3-compatible server: a file larger than a part goes up in
/// parts, and an interrupted upload resumes from the parts the server already holds.
@Suite(.enabled(if: TestS3.isConfigured, TestS3.skipReason))
struct S3MultipartTests {
    static let partSize = 5 << 20

    @Test("a 12 MB file goes up as three parts of at most 5 MiB and comes back byte for byte")
    func multipartUpload() async throws {
        let client = try await TestS3.client(partSize: Self.partSize)
        let key = TestS3.prefix("multipart") + "output.mp4"
        let bytes = TestS3.bytes(12_000_000, seed: 11)
        let path = try TestS3.file(bytes)
        defer { unlink(path) }
        let digest = S3ClientTests.sha256(bytes)
        let created = Mutex<[String]>([])

        let result = try await client.uploadFile(at: path, key: key, sha256: digest) { id in created.withLock { $0.append(id) } }
        #expect(result.uploadID != nil && created.withLock { $0 } == [result.uploadID!])
        #expect(result.partsUploaded == 3 && result.partsReused == 0)
        #expect(result.size == 12_000_000 && result.sha256 == digest)
        #expect(result.etag.hasSuffix("-3\""))

        let info = try #require(try await client.headObject(key: key))
        #expect(info.size == 12_000_000)
        let target = path + ".down"
        defer { unlink(target) }
        #expect(try await client.download(key: key, to: target, expectedSHA256: digest).size == 12_000_000)
        // The part boundaries hold the right bytes.
        for boundary in [Int64(Self.partSize), Int64(2 * Self.partSize)] {
            let around = try await client.getObject(key: key, range: boundary - 3..<boundary + 3)
            #expect(Array(around.bytes.readableBytesView) == Array(bytes[Int(boundary) - 3..<Int(boundary) + 3]))
        }
        #expect(try await client.listMultipartUploads(prefix: key).isEmpty)
    }

    @Test("an upload interrupted after two parts resumes from them: only the rest is sent")
    func resumeAfterCrash() async throws {
        let client = try await TestS3.client(partSize: Self.partSize)
        let key = TestS3.prefix("resume") + "big.mov"
        let bytes = TestS3.bytes(17_000_000, seed: 5)  // four parts: 5, 5, 5 and 2 MiB-ish
        let path = try TestS3.file(bytes)
        defer { unlink(path) }
        let digest = S3ClientTests.sha256(bytes)

        // The first run: create the upload, send parts 1 and 2, then "crash" (nothing completes,
        // and the upload id survives only where the uploader recorded it).
        let uploadID = try await client.createMultipartUpload(key: key)
        for number in 1...2 {
            let start = (number - 1) * Self.partSize
            _ = try await client.uploadPart(key: key, uploadID: uploadID, number: number,
                                            bytes: ByteBuffer(bytes: bytes[start..<start + Self.partSize]))
        }
        #expect(try await client.headObject(key: key) == nil)
        let listed = try await client.listParts(key: key, uploadID: uploadID)
        #expect(listed.map(\.number) == [1, 2])
        #expect(listed.allSatisfy { $0.size == Int64(Self.partSize) })
        // The upload can be found by its key even if its id was lost.
        #expect(try await client.listMultipartUploads(prefix: key).map(\.uploadID).contains(uploadID))

        // The second run resumes it.
        let result = try await client.uploadFile(at: path, key: key, sha256: digest, resuming: uploadID)
        #expect(result.partsReused == 2 && result.partsUploaded == 2)
        #expect(result.sha256 == digest && result.uploadID == uploadID)
        let target = path + ".down"
        defer { unlink(target) }
        #expect(try await client.download(key: key, to: target, expectedSHA256: digest).size == Int64(bytes.count))
        await #expect { _ = try await client.listParts(key: key, uploadID: uploadID) } throws: { error in
            (error as? ObjectStoreError)?.code == .notFound
        }
    }

    @Test("a part on the server that differs from the file is sent again, not trusted")
    func damagedPartIsReplaced() async throws {
        let client = try await TestS3.client(partSize: Self.partSize)
        let key = TestS3.prefix("resume-damaged") + "big.mov"
        let bytes = TestS3.bytes(11_000_000, seed: 9)
        let path = try TestS3.file(bytes)
        defer { unlink(path) }
        let uploadID = try await client.createMultipartUpload(key: key)
        var wrong = Array(bytes[0..<Self.partSize])
        wrong[12345] ^= 0xFF
        _ = try await client.uploadPart(key: key, uploadID: uploadID, number: 1, bytes: ByteBuffer(bytes: wrong))

        let result = try await client.uploadFile(at: path, key: key, sha256: S3ClientTests.sha256(bytes), resuming: uploadID)
        #expect(result.partsReused == 0 && result.partsUploaded == 3)
        let got = try await client.getObject(key: key, range: 12_340..<12_350)
        #expect(Array(got.bytes.readableBytesView) == Array(bytes[12_340..<12_350]))
    }

    @Test("a file whose SHA-256 is not the declared one aborts its upload: nothing is stored")
    func wrongDigestAborts() async throws {
        let client = try await TestS3.client(partSize: Self.partSize)
        let key = TestS3.prefix("multipart-wrong") + "x"
        let path = try TestS3.file(TestS3.bytes(6_000_000, seed: 2))
        defer { unlink(path) }
        await #expect { _ = try await client.uploadFile(at: path, key: key, sha256: String(repeating: "a", count: 64)) } throws: { error in
            (error as? ObjectStoreError)?.code == .integrity
        }
        #expect(try await client.headObject(key: key) == nil)
        #expect(try await client.listMultipartUploads(prefix: key).isEmpty)
    }

    @Test("an aborted upload is gone, and aborting it again is no error")
    func abort() async throws {
        let client = try await TestS3.client(partSize: Self.partSize)
        let key = TestS3.prefix("abort") + "x"
        let uploadID = try await client.createMultipartUpload(key: key)
        _ = try await client.uploadPart(key: key, uploadID: uploadID, number: 1, bytes: ByteBuffer(bytes: TestS3.bytes(1000)))
        try await client.abortMultipartUpload(key: key, uploadID: uploadID)
        #expect(try await client.listMultipartUploads(prefix: key).isEmpty)
        try await client.abortMultipartUpload(key: key, uploadID: uploadID)
        #expect(try await client.headObject(key: key) == nil)
    }

    @Test("a file no larger than one part goes up with one PUT")
    func smallFileIsOnePut() async throws {
        let client = try await TestS3.client(partSize: Self.partSize)
        let key = TestS3.prefix("small") + "x"
        let bytes = TestS3.bytes(Self.partSize, seed: 4)
        let path = try TestS3.file(bytes)
        defer { unlink(path) }
        let result = try await client.uploadFile(at: path, key: key)
        #expect(result.uploadID == nil && result.partsUploaded == 1)
        #expect(try await client.headObject(key: key)?.sha256 == S3ClientTests.sha256(bytes))
    }
}
