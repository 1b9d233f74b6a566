import Testing
@testable import ReelCore
import ReelThreadTesting

/// The preview's event playlist: finished chunks in frame order up to the first unfinished one,
/// exact durations, a target duration that never changes as it grows, ENDLIST only at the end.
@Suite(.blocking) struct PreviewPlaylistTests {
    /// Chunks of 50 frames at 25 fps (2 s) but the last, 30 frames; `finished` by ordinal.
    static func chunks(_ finished: Set<Int>, count: Int = 4) -> [PreviewChunk] {
        (0..<count).map { i in
            PreviewChunk(ordinal: i, frames: FrameRange(start: i * 50, end: i == count - 1 ? i * 50 + 30 : i * 50 + 50),
                         finished: finished.contains(i))
        }
    }

    @Test func listsFinishedChunksInOrderUpToTheFirstUnfinishedOne() {
        // Chunk 2 finished before chunk 1: it waits, a player must never meet a hole.
        let playlist = PreviewPlaylist(chunks: Self.chunks([0, 2, 3]).reversed(), frameDuration: Rational(1, 25), ended: false)
        #expect(playlist.segments.map(\.ordinal) == [0])
        #expect(playlist.text() == """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:2
            #EXT-X-MEDIA-SEQUENCE:0
            #EXT-X-PLAYLIST-TYPE:EVENT
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-MAP:URI="preview/init.mp4"
            #EXTINF:2.000000,
            preview/0.m4s

            """)
        let later = PreviewPlaylist(chunks: Self.chunks([0, 1, 2]), frameDuration: Rational(1, 25), ended: false)
        #expect(later.segments.map(\.ordinal) == [0, 1, 2])
        #expect(later.listedSeconds == Rational(6))
        #expect(!later.text().contains("ENDLIST"), "no end while the job runs")
    }

    @Test func nothingFinishedGivesAnEmptyPlaylistWithoutInitSegment() {
        let playlist = PreviewPlaylist(chunks: Self.chunks([1, 2]), frameDuration: Rational(1, 25), ended: false)
        #expect(playlist.segments.isEmpty)
        let text = playlist.text()
        #expect(text.contains("#EXT-X-TARGETDURATION:2") && text.contains("#EXT-X-PLAYLIST-TYPE:EVENT"))
        #expect(!text.contains("EXT-X-MAP") && !text.contains("EXTINF") && !text.contains("ENDLIST"))
    }

    @Test func anEndedJobGetsEndlistAndTheWholeVideo() {
        let playlist = PreviewPlaylist(chunks: Self.chunks([0, 1, 2, 3]), frameDuration: Rational(1, 25), ended: true)
        let text = playlist.text()
        #expect(text.hasSuffix("preview/3.m4s\n#EXT-X-ENDLIST\n"))
        #expect(text.contains("#EXTINF:1.200000,\npreview/3.m4s"), "the last chunk's own length: 30 frames")
        #expect(playlist.listedSeconds == Rational(36, 5))
        // A failed job ends too, with what finished before the hole.
        let failed = PreviewPlaylist(chunks: Self.chunks([0, 2]), frameDuration: Rational(1, 25), ended: true)
        #expect(failed.segments.map(\.ordinal) == [0] && failed.text().hasSuffix("#EXT-X-ENDLIST\n"))
    }

    @Test func theTargetDurationCoversEveryPlannedChunkSoItNeverChanges() {
        // 29.97 fps: a 60-frame chunk is 2.002 s, so the target is 3, finished or not.
        let ntsc = Rational(1001, 30000)
        let chunks = (0..<3).map { PreviewChunk(ordinal: $0, frames: FrameRange(start: $0 * 60, end: $0 * 60 + 60), finished: $0 == 0) }
        let early = PreviewPlaylist(chunks: chunks, frameDuration: ntsc, ended: false)
        #expect(early.targetDuration == 3)
        #expect(early.text().contains("#EXTINF:2.002000,"))
        let none = PreviewPlaylist(chunks: chunks.map { var c = $0; c.finished = false; return c }, frameDuration: ntsc, ended: false)
        #expect(none.targetDuration == early.targetDuration)
        // Seeded sweep: as chunks finish in any order, each playlist extends the previous one.
        var rng = SplitMix64(seed: 20)
        for _ in 0..<200 {
            let count = Int(rng.next() % 12) + 1
            var order = Array(0..<count)
            for i in stride(from: count - 1, to: 0, by: -1) { order.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
            var finished: Set<Int> = []
            var previous: [Int] = []
            for ordinal in order {
                finished.insert(ordinal)
                let playlist = PreviewPlaylist(chunks: Self.chunks(finished, count: count), frameDuration: Rational(1, 25), ended: false)
                let listed = playlist.segments.map(\.ordinal)
                #expect(Array(listed.prefix(previous.count)) == previous, "a segment disappeared or moved")
                #expect(listed == Array(0..<listed.count), "listed chunks are the leading ones, in order")
                #expect(listed.allSatisfy { finished.contains($0) })
                #expect(listed.count == count || !finished.contains(listed.count), "stops only at an unfinished chunk")
                #expect(playlist.targetDuration == 2)
                previous = listed
            }
            #expect(previous.count == count)
        }
    }

    @Test func playableCountCutsTheListAndTokensArePassedOnEncoded() {
        let playlist = PreviewPlaylist(chunks: Self.chunks([0, 1, 2]), frameDuration: Rational(1, 25), ended: false, playableCount: 2)
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
