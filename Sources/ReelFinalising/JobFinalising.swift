import Foundation
import ReelCore
import ReelMedia
import ReelProtocol
import ReelScheduling

/// Why a job's results cannot be finalised (besides `Finaliser`'s own failures).
public struct FinaliseError: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}

/// The finalise step itself, shared by whoever runs it: the coordinator's `FinaliserLoop`
/// (local-directory storage, or no connected agent can finalise) and an agent running a
/// finalise task (object storage; proto/PROTOCOL.md §4.5.1). Given a job's verified results as
/// local files, it writes the job's output file and says what it made.
public enum JobFinalising {
    /// One of the job's done render tasks' results, as a local file.
    public struct Input: Sendable {
        public var kind: TaskKind
        /// The chunk's frames (ignored for audio, which spans the whole composition).
        public var frames: FrameRange
        public var path: String
        public var size: Int64
        public var sha256: String
        /// An HLS ladder chunk's archive: the renditions to take from it (members
        /// `<name>.mp4`); nil: it holds every rendition of the ladder, in order. A chunk's
        /// renditions may come from several archives (incremental re-rendering per rendition).
        public var renditions: [String]?
        public init(kind: TaskKind, frames: FrameRange, path: String, size: Int64, sha256: String, renditions: [String]? = nil) {
            self.kind = kind; self.frames = frames; self.path = path; self.size = size; self.sha256 = sha256
            self.renditions = renditions
        }
    }

    /// What a finalise made: `Finaliser`'s report, and the output file's size and SHA-256 (hex).
    public struct Outcome: Sendable {
        public var report: Finaliser.Report
        public var size: Int64
        public var sha256: String
        /// The job's loudness line (events, `reel status`): every audio output's figures,
        /// labelled by output (`LoudnessReport.summary(of:outputs:)`); nil without normalisation.
        public var loudnessSummary: String?
    }

    /// Joins `inputs` into `output` (atomically): `Finaliser.finalise`, or for an HLS ladder
    /// `finaliseLadder` into one ladder archive. Blocking: run it off the cooperative pool.
    public static func finalise(_ plan: RenderPlan, inputs: [Input], to output: String) throws -> Outcome {
        var chunks: [ChunkArtifact] = []
        var holding: [[String]?] = []
        var audio: ChunkArtifact?
        for input in inputs {
            guard input.kind != .finalise else { throw FinaliseError(description: "a finalise task is not an input") }
            let artifact = ChunkArtifact(kind: input.kind == .audio ? .audio : .video,
                                         frames: input.kind == .audio ? FrameRange(start: 0, end: plan.frameCount) : input.frames,
                                         path: input.path, byteCount: Int(input.size), sha256: input.sha256)
            if input.kind == .audio { audio = artifact } else { chunks.append(artifact); holding.append(input.renditions) }
        }
        let report = plan.export.ladder != nil
            ? try finaliseLadder(plan, chunks: chunks, holding: holding, audio: audio, to: output)
            : plan.export.fileType == .png ? try finaliseFrameSequence(plan, chunks: chunks, to: output)
            : try Finaliser.finalise(plan, chunks: chunks, audio: audio, to: output)
        let digest = try FileDigest.sha256(path: output)
        return Outcome(report: report, size: Int64(digest.byteCount), sha256: digest.hex,
                       loudnessSummary: LoudnessReport.summary(of: report.loudness, outputs: plan.export.audioOutputs))
    }

    /// The poster of a job none was made for: the output's last frame as a small JPEG; nil
    /// when the job has no picture or is a ladder or a PNG sequence (its output is an archive).
    public static func posterFromOutput(_ output: String, plan: RenderPlan) throws -> [UInt8]? {
        guard plan.hasPicture, plan.export.ladder == nil, plan.export.fileType != .png, plan.frameCount > 0 else { return nil }
        // Read back into the standard BT.709 (an HDR output would be tone-mapped for the poster).
        return try PosterFrame.jpeg(try VideoFrameSource(path: output).frame(at: plan.frameDuration * (plan.frameCount - 1)),
                                    matrix: OutputColour.standard.space.matrix)
    }

    /// An HLS ladder's finalise (proto/PROTOCOL.md §4.6): each video result is a ladder
    /// archive holding every rendition of its chunk; they are unpacked into a work folder beside
    /// the output, `Finaliser.finaliseLadder` writes the output folder there, and that folder is
    /// packed into one ladder archive at `output` (atomically), which `OUTPUT` serves.
    ///
    /// `holding[i]` names the renditions to take from `chunks[i]` (nil or missing: it holds
    /// every rendition, in the ladder's order, and nothing else). Several archives may cover
    /// one chunk's frames — the task's own result with the renditions it encoded, and stored
    /// archives of earlier jobs with the renditions reused from them — and each rendition is
    /// taken from the one that names it.
    public static func finaliseLadder(_ plan: RenderPlan, chunks: [ChunkArtifact], holding: [[String]?] = [], audio: ChunkArtifact?,
                                      to output: String) throws -> Finaliser.Report {
        guard let ladder = plan.export.ladder else { throw FinaliseError(description: "not an HLS ladder") }
        let work = URL(fileURLWithPath: output + ".work")
        try? FileManager.default.removeItem(at: work)
        defer { try? FileManager.default.removeItem(at: work) }
        let results = work.appendingPathComponent("results"), folder = work.appendingPathComponent("output")
        try FileManager.default.createDirectory(at: results, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let expected = ladder.renditions.map { "\($0.name).mp4" }
        var archives: [Int: [(chunk: ChunkArtifact, names: [String]?)]] = [:]
        for (index, chunk) in chunks.enumerated() {
            archives[chunk.frames.start, default: []].append((chunk, index < holding.count ? holding[index] : nil))
        }
        var renditions: [ChunkArtifact] = []
        var membersOf: [String: [LadderArchive.Member]] = [:]
        for start in archives.keys.sorted() {
            let covering = archives[start] ?? []
            for rendition in ladder.renditions {
                guard let (chunk, names) = covering.first(where: { $0.names?.contains(rendition.name) ?? true }) else {
                    throw FinaliseError(description: "no result of the chunk starting at frame \(start) holds rendition \(rendition.name); render it again")
                }
                let members: [LadderArchive.Member]
                if let known = membersOf[chunk.path] { members = known } else {
                    members = try LadderArchive.members(of: chunk.path)
                    membersOf[chunk.path] = members
                }
                guard names != nil || members.map(\.name) == expected else {
                    throw FinaliseError(description: "the result of chunk \(chunk.frames) holds \(members.map(\.name)), "
                                        + "not the ladder's renditions \(expected); render it again")
                }
                guard let member = members.first(where: { $0.name == "\(rendition.name).mp4" }) else {
                    throw FinaliseError(description: "the archive \(chunk.sha256.prefix(12))… of chunk \(chunk.frames) holds \(members.map(\.name)), "
                                        + "not rendition \(rendition.name); render it again")
                }
                let path = results.appendingPathComponent(String(format: "%08d-", chunk.frames.start) + member.name).path
                try LadderArchive.extract(member, from: chunk.path, to: path)
                renditions.append(try ChunkArtifact.measuring(kind: .video, frames: chunk.frames, path: path, rendition: rendition.name))
            }
        }
        let report = try Finaliser.finaliseLadder(plan, chunks: renditions, audio: audio,
                                                  to: folder.appendingPathComponent(LadderArchive.masterPlaylistName).path)
        let partial = output + ".partial"
        defer { unlink(partial) }
        try LadderArchive.write(try LadderArchive.files(under: folder.path), to: partial)
        guard rename(partial, output) == 0 else { throw FinaliseError(description: "cannot move \(partial) to \(output): \(String(cString: strerror(errno)))") }
        return report
    }

    /// A PNG sequence's finalise (proto/PROTOCOL.md §4.7): the finaliser writes the frames into a
    /// work folder beside the output, named `FrameSequenceName.archive`, and they are packed in
    /// frame order into one archive at `output` (atomically), which `OUTPUT` serves.
    public static func finaliseFrameSequence(_ plan: RenderPlan, chunks: [ChunkArtifact], to output: String) throws -> Finaliser.Report {
        let folder = URL(fileURLWithPath: output + ".work")
        try? FileManager.default.removeItem(at: folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        let name = FrameSequenceName.archive
        let report = try Finaliser.finalise(plan, chunks: chunks, audio: nil, to: folder.appendingPathComponent("\(name.prefix)%0\(name.digits)d\(name.suffix)").path)
        let partial = output + ".partial"
        defer { unlink(partial) }
        try LadderArchive.write((1...max(1, report.frames)).map { (name: name.fileName(number: $0), path: folder.appendingPathComponent(name.fileName(number: $0)).path) },
                                to: partial)
        guard rename(partial, output) == 0 else { throw FinaliseError(description: "cannot move \(partial) to \(output): \(String(cString: strerror(errno)))") }
        return report
    }
}
