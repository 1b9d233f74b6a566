import Foundation
import ReelCore

/// A batch's `manifest.json` and `manifest.csv` in their folder, each replaced whole on every
/// write (a temporary file, flushed, renamed over the old one), so a batch stopped at any
/// moment — Ctrl-C, a crash, SIGKILL — leaves the manifest as it was after some row finished,
/// never half written. Used from one task at a time.
final class ManifestFiles {
    let directory: String
    var manifest: BatchManifest

    init(directory: String, manifest: BatchManifest) {
        self.directory = directory; self.manifest = manifest
    }

    var jsonPath: String { Self.jsonPath(in: directory) }
    var csvPath: String { (directory as NSString).appendingPathComponent("manifest.csv") }

    static func jsonPath(in directory: String) -> String { (directory as NSString).appendingPathComponent("manifest.json") }

    /// Writes both files: JSON first, since resuming reads it.
    func write() throws {
        try Self.replace(jsonPath, with: manifest.json)
        try Self.replace(csvPath, with: manifest.csv)
    }

    private static func replace(_ path: String, with text: String) throws {
        let file = try OutputFile(path: path)
        try file.write(Array(text.utf8)[...])
        try file.commit()
    }

    /// The manifest a run before this one left in `directory`; nil when there is none.
    /// - Throws: `UserError` when the file is there but is not a manifest Reel reads (it is not
    ///   overwritten: it may be something else of the person's).
    static func previous(in directory: String) throws -> BatchManifest? {
        let path = jsonPath(in: directory)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else { throw UserError("cannot read \(path)") }
        switch BatchManifest.parse(Array(data)) {
        case .success(let manifest): return manifest
        case .failure(let error):
            throw UserError("\(path) is there but is not a batch manifest Reel can read (\(error)): move it away, or choose another folder with --manifest")
        }
    }
}

/// The size of the regular file at `path`; nil when there is none.
func regularFileSize(_ path: String) -> Int64? {
    var info = stat()
    guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
    return Int64(info.st_size)
}
