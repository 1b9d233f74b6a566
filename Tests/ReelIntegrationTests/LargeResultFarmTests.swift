import Foundation
import Testing

extension FarmTests {
    /// Results of any size through the farm: 10 s of 1920x1080 ProRes HQ in one 10 s chunk is
    /// well over one 64 MiB payload, so the agent uploads it in `RESULTPART`s and the coordinator
    /// verifies it by hash before the finaliser joins it. Costly (about 40 s of ProRes encoding
    /// on one core), so it runs in this serialised suite only, one farm at a time.
    @Test func aProResChunkLargerThanOnePayloadIsUploadedInPartsAndJoined() throws {
        let farm = try LocalFarm(agents: 1, leaseSeconds: 30)
        let source = farm.dir.appendingPathComponent("src.mp4").path
        try Media.ffmpeg(["-f", "lavfi", "-i", "testsrc2=s=1920x1080:r=25:d=10",
                          "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", source])
        let composition = farm.dir.appendingPathComponent("prores.json").path
        try """
            {"formatVersion": 1, "assets": {"src": {"url": "src.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "src", "at": 0}]}],
             "export": {"fileType": "mov", "video": {"codec": "prores", "proresProfile": "hq"}}}
            """.write(toFile: composition, atomically: true, encoding: .utf8)
        let output = farm.dir.appendingPathComponent("out.mov").path
        let r = try farm.reel(["submit", composition, "--chunk-seconds", "10", "--wait", "-o", output, "--quiet"], allowFailure: true)
        #expect(r.status == 0, "\(r.stderr); coordinator log: \(farm.coordinator.output)")

        // One chunk, and it did not fit one payload.
        let sizes = try farm.query("SELECT result_size FROM tasks WHERE kind = 'video_chunk'").compactMap { Int64($0.first ?? "") }
        #expect(sizes.count == 1 && sizes.allSatisfy { $0 > 64 << 20 }, "chunk sizes: \(sizes)")
        let stream = try CodecRenderTests.videoStream(output)
        #expect(stream["codec_name"] == "prores" && stream["profile"] == "HQ", "\(stream)")
        #expect(stream["width"] == "1920" && stream["height"] == "1080")
        #expect(stream["nb_read_frames"] == "250", "10 s at 25 fps: \(stream)")
        #expect(try Media.decodeErrors(output).isEmpty)
    }
}
