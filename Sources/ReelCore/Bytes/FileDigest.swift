import Crypto
import Foundation

/// SHA-256 of bytes in memory or fed piece by piece, as lower-case hex. (Of a file, read from
/// disk: `FileDigest.sha256(path:)` in ReelMedia, since the core does no I/O.)
public enum FileDigest {
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

    /// A SHA-256 fed piece by piece: a ranged upload is hashed as its parts arrive, so checking
    /// it at the end costs nothing more than its last part.
    public struct Running: @unchecked Sendable {  // SHA256 is a plain value (its state is copied with it)
        private var hasher = SHA256()
        /// Bytes fed so far.
        public private(set) var byteCount: Int64 = 0

        public init() {}

        public mutating func update<Bytes: DataProtocol>(_ bytes: Bytes) {
            hasher.update(data: bytes)
            byteCount += Int64(bytes.count)
        }

        /// Lower-case hex of the digest of everything fed so far (feeding may continue).
        public var hex: String { FileDigest.hex(hasher.finalize()) }
    }
}
