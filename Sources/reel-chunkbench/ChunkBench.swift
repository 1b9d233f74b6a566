import Foundation
import ReelCore
import ReelMedia

/// reel-chunkbench: times `Finaliser.finalise` alone on chunks kept by
/// `reel render --keep-chunks`, for ops/bench-chunks.sh. Not part of the public CLI.
///
///     reel-chunkbench COMP.json CHUNKDIR OUT --agents N --chunk-seconds S [--runs R]
///
/// The chunk ranges are re-planned exactly as `reel render` planned them (same composition,
/// `--agents` and `--chunk-seconds`), and matched to CHUNKDIR/chunk-NNNNN.mp4 in order;
/// CHUNKDIR/audio.m4a is the audio result. Sizes and checksums are measured once before the
/// timed runs, so each run costs what the farm's finaliser costs: verify every chunk
/// (SHA-256), check parameters, stream-copy, mux audio, fsync, rename.
/// Prints one `run K: SECONDS s` line per run, then `median: SECONDS s` and `bytes: N`.
@main
struct ChunkBench {
    static func main() {
        var positional: [String] = []
        var agents = 1, runs = 5
        var chunkSeconds = "10"
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--agents", "--runs", "--chunk-seconds":
                guard let value = arguments.popFirst() else { fail("\(argument) needs a value") }
                if argument == "--chunk-seconds" { chunkSeconds = value; continue }
                guard let n = Int(value) else { fail("\(argument) needs a whole number") }
                if argument == "--agents" { agents = n } else { runs = n }
            default:
                positional.append(argument)
            }
        }
        guard positional.count == 3, agents >= 1, runs >= 1, let seconds = Rational(parsing: chunkSeconds), seconds > .zero else {
            fail("usage: reel-chunkbench COMP.json CHUNKDIR OUT --agents N --chunk-seconds S [--runs R]")
        }
        do {
            try run(composition: positional[0], chunkDirectory: positional[1], output: positional[2],
                    agents: agents, chunkSeconds: seconds, runs: runs)
        } catch {
            fail("\(error)")
        }
    }

    static func run(composition: String, chunkDirectory: String, output: String,
                    agents: Int, chunkSeconds: Rational, runs: Int) throws {
        let plan = try CompositionLoader.load(path: composition)
        let ranges = LocalRender.chunks(for: plan, options: LocalRender.Options(workers: agents, chunkSeconds: chunkSeconds))
        let names = try FileManager.default.contentsOfDirectory(atPath: chunkDirectory)
            .filter { $0.hasPrefix("chunk-") && $0.hasSuffix(".mp4") }.sorted()
        guard names.count == ranges.count else {
            fail("\(chunkDirectory) holds \(names.count) chunks, the plan has \(ranges.count): same --agents/--chunk-seconds as the render?")
        }
        let chunks = try zip(names, ranges).map { name, range in
            try ChunkArtifact.measuring(kind: .video, frames: range, path: chunkDirectory + "/" + name)
        }
        let audio = plan.audioTracks.isEmpty ? nil
            : try ChunkArtifact.measuring(kind: .audio, frames: FrameRange(start: 0, end: plan.frameCount),
                                          path: chunkDirectory + "/audio.m4a")

        var times: [Double] = []
        var bytes = 0
        for run in 1...runs {
            try? FileManager.default.removeItem(atPath: output)
            let start = DispatchTime.now().uptimeNanoseconds
            let report = try Finaliser.finalise(plan, chunks: chunks, audio: audio, to: output)
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            times.append(elapsed)
            bytes = report.byteCount
            print("run \(run): \(String(format: "%.4f", elapsed)) s (\(report.frames) frames, \(report.audioPackets) audio packets)")
        }
        print("median: \(String(format: "%.4f", times.sorted()[times.count / 2])) s")
        print("bytes: \(bytes)")
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("reel-chunkbench: \(message)\n".utf8))
        exit(1)
    }
}
