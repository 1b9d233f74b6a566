import Foundation
import ReelCore

/// Writes a PNG sequence (`fileType` `png`) from its chunks: each chunk is a QuickTime file of
/// PNG packets, one complete PNG picture per frame, and each packet is written as it is to its
/// own file, numbered from 1 across the whole job (`FrameSequenceName`). Nothing is decoded or
/// re-encoded, and PNG is lossless, so a frame at a chunk join is the same file a one-chunk
/// render writes.
///
/// As `Finaliser` does, it checks the chunks tile the plan with their planned sizes and
/// SHA-256 before writing, and that each holds its planned frames on the frame grid. The
/// files are written in a hidden folder beside them, fsynced, then renamed into place one by
/// one: a file under a frame's name is always whole.
enum FrameSequenceFinaliser {
    static func finalise(_ plan: RenderPlan, chunks: [ChunkArtifact], to outputPath: String) throws -> Finaliser.Report {
        guard let name = FrameSequenceName(outputPath) else {
            throw Finaliser.Failure(description: "the output name \(outputPath) has no frame number field: name it like \(FrameSequenceName.example)")
        }
        let ordered = chunks.sorted { $0.frames.start < $1.frames.start }
        try Finaliser.checkTiling(ordered, frameCount: plan.frameCount)
        for chunk in ordered { try Finaliser.verifyBytes(chunk) }

        try FileManager.default.createDirectory(atPath: name.directory, withIntermediateDirectories: true)
        let partial = AtomicFile.temporaryPath(for: name.path(number: 0) + ".d")
        try? FileManager.default.removeItem(atPath: partial)
        try FileManager.default.createDirectory(atPath: partial, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: partial) }

        var written: [String] = []
        var byteCount = 0
        for chunk in ordered {
            let reader = try PacketReader(path: chunk.path, kind: "video")
            guard reader.parameters.codecName == "png" else {
                throw Finaliser.Failure(description: "chunk \(chunk.frames) holds \(reader.parameters.codecName), not PNG pictures; re-render it")
            }
            let tb = reader.parameters.timeBase
            var seen = Set<Int64>()
            while let packet = try reader.next() {
                guard let local = Finaliser.frameNumber(packet.pts, timeBase: tb, frameDuration: plan.frameDuration),
                      local.num >= 0, local.num < Int64(chunk.frames.count), seen.insert(local.num).inserted else {
                    throw Finaliser.Failure(description: "chunk \(chunk.frames) has a frame off its grid or twice (\(packet.pts) × \(tb)); re-render it")
                }
                let file = name.fileName(number: chunk.frames.start + Int(local.num) + 1)
                let path = partial + "/" + file
                guard FileManager.default.createFile(atPath: path, contents: Data(packet.data)) else {
                    throw RenderError.io("cannot write \(path)")
                }
                try AtomicFile.fsync(path: path)
                written.append(file)
                byteCount += packet.data.count
            }
            guard seen.count == chunk.frames.count else {
                throw Finaliser.Failure(description: "chunk \(chunk.frames) holds \(seen.count) frames, planned \(chunk.frames.count); re-render it")
            }
        }
        for file in written {
            let target = (name.directory == "/" ? "/" : name.directory + "/") + file
            guard rename(partial + "/" + file, target) == 0 else {
                throw RenderError.io("cannot rename a frame to \(target): \(String(cString: strerror(errno)))")
            }
        }
        try? AtomicFile.fsync(path: name.directory)
        return Finaliser.Report(frames: written.count, audioPackets: 0, byteCount: byteCount)
    }
}
