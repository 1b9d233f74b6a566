import Crypto
import NIOCore

/// A byte range of a local file as a request body, read 1 MiB at a time and hashed as it goes.
/// When the range is exhausted its SHA-256 must equal `expectedSHA256` (if given), else the
/// stream throws: a file that changed between hashing and sending is never sent as if whole
/// (the server refuses it too, through `x-amz-checksum-sha256`, but this names the cause).
struct FileBodyStream: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    static let chunkSize = 1 << 20

    let file: LocalFile
    let range: Range<Int64>
    let expectedSHA256: String?

    func makeAsyncIterator() -> Iterator { Iterator(stream: self, offset: range.lowerBound) }

    struct Iterator: AsyncIteratorProtocol {
        let stream: FileBodyStream
        var offset: Int64
        var hasher = SHA256()
        var finished = false

        init(stream: FileBodyStream, offset: Int64) { self.stream = stream; self.offset = offset }

        mutating func next() async throws -> ByteBuffer? {
            guard !finished else { return nil }
            guard offset < stream.range.upperBound else {
                finished = true
                if let expected = stream.expectedSHA256 {
                    let actual = SigV4Signer.hex(hasher.finalize())
                    guard actual == expected else {
                        throw ObjectStoreError(.integrity, "\(stream.file.path) bytes \(stream.range.lowerBound)..<\(stream.range.upperBound) "
                                               + "have SHA-256 \(actual), not \(expected): did the file change during the upload?")
                    }
                }
                return nil
            }
            let count = Int(Swift.min(Int64(FileBodyStream.chunkSize), stream.range.upperBound - offset))
            let buffer = try await stream.file.read(offset: offset, count: count)
            guard buffer.readableBytes == count else {
                throw ObjectStoreError(.integrity, "\(stream.file.path) ended at \(offset + Int64(buffer.readableBytes)) bytes, "
                                       + "before \(stream.range.upperBound): did the file shrink during the upload?")
            }
            buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            offset += Int64(count)
            return buffer
        }
    }
}
