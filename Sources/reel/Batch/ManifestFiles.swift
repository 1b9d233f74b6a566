import Foundation
import ReelCore

/// A batch's `manifest.json` and `manifest.csv` in their folder, each replaced whole on every
/// write (a temporary file, flushed, renamed over the old one), so a batch stopped at any
/// moment — Ctrl-C, a crash, SIGKILL — leaves the manifest as it was after some row finished,
/// never half written.
///
/// Written again as each row finishes (`record`), unless rows finish faster than the files can
/// be rewritten: a manifest of thousands of rows takes a while to write, and rewriting it for
/// every row would cost more than the rows. Then the next write waits until `writeSpacing`
/// times the last write's duration has passed since it (a timer writes what is waiting), so at
/// most about 5 % of the time goes into the manifest, and a killed batch loses at most the rows
/// finished in that last short while (they render again). A small manifest takes milliseconds:
/// it is written for every row that does not finish within milliseconds of the one before.
actor ManifestFiles {
    let directory: String
    private(set) var manifest: BatchManifest
    /// Entries changed since the last write.
    private var dirty = false
    private var lastWrite: (end: ContinuousClock.Instant, took: Duration)?
    private var scheduled: Task<Void, Never>?
    /// What a write started by the timer threw, thrown by the next `record` or `finish`.
    private var failure: (any Error)?

    /// How many times the last write's duration passes before the next write.
    let writeSpacing: Int

    init(directory: String, manifest: BatchManifest, writeSpacing: Int = 20) {
        self.directory = directory; self.manifest = manifest; self.writeSpacing = writeSpacing
    }

    nonisolated var jsonPath: String { Self.jsonPath(in: directory) }
    nonisolated var csvPath: String { (directory as NSString).appendingPathComponent("manifest.csv") }

    static func jsonPath(in directory: String) -> String { (directory as NSString).appendingPathComponent("manifest.json") }

    /// Writes both files now: JSON first, since resuming reads it.
    func write() throws {
        let start = ContinuousClock.now
        try Self.replace(jsonPath, with: manifest.json)
        try Self.replace(csvPath, with: manifest.csv)
        let end = ContinuousClock.now
        lastWrite = (end, end - start)
        dirty = false
    }

    /// Sets entry `index` and writes the files, now or (when rows finish faster than they can
    /// be written) a little later.
    func record(_ entry: BatchManifest.Entry, at index: Int) throws {
        if let failure { throw failure }
        manifest.entries[index] = entry
        dirty = true
        guard let last = lastWrite else { return try write() }
        let due = last.end + last.took * writeSpacing
        if ContinuousClock.now >= due { return try write() }
        guard scheduled == nil else { return }
        scheduled = Task {
            try? await Task.sleep(until: due, clock: .continuous)
            await self.writeScheduled()
        }
    }

    private func writeScheduled() {
        scheduled = nil
        guard dirty else { return }
        do { try write() } catch { failure = error }
    }

    /// Writes what is still waiting; throws what a timer's write threw.
    func finish() throws {
        scheduled?.cancel()
        scheduled = nil
        if let failure { throw failure }
        if dirty { try write() }
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
