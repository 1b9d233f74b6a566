import Foundation
import ReelCore
import Synchronization
@testable import ReelKernels
@testable import ReelMedia

/// A `ByteRangeSource` over a local file that counts the bytes it hands out, and can be made
/// to fail from a given offset on (to stand in for a broken connection).
final class CountingFileSource: ByteRangeSource, Sendable {
    struct Broken: Error, CustomStringConvertible {
        var offset: Int64
        var description: String { "test source: connection lost at byte \(offset)" }
    }

    let size: Int64
    private let fd: Int32
    /// Bytes delivered and `read` calls that delivered them.
    private let counts = Mutex<(bytes: Int64, calls: Int)>((0, 0))
    /// Reads that touch bytes at or after this offset throw `Broken`.
    let failFrom: Int64?

    init(path: String, failFrom: Int64? = nil) throws {
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CocoaError(.fileNoSuchFile) }
        size = Int64(lseek(fd, 0, SEEK_END))
        self.failFrom = failFrom
    }

    deinit { close(fd) }

    /// Bytes returned by `read` so far.
    var bytesRead: Int64 { counts.withLock { $0.bytes } }
    var readCalls: Int { counts.withLock { $0.calls } }

    func read(offset: Int64, count: Int, into buffer: UnsafeMutableRawPointer) throws -> Int {
        let n = min(Int64(count), max(0, size - offset))
        if let failFrom, n > 0, offset + n > failFrom { throw Broken(offset: max(offset, failFrom)) }
        guard n > 0 else { return 0 }
        let got = pread(fd, buffer, Int(n), off_t(offset))
        guard got >= 0 else { throw CocoaError(.fileReadUnknown) }
        counts.withLock { $0.bytes += Int64(got); $0.calls += 1 }
        return got
    }
}

/// Helpers shared by the remote-media tests.
enum RemoteFixtures {
    /// A fresh URL in the content-addressed scheme.
    static func uniqueURL() -> String {
        MediaSources.url(forContentHash: UUID().uuidString.lowercased().filter { $0 != "-" })
    }

    /// Media read through `source`, as an agent reads an asset it fetches in ranges.
    static func location(_ source: any ByteRangeSource) -> MediaLocation {
        .byteRanges(source, name: uniqueURL())
    }

    /// Every visible byte of a YUV image, plane by plane (strides excluded).
    static func bytes(_ image: YUVImage) -> [UInt8] {
        var out: [UInt8] = []
        for plane in [image.y, image.u, image.v] + (image.a.map { [$0] } ?? []) {
            for r in 0..<plane.height { out += UnsafeBufferPointer(start: plane.row(r), count: plane.width) }
        }
        return out
    }

    /// A 20 s 640x360 clip with AAC audio, GOP 2 s, twice: index first and index at the end.
    /// Made once per test process (encoding it is the slow part).
    static let longClips: Result<(faststart: String, moovAtEnd: String), Error> = Result {
        let dir = try TestMedia.tempDirectory()
        let moovAtEnd = dir.appendingPathComponent("long-moov-at-end.mp4").path
        let faststart = dir.appendingPathComponent("long-faststart.mp4").path
        try TestMedia.run(["-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=20",
                           "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=20",
                           "-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-pix_fmt", "yuv420p",
                           "-c:a", "aac", "-b:a", "96k", moovAtEnd])
        try TestMedia.run(["-i", moovAtEnd, "-c", "copy", "-movflags", "+faststart", faststart])
        return (faststart, moovAtEnd)
    }
}
