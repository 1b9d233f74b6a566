import Crypto
import Foundation
import ReelCore

/// A rendered task result on disk: a video chunk (frames `frames` of the plan, video only,
/// chunk-local timestamps from 0) or the audio of the whole composition.
public struct ChunkArtifact: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable { case video, audio }
    public var kind: Kind
    /// For video: the plan's frames this chunk holds. For audio: the whole composition.
    public var frames: FrameRange
    public var path: String
    public var byteCount: Int
    /// Lower-case hex SHA-256 of the file's bytes.
    public var sha256: String

    public init(kind: Kind, frames: FrameRange, path: String, byteCount: Int, sha256: String) {
        self.kind = kind; self.frames = frames; self.path = path; self.byteCount = byteCount; self.sha256 = sha256
    }

    /// Describes the file at `path` (size and checksum read from disk).
    public static func measuring(kind: Kind, frames: FrameRange, path: String) throws -> ChunkArtifact {
        let (count, digest) = try FileDigest.sha256(path: path)
        return ChunkArtifact(kind: kind, frames: frames, path: path, byteCount: count, sha256: digest)
    }
}

/// SHA-256 of a file, streamed in 1 MiB blocks, or of bytes in memory, as lower-case hex.
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

    public static func sha256(path: String) throws -> (byteCount: Int, hex: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw RenderError.io("cannot open \(path) to checksum it")
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        var count = 0
        while let block = try handle.read(upToCount: 1 << 20), !block.isEmpty {
            hasher.update(data: block)
            count += block.count
        }
        return (count, hex(hasher.finalize()))
    }
}
