import Crypto
import Foundation

/// SHA-256 of a file, streamed in 1 MiB blocks, or of bytes in memory, as lower-case hex.
public enum FileDigest {
    /// A file that cannot be read to hash it.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public static func sha256(bytes: [UInt8]) -> String {
        hex(SHA256.hash(data: bytes))
    }

    /// Lower-case hex of `bytes`. By table, not `String(format:)`, which cost the coordinator a
    /// tenth of its CPU when it checked every chunk of a long job.
    public static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    public static func sha256(path: String) throws -> (byteCount: Int, hex: String) {
        let running = try Running(path: path)
        return (Int(running.byteCount), running.hex)
    }

    /// A SHA-256 fed piece by piece: a ranged upload is hashed as its parts arrive, so checking
    /// it at the end costs nothing more than its last part.
    public struct Running: @unchecked Sendable {  // SHA256 is a plain value (its state is copied with it)
        private var hasher = SHA256()
        /// Bytes fed so far.
        public private(set) var byteCount: Int64 = 0

        public init() {}

        /// The digest of the file at `path` so far, read in 1 MiB blocks (to resume hashing a
        /// partial file whose running digest was lost, e.g. with a restarted process).
        public init(path: String) throws {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw Failure(description: "cannot open \(path) to checksum it")
            }
            defer { try? handle.close() }
            while let block = try handle.read(upToCount: 1 << 20), !block.isEmpty {
                hasher.update(data: block)
                byteCount += Int64(block.count)
            }
        }

        public mutating func update(_ bytes: [UInt8]) {
            hasher.update(data: bytes)
            byteCount += Int64(bytes.count)
        }

        /// Lower-case hex of the digest of everything fed so far (feeding may continue).
        public var hex: String { FileDigest.hex(hasher.finalize()) }
    }
}
