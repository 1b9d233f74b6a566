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
    /// For a video chunk of an HLS ladder: the rendition it holds (`PlannedRendition.name`);
    /// nil for every other result.
    public var rendition: String?

    public init(kind: Kind, frames: FrameRange, path: String, byteCount: Int, sha256: String, rendition: String? = nil) {
        self.kind = kind; self.frames = frames; self.path = path; self.byteCount = byteCount; self.sha256 = sha256
        self.rendition = rendition
    }

    /// Describes the file at `path` (size and checksum read from disk).
    public static func measuring(kind: Kind, frames: FrameRange, path: String, rendition: String? = nil) throws -> ChunkArtifact {
        let (count, digest) = try FileDigest.sha256(path: path)
        return ChunkArtifact(kind: kind, frames: frames, path: path, byteCount: count, sha256: digest, rendition: rendition)
    }
}
