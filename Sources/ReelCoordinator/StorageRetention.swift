import Foundation

/// How long the coordinator keeps what it stores. Pure data; `StorageSweep` decides with it.
///
/// - Outputs of done jobs: deleted `keepOutputsSeconds` after the job finished (`nil`: never).
/// - Chunk results: kept while a job may still use them — unfinished jobs, and failed or
///   cancelled jobs within the outputs' retention (a `reel retry` reuses their done chunks) —
///   and, for reuse by later edits of the same composition (docs/incremental-rendering.md),
///   `keepChunksSeconds` after a done job finished. A result deleted here is simply rendered
///   again if a job ever needs it (the finaliser re-queues a missing chunk): results are a
///   cache, not a record.
/// - Assets: kept while a job may still use them (same rule, any job state), so resubmitting a
///   recent composition uploads nothing; `reel delete` releases a job's assets at once.
/// - Files nobody references are deleted only once older than `unreferencedGraceSeconds`, so a
///   result or asset written just before its row (upload → rename → record) is never raced.
/// - Abandoned `.partial` uploads and leftovers in `tmp/`: deleted after `uploadGraceSeconds`;
///   a partial result upload as soon as its lease is gone (it can never complete).
public struct RetentionPolicy: Hashable, Sendable {
    /// Default 7 days: long enough to fetch a weekend's renders, short enough to bound the disk.
    public var keepOutputsSeconds: Double?
    /// How long a done job's chunks stay reusable after it finished (`nil`: forever). Default
    /// one day: a day's edits and renders reuse each other's chunks, and the disk holds at most
    /// a day of chunks beside the outputs (the chunks of a job weigh about what its output does).
    public var keepChunksSeconds: Double?
    public var uploadGraceSeconds: Double
    public var unreferencedGraceSeconds: Double

    public init(keepOutputsSeconds: Double? = 7 * 86_400, keepChunksSeconds: Double? = 86_400,
                uploadGraceSeconds: Double = 86_400, unreferencedGraceSeconds: Double = 3_600) {
        self.keepOutputsSeconds = keepOutputsSeconds; self.keepChunksSeconds = keepChunksSeconds
        self.uploadGraceSeconds = uploadGraceSeconds; self.unreferencedGraceSeconds = unreferencedGraceSeconds
    }

    /// Jobs that ended before this instant (ms) no longer need their files; `nil`: keep forever.
    public func endedCutoffMillis(nowMillis: Int64) -> Int64? {
        keepOutputsSeconds.map { nowMillis - Int64($0 * 1000) }
    }

    /// Done jobs that finished before this instant (ms) keep no chunks; `nil`: all keep them.
    public func doneChunksCutoffMillis(nowMillis: Int64) -> Int64? {
        keepChunksSeconds.map { nowMillis - Int64($0 * 1000) }
    }
}

/// A file in one of the storage directories, as the sweep sees it.
public struct StoredFile: Hashable, Sendable {
    public var name: String
    public var modifiedMillis: Int64
    public init(name: String, modifiedMillis: Int64) { self.name = name; self.modifiedMillis = modifiedMillis }
}

/// The sweep's decisions, pure: given directory listings, what the database says is still
/// needed, and `now`, which files go. The `StorageSweeper` lists, asks and deletes.
public enum StorageSweep {
    /// `results/<sha256>` files no job needs, older than the unreferenced grace.
    public static func resultsToDelete(_ files: [StoredFile], needed: Set<String>, nowMillis: Int64, policy: RetentionPolicy) -> [String] {
        let cutoff = nowMillis - Int64(policy.unreferencedGraceSeconds * 1000)
        return files.filter { isHash($0.name) && !needed.contains($0.name) && $0.modifiedMillis < cutoff }.map(\.name).sorted()
    }

    /// In `assets/`: stored assets no job needs (older than the unreferenced grace; the store
    /// re-checks each before its file goes) and `.partial` uploads untouched for the upload grace.
    public static func assetsToDelete(_ files: [StoredFile], needed: Set<String>, nowMillis: Int64,
                                      policy: RetentionPolicy) -> (unneeded: [String], abandonedUploads: [String]) {
        let unreferencedCutoff = nowMillis - Int64(policy.unreferencedGraceSeconds * 1000)
        let uploadCutoff = nowMillis - Int64(policy.uploadGraceSeconds * 1000)
        var unneeded: [String] = [], abandoned: [String] = []
        for file in files {
            if file.name.hasSuffix(".partial"), isHash(String(file.name.dropLast(8))) {
                if file.modifiedMillis < uploadCutoff { abandoned.append(file.name) }
            } else if isHash(file.name), !needed.contains(file.name), file.modifiedMillis < unreferencedCutoff {
                unneeded.append(file.name)
            }
        }
        return (unneeded.sorted(), abandoned.sorted())
    }

    /// In `results/`: partial result uploads (`<task>-<epoch>-<sha256>.partial`) that can never
    /// complete, because their task is not leased under their epoch (`leased`: task → epoch of
    /// the tasks leased now), or untouched for the upload grace whatever their lease.
    public static func abandonedResultUploads(_ files: [StoredFile], leased: [Int64: Int64], nowMillis: Int64,
                                              policy: RetentionPolicy) -> [String] {
        let uploadCutoff = nowMillis - Int64(policy.uploadGraceSeconds * 1000)
        return files.filter { file in
            guard let upload = CoordinatorStorage.partialResult(named: file.name) else { return false }
            return leased[upload.task] != upload.epoch || file.modifiedMillis < uploadCutoff
        }.map(\.name).sorted()
    }

    /// Leftovers in `tmp/` (a crash mid-upload of a result) untouched for the upload grace.
    public static func temporariesToDelete(_ files: [StoredFile], nowMillis: Int64, policy: RetentionPolicy) -> [String] {
        let cutoff = nowMillis - Int64(policy.uploadGraceSeconds * 1000)
        return files.filter { $0.modifiedMillis < cutoff }.map(\.name).sorted()
    }

    /// Only names of the content-addressed form are ever deleted: anything else in a storage
    /// directory was put there by someone else and is left alone.
    static func isHash(_ name: String) -> Bool { CoordinatorStorage.isValidHash(name) }
}

/// Durations on the command line: `90` or `90s`, `30m`, `12h`, `7d`.
public enum DurationText {
    /// Seconds, or `nil` when `text` is not a non-negative duration.
    public static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        var number = Substring(text.trimmingCharacters(in: .whitespaces)), scale = 1.0
        if let last = number.last, let unit = units[last] { scale = unit; number = number.dropLast() }
        guard !number.isEmpty, number.allSatisfy({ $0.isNumber || $0 == "." }), let value = Double(number), value >= 0, value.isFinite else {
            return nil
        }
        return value * scale
    }

    /// A retention: a duration, or `0` / `forever` for "keep" (`.some(nil)`); `nil` if invalid.
    public static func retention(_ text: String) -> Double?? {
        if text == "forever" { return .some(nil) }
        guard let seconds = seconds(text) else { return nil }
        return .some(seconds == 0 ? nil : seconds)
    }
}
