import Testing
@testable import ReelCore
import ReelThreadTesting

/// The preview's playlist: while the job runs, every planned chunk (the whole timeline, finished
/// or not); once it has ended, the finished chunks in frame order up to the first unfinished
/// one. Always ENDLIST (a video on demand, never a live stream), exact durations.
@Suite(.blocking) struct PreviewPlaylistTests {
    /// Chunks of 50 frames at 25 fps (2 s) but the last, 30 frames; `finished` by ordinal.
    static func chunks(_ finished: Set<Int>, count: Int = 4) -> [PreviewChunk] {
        (0..<count).map { i in
            PreviewChunk(ordinal: i, frames: FrameRange(start: i * 50, end: i == count - 1 ? i * 50 + 30 : i * 50 + 50),
                         finished: finished.contains(i))
        }
    }

    @Test func aRunningJobListsEveryPlannedChunkInOrderAndEnds() {
        // Chunk 2 finished before chunk 1, chunk 3 not at all: all four are listed, in frame order.
        let playlist = PreviewPlaylist(chunks: Self.chunks([0, 2]).reversed(), frameDuration: Rational(1, 25), ended: false)
        #expect(playlist.segments.map(\.ordinal) == [0, 1, 2, 3])
        #expect(playlist.listedSeconds == Rational(36, 5))
        #expect(playlist.text() == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:0
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="preview/init.mp4"
            #EXTINF:2.000000,
            preview/0.m4s
            #EXTINF:2.000000,
            preview/1.m4s
            #EXTINF:2.000000,
            preview/2.m4s
            #EXTINF:1.200000,
            preview/3.m4s
            #EXT-X-ENDLIST

            """)
        // Nothing finished yet: the same list (the init segment's route waits for the first chunk).
        let none = PreviewPlaylist(chunks: Self.chunks([]), frameDuration: Rational(1, 25), ended: false)
        #expect(none.text() == playlist.text())
    }

    @Test func anEndedJobListsWhatFinishedBeforeTheFirstHole() {
        let done = PreviewPlaylist(chunks: Self.chunks([0, 1, 2, 3]), frameDuration: Rational(1, 25), ended: true)
        let text = done.text()
        #expect(text.hasSuffix("preview/3.m4s\n#EXT-X-ENDLIST\n"))
        #expect(text.contains("#EXTINF:1.200000,\npreview/3.m4s"), "the last chunk's own length: 30 frames")
        #expect(done.listedSeconds == Rational(36, 5))
        #expect(text == PreviewPlaylist(chunks: Self.chunks([]), frameDuration: Rational(1, 25), ended: false).text(),
                "a done job's playlist is the one its players loaded while it ran")
        // A failed job, with what finished before the hole.
        let failed = PreviewPlaylist(chunks: Self.chunks([0, 2]), frameDuration: Rational(1, 25), ended: true)
        #expect(failed.segments.map(\.ordinal) == [0] && failed.text().hasSuffix("preview/0.m4s\n#EXT-X-ENDLIST\n"))
        // Nothing finished: no segment and no init segment.
        let empty = PreviewPlaylist(chunks: Self.chunks([1, 2]), frameDuration: Rational(1, 25), ended: true).text()
        #expect(empty.contains("#EXT-X-TARGETDURATION:2") && empty.hasSuffix("#EXT-X-ENDLIST\n"))
        #expect(!empty.contains("EXT-X-MAP") && !empty.contains("EXTINF"))
    }

    @Test func theTargetDurationCoversEveryPlannedChunkAndListsStopAtAHole() {
        // 29.97 fps: a 60-frame chunk is 2.002 s, so the target is 3, finished or not.
        let ntsc = Rational(1001, 30000)
        let chunks = (0..<3).map { PreviewChunk(ordinal: $0, frames: FrameRange(start: $0 * 60, end: $0 * 60 + 60), finished: $0 == 0) }
        let early = PreviewPlaylist(chunks: chunks, frameDuration: ntsc, ended: true)
        #expect(early.targetDuration == 3)
        #expect(early.text().contains("#EXTINF:2.002000,"))
        let none = PreviewPlaylist(chunks: chunks.map { var c = $0; c.finished = false; return c }, frameDuration: ntsc, ended: false)
        #expect(none.targetDuration == early.targetDuration)
        // Seeded sweep: as chunks finish in any order, a running job's playlist stays the same,
        // and an ended one lists exactly the leading finished chunks.
        var rng = SplitMix64(seed: 20)
        for _ in 0..<200 {
            let count = Int(rng.next() % 12) + 1
            var order = Array(0..<count)
            for i in stride(from: count - 1, to: 0, by: -1) { order.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
            var finished: Set<Int> = []
            let whole = PreviewPlaylist(chunks: Self.chunks([], count: count), frameDuration: Rational(1, 25), ended: false).text()
            for ordinal in order {
                finished.insert(ordinal)
                let running = PreviewPlaylist(chunks: Self.chunks(finished, count: count), frameDuration: Rational(1, 25), ended: false)
                #expect(running.text() == whole, "a running job's playlist never changes")
                let ended = PreviewPlaylist(chunks: Self.chunks(finished, count: count), frameDuration: Rational(1, 25), ended: true)
                let listed = ended.segments.map(\.ordinal)
                #expect(listed == Array(0..<listed.count), "listed chunks are the leading ones, in order")
                #expect(listed.allSatisfy { finished.contains($0) })
                #expect(listed.count == count || !finished.contains(listed.count), "stops only at an unfinished chunk")
                #expect(ended.targetDuration == 2)
            }
        }
        // A gap in the frames (a broken plan) ends the list there, running or not.
        var gapped = Self.chunks([0, 1, 2, 3])
        gapped[2].frames = FrameRange(start: 110, end: 150)
        #expect(PreviewPlaylist(chunks: gapped, frameDuration: Rational(1, 25), ended: false).segments.map(\.ordinal) == [0, 1])
    }

    @Test func playableCountCutsTheListAndTokensArePassedOnEncoded() {
        let playlist = PreviewPlaylist(chunks: Self.chunks([0, 1, 2]), frameDuration: Rational(1, 25), ended: true, playableCount: 2)
        #expect(playlist.segments.map(\.ordinal) == [0, 1])
        let text = playlist.text(token: "ab.c_d-e~f+g/h=")
        #expect(text.contains("#EXT-X-MAP:URI=\"preview/init.mp4?token=ab.c_d-e~f%2Bg%2Fh%3D\""))
        #expect(text.contains("\npreview/0.m4s?token=ab.c_d-e~f%2Bg%2Fh%3D\n") && text.contains("\npreview/1.m4s?token=ab.c_d-e~f%2Bg%2Fh%3D\n"))
    }

    @Test func decimalsAreExactAndRoundHalfUp() {
        #expect(PreviewPlaylist.decimal(Rational(1001, 30000) * 60, places: 6) == "2.002000")
        #expect(PreviewPlaylist.decimal(Rational(1, 3), places: 6) == "0.333333")
        #expect(PreviewPlaylist.decimal(Rational(2, 3), places: 6) == "0.666667")
        #expect(PreviewPlaylist.decimal(Rational(1, 2_000_000), places: 6) == "0.000001")
        #expect(PreviewPlaylist.decimal(Rational(12), places: 6) == "12.000000")
    }
}
