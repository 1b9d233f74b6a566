import Foundation
import ReelCore
import ReelObjectStore
import ReelProtocol

/// Follows one job until it is done, failed or cancelled (`submit --wait`, `reel render`) with
/// `STATUS job= wait=`: the coordinator answers the moment the job ends, or after `intervalSeconds`
/// with its progress, which is drawn on stderr. The coordinator going away (a restart,
/// its database restarting — the farm survives both) is retried through `ReconnectingClient`
/// for up to `RetryPolicy.window`. Used from one task at a time.
///
/// A job waits for its assets only until its submitter has uploaded them; one seen waiting
/// after that lost a stored source before it was split into tasks (the coordinator's error
/// says which). The waiter holds the files: it uploads them again (`reuploadAssets`; what the
/// coordinator still holds costs one request), at most `maximumReuploads` times, then gives
/// up with the coordinator's error. It never waits for ever on a job nobody will feed.
final class JobWaiter {
    let client: ReconnectingClient<OperatorClient>
    private let job: Int64
    private let quiet: Bool
    private let tty = Terminal.stderrIsTTY
    private let reuploadAssets: (() async throws -> Void)?

    /// How often a job's assets are uploaded again before the waiter gives up.
    static let maximumReuploads = 3

    /// How often progress is redrawn while the job runs (seconds: `STATUS wait=`). The end
    /// is not waited for: the coordinator answers when it comes.
    static let intervalSeconds = 1
    /// The least time between two requests when a reply comes back early without the job
    /// having ended (a coordinator that answers at once): never a busy loop.
    static let minimumSpacing: Duration = .milliseconds(200)

    /// - Parameter reuploadAssets: uploads the job's assets again; nil: a job found waiting for
    ///   its assets is an error at once.
    init(client: ReconnectingClient<OperatorClient>, job: Int64, quiet: Bool, reuploadAssets: (() async throws -> Void)? = nil) {
        self.client = client; self.job = job; self.quiet = quiet; self.reuploadAssets = reuploadAssets
    }

    /// Follows the job until it reaches a final state and returns that status. Cancelling the
    /// calling task (`reel render` on Ctrl-C) ends it after the request in flight, within
    /// `intervalSeconds`.
    func waitUntilFinished() async throws -> JobStatus {
        var lastLine = ""
        var lastPrinted = Date.distantPast
        var waitSeconds = 0  // the first answer at once, to show where the job stands
        var reuploads = 0
        var lastNotice: String?
        while true {
            let asked = ContinuousClock.now
            let status = try await pollOnce(waitSeconds: waitSeconds)
            // A held request does not notice cancellation: look after each one.
            try Task.checkCancellation()
            waitSeconds = Self.intervalSeconds
            if status.state == "waiting_for_assets" {
                let why = status.error ?? "some of its sources are missing from the coordinator's storage"
                guard let reuploadAssets, reuploads < Self.maximumReuploads else {
                    if tty && !quiet { FileHandle.standardError.write(Data("\n".utf8)) }
                    throw UserError("job \(job) waits for its assets: \(why)"
                                    + (reuploads > 0 ? " (still, after uploading them again \(reuploads) times)" : ""))
                }
                reuploads += 1
                if !quiet { Terminal.error((tty ? "\r\u{1B}[K" : "") + "job \(job) waits for its assets again (\(why.escapingControlCharacters)); uploading them again") }
                try await reuploadAssets()
                waitSeconds = 0
                continue
            }
            let finished = ClientFormatting.finishedStates.contains(status.state)
            // A budget pause does not end by itself: say so once per pause, on a line of its own.
            let notice = ClientFormatting.budgetPauseNotice(status)
            if let notice, notice != lastNotice, !quiet { Terminal.error((tty ? "\r\u{1B}[K" : "") + notice) }
            lastNotice = notice
            if !quiet {
                let line = ClientFormatting.progressLine(status)
                if tty {
                    FileHandle.standardError.write(Data(("\r\u{1B}[K" + line + (finished ? "\n" : "")).utf8))
                } else if finished || (line != lastLine && Date().timeIntervalSince(lastPrinted) >= 5) {
                    // Logs get a line when something changed, at most every 5 s.
                    Terminal.error(line)
                    lastPrinted = Date()
                }
                lastLine = line
            }
            if finished { return status }
            let early = asked + Self.minimumSpacing
            if ContinuousClock.now < early { try await Task.sleep(until: early) }
        }
    }

    private func pollOnce(waitSeconds: Int) async throws -> JobStatus {
        let job = job
        let (report, _) = try await client.perform { try await $0.status(job: job, waitSeconds: waitSeconds) }
        guard let status = report.jobs.first(where: { $0.id == job }) else {
            throw UserError("the coordinator no longer knows job \(job)")
        }
        return status
    }
}

/// Downloads a finished job's output with `OUTPUT` in ranges into `path` (temporary name,
/// fsync, rename). Each range is one retried request: after a reconnection the download
/// continues at the first byte it does not hold, and the partial file keeps what it has.
enum OutputDownload {
    static func run(job: Int64, to path: String, via client: ReconnectingClient<OperatorClient>, quiet: Bool) async throws {
        guard !HLSOutput.isFolder(path) else {
            // An HLS job's output is an archive of its folder (proto/PROTOCOL.md §4.6): downloaded
            // beside the folder like any output, then unpacked into place, master playlist last.
            let url = URL(fileURLWithPath: path)
            let archive = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).reel-archive-\(getpid())").path
            defer { unlink(archive) }
            try await download(job: job, to: archive, via: client, quiet: quiet)
            do { try LadderArchive.installFolder(archive: archive, masterPath: path) } catch {
                throw UserError("cannot write job \(job)'s HLS folder beside \(path): \(error)")
            }
            return
        }
        if let frames = HLSOutput.frameSequence(path) {
            // A PNG sequence's output is an archive of its frames (proto/PROTOCOL.md §4.7),
            // unpacked under the names `-o DIR/frame-%05d.png` gives.
            let archive = frames.directory + "/.reel-frames-archive-\(getpid())"
            defer { unlink(archive) }
            try await download(job: job, to: archive, via: client, quiet: quiet)
            do { try HLSOutput.installFrames(archive: archive, as: frames) } catch {
                throw UserError("cannot write job \(job)'s PNG sequence as \(path): \(error)")
            }
            return
        }
        try await download(job: job, to: path, via: client, quiet: quiet)
    }

    private static func download(job: Int64, to path: String, via client: ReconnectingClient<OperatorClient>, quiet: Bool) async throws {
        if try await direct(job: job, to: path, via: client, quiet: quiet) { return }
        let file = try OutputFile(path: path)
        var cursor = DownloadCursor()
        var progress: TransferProgress?
        repeat {
            let offset = cursor.offset
            let range = try await client.perform { try await $0.outputRange(job: job, offset: offset) }
            try cursor.accept(at: range.at, total: range.total, count: range.bytes.count, job: job)
            try file.write(range.bytes[...])
            if progress == nil { progress = TransferProgress(label: "download", total: range.total, quiet: quiet) }
            progress?.update(cursor.offset)
        } while !cursor.isComplete
        try file.commit()
    }

    /// With an object store: downloads the output through a presigned GET (`OUTPUTURL`, asked for
    /// again once if refused as expired), written aside, checked for size and renamed into place.
    /// - Returns: `false` when the coordinator hands out no URLs (download with `OUTPUT` instead).
    static func direct(job: Int64, to path: String, via client: ReconnectingClient<OperatorClient>, quiet: Bool) async throws -> Bool {
        for attempt in 0..<2 {
            guard let url = try await client.perform({ try await $0.outputURL(job: job) }) else { return false }
            let progress = TransferProgress(label: "download", total: url.total, quiet: quiet)
            do {
                let got = try await OperatorClient.transfer.download(url: url.url, headers: url.headers, to: path)
                guard got.size == url.total else {
                    unlink(path)
                    throw UserError("job \(job)'s output came down as \(got.size) bytes, not \(url.total); fetch it again")
                }
                progress.update(got.size)
                return true
            } catch let error as ObjectStoreError where error.code == .accessDenied && attempt == 0 {
                continue
            } catch let error as ObjectStoreError {
                throw UserError("cannot download job \(job)'s output from the object store: \(error.message)")
            }
        }
        throw UserError("the object store refused two presigned downloads of job \(job)'s output in a row; fetch it again")
    }
}

/// An HLS output (`-o DIR/master.m3u8`) is a folder of files rather than one file, and so is a
/// PNG sequence (`-o DIR/frame-%05d.png`).
enum HLSOutput {
    static func isFolder(_ path: String) -> Bool { path.lowercased().hasSuffix(".m3u8") }

    /// The frame names of `-o DIR/frame-%05d.png`; nil for any other output.
    static func frameSequence(_ path: String) -> FrameSequenceName? {
        path.lowercased().hasSuffix(".png") ? FrameSequenceName(path) : nil
    }

    /// Writes the frames of a PNG sequence job's output archive (`FrameSequenceName.archive`
    /// names, frame order) under `frames`' names: each to a hidden name first, then renamed,
    /// so a frame's name only ever holds a whole file.
    static func installFrames(archive: String, as frames: FrameSequenceName) throws {
        let members = try LadderArchive.members(of: archive)
        for (index, member) in members.enumerated() {
            guard FrameSequenceName.archive.number(ofFileName: member.name) == index + 1 else {
                throw LadderArchive.Failure("\(archive) holds \(member.name) as frame \(index + 1): it is not a PNG sequence's output")
            }
            let target = frames.path(number: index + 1)
            let partial = frames.directory + "/.\(frames.fileName(number: index + 1)).reel-partial-\(getpid())"
            try LadderArchive.extract(member, from: archive, to: partial)
            guard rename(partial, target) == 0 else {
                unlink(partial)
                throw LadderArchive.Failure("cannot move \(partial) to \(target): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Makes DIR of `-o DIR/master.m3u8` or `-o DIR/frame-%05d.png` when it is missing (any
    /// other output: nothing).
    static func makeFolder(for path: String) throws {
        guard isFolder(path) || frameSequence(path) != nil else { return }
        do {
            try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path,
                                                    withIntermediateDirectories: true)
        } catch {
            throw UserError("cannot make the folder of \(path): \(error.localizedDescription)")
        }
    }
}
