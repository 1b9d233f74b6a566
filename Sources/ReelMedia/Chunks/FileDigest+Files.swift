import Foundation
import ReelCore

extension FileDigest {
    /// A file that cannot be read to hash it.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// SHA-256 of the file at `path`, streamed in 1 MiB blocks, and its length.
    public static func sha256(path: String) throws -> (byteCount: Int, hex: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw Failure(description: "cannot open \(path) to checksum it")
        }
        defer { try? handle.close() }
        var running = Running()
        while let block = try handle.read(upToCount: 1 << 20), !block.isEmpty { running.update(block) }
        return (Int(running.byteCount), running.hex)
    }
}
