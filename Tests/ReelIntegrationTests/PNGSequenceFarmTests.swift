import Foundation
import Testing

/// PNG sequences through the farm: a PNG sequence rendered by a coordinator and two agents, its
/// output an archive of the frames (proto/PROTOCOL.md §4.7) that `reel submit --wait -o
/// DIR/frame-%05d.png` unpacks into DIR — the same files, byte for byte, as `reel render
/// --in-process` writes, and decoded by ffmpeg as RGBA with the logo's alpha.
extension FarmTests {
    @Test func aPNGSequenceRendersThroughTheFarmAsItDoesInProcess() throws {
        try Self.checkPNGSequenceJob(try LocalFarm(agents: 2))
    }

    /// The checks above on `farm`; S3FarmTests runs them with the storage in S3, where an agent
    /// finalises the job (packs the frames' archive and uploads it).
    /// - Returns: the job's id.
    @discardableResult
    static func checkPNGSequenceJob(_ farm: LocalFarm) throws -> String {
        try AlphaRenderTests.images(in: farm.dir)
        let composition = farm.dir.appendingPathComponent("frames.json").path
        try AlphaRenderTests.composition(export: #"{"fileType": "png"}"#).write(toFile: composition, atomically: true, encoding: .utf8)

        let reference = farm.dir.appendingPathComponent("in-process")
        let local = try Media.run(Media.reel, ["render", composition, "--in-process", "--agents", "2", "--chunk-seconds", "2",
                                               "--encoder-threads", "2", "-o", reference.path + "/frame-%05d.png", "--quiet"], allowFailure: true)
        #expect(local.status == 0, "\(local.stderr)")

        // A name of its own through the farm: the archive's frame names are not the client's.
        let folder = farm.dir.appendingPathComponent("farm")
        let submitted = try farm.reel(["submit", composition, "--chunk-seconds", "2", "--encoder-threads", "2",
                                       "--wait", "-o", folder.path + "/shot-%03d.png", "--quiet"], allowFailure: true)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let job = submitted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let kinds = try farm.query("SELECT kind, count(*) FROM tasks WHERE job_id = \(job) GROUP BY kind ORDER BY kind").map { $0.joined(separator: "=") }
        #expect(kinds == ["finalise=1", "video_chunk=2"], "two chunks, no audio task: \(kinds)")

        let frames = AlphaRenderTests.frames
        let farmNames = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        let localNames = try FileManager.default.contentsOfDirectory(atPath: reference.path).sorted()
        #expect(farmNames == (1...frames).map { String(format: "shot-%03d.png", $0) }, "\(farmNames.prefix(3)) … \(farmNames.suffix(3))")
        #expect(localNames == (1...frames).map { String(format: "frame-%05d.png", $0) })
        for number in 1...frames {
            let a = try Data(contentsOf: folder.appendingPathComponent(String(format: "shot-%03d.png", number)))
            let b = try Data(contentsOf: reference.appendingPathComponent(String(format: "frame-%05d.png", number)))
            #expect(a == b, "frame \(number) through the farm differs from the in-process render")
        }
        // As ffmpeg reads it: frame 1 transparent away from the logo, opaque red on it.
        let f = [UInt8](try Media.run("ffmpeg", ["-nostdin", "-v", "error", "-i", folder.appendingPathComponent("shot-001.png").path,
                                                 "-f", "rawvideo", "-pix_fmt", "rgba", "-"]).stdout)
        try #require(f.count == AlphaRenderTests.width * AlphaRenderTests.height * 4)
        AlphaRenderTests.expectPixel(f, 10, 10, [0, 0, 0, 0], tolerance: 0, "transparent background")
        AlphaRenderTests.expectPixel(f, 62, 62, [255, 0, 0, 255], tolerance: 3, "the disc")
        return job
    }
}
