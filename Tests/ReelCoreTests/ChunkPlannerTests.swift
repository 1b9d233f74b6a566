import Testing
@testable import ReelCore
import ReelThreadTesting


private func ranges(_ pairs: [(Int, Int)]) -> [FrameRange] { pairs.map { FrameRange(start: $0.0, end: $0.1) } }

@Suite("Chunk planner", .blocking)
struct ChunkPlannerTests {
    @Test func targetLengthChunks() {
        // 30 s at 30 fps, 2 s GOPs, 10 s target → three 300-frame chunks.
        #expect(ChunkPlanner.plan(frameCount: 900, gopFrames: 60, frameDuration: Rational(1, 30), minimumChunks: 1)
                == ranges([(0, 300), (300, 600), (600, 900)]))
    }

    @Test func shrinksForAgentsOnAFixedGrid() {
        // 15 GOPs over 8 agents: the largest grid step giving 8 chunks is 2 GOPs; the last chunk takes the rest.
        #expect(ChunkPlanner.plan(frameCount: 900, gopFrames: 60, frameDuration: Rational(1, 30), minimumChunks: 8)
                == ranges([(0, 120), (120, 240), (240, 360), (360, 480), (480, 600), (600, 720), (720, 840), (840, 900)]))
    }

    @Test func lengthChangesOnlyTheLastChunk() {
        // 120 s at 30 fps; 1 s more or less moves only the end of the last chunk.
        let base = ChunkPlanner.plan(frameCount: 3600, gopFrames: 60, frameDuration: Rational(1, 30))
        for frameCount in [3630, 3660, 3540] {
            let edited = ChunkPlanner.plan(frameCount: frameCount, gopFrames: 60, frameDuration: Rational(1, 30))
            #expect(Array(edited.dropLast()) == Array(base.prefix(edited.count - 1)), "frames \(frameCount)")
            #expect(edited.last?.end == frameCount)
        }
    }

    @Test func aCutMovesOnlyTheBoundaryNearIt() {
        // A cut near 40 s (frame 1190 → GOP boundary 1200) moves nothing; one at 1250 pulls 1200 to 1260;
        // every other chunk keeps its frames.
        let base = ChunkPlanner.plan(frameCount: 3600, gopFrames: 60, frameDuration: Rational(1, 30), cutFrames: [1190])
        let moved = ChunkPlanner.plan(frameCount: 3600, gopFrames: 60, frameDuration: Rational(1, 30), cutFrames: [1250])
        #expect(base.count == 12 && moved.count == 12)
        let changed = zip(base, moved).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        #expect(changed == [3, 4])
        #expect(moved[3] == FrameRange(start: 900, end: 1260) && moved[4] == FrameRange(start: 1260, end: 1500))
    }

    @Test func neverBelowOneGOP() {
        #expect(ChunkPlanner.plan(frameCount: 300, gopFrames: 60, frameDuration: Rational(1, 30), minimumChunks: 10)
                == ranges([(0, 60), (60, 120), (120, 180), (180, 240), (240, 300)]))
    }

    @Test func jobShorterThanOneGOPIsOneChunk() {
        #expect(ChunkPlanner.plan(frameCount: 45, gopFrames: 60, frameDuration: Rational(1, 30), minimumChunks: 4) == ranges([(0, 45)]))
        #expect(ChunkPlanner.plan(frameCount: 0, gopFrames: 60, frameDuration: Rational(1, 30)).isEmpty)
    }

    @Test func trailingPartialGOPJoinsLastChunk() {
        #expect(ChunkPlanner.plan(frameCount: 930, gopFrames: 60, frameDuration: Rational(1, 30))
                == ranges([(0, 300), (300, 600), (600, 930)]))
    }

    @Test(arguments: [
        ([335], ranges([(0, 360), (360, 600), (600, 900)])),   // nearest GOP boundary to 335 is 360, one GOP from 300
        ([240], ranges([(0, 240), (240, 600), (600, 900)])),   // a cut exactly on a GOP boundary one GOP early
        ([310], ranges([(0, 300), (300, 600), (600, 900)])),   // nearest is 300 already
        ([420], ranges([(0, 300), (300, 600), (600, 900)])),   // 420 is two GOPs away: ignored
        ([250, 290], ranges([(0, 300), (300, 600), (600, 900)])), // 250 → 240 and 290 → 300 both miss by 10: the smaller shift wins
    ])
    func boundariesMoveTowardsCuts(_ cuts: [Int], _ expected: [FrameRange]) {
        #expect(ChunkPlanner.plan(frameCount: 900, gopFrames: 60, frameDuration: Rational(1, 30), cutFrames: cuts) == expected)
    }

    @Test func propertiesHoldForRandomJobs() {
        var rng = SplitMix64(seed: 0x5EED)
        let frameDurations = [Rational(1, 24), Rational(1, 25), Rational(1, 30), Rational(1001, 30000), Rational(1, 60)]
        for _ in 0..<3000 {
            let frameCount = Int.random(in: 0...6000, using: &rng)
            let gop = Int.random(in: 1...150, using: &rng)
            let fd = frameDurations.randomElement(using: &rng)!
            let target = Rational(Int64.random(in: 1...600, using: &rng), 10)
            let minimum = Int.random(in: 0...20, using: &rng)
            let cuts = frameCount == 0 ? [] : (0..<Int.random(in: 0...10, using: &rng)).map { _ in Int.random(in: 0..<frameCount, using: &rng) }
            let chunks = ChunkPlanner.plan(frameCount: frameCount, gopFrames: gop, frameDuration: fd,
                                           targetChunkSeconds: target, minimumChunks: minimum, cutFrames: cuts)
            let context = "frames \(frameCount) gop \(gop) fd \(fd) target \(target) min \(minimum) cuts \(cuts) → \(chunks)"
            guard frameCount > 0 else { #expect(chunks.isEmpty, "\(context)"); continue }
            #expect(chunks.first?.start == 0, "\(context)")
            #expect(chunks.last?.end == frameCount, "\(context)")
            for (a, b) in zip(chunks, chunks.dropFirst()) {
                #expect(a.end == b.start, "gap or overlap: \(context)")
                #expect(b.start % gop == 0, "boundary not on a GOP: \(context)")
            }
            for chunk in chunks { #expect(chunk.count >= min(gop, frameCount), "chunk under one GOP: \(context)") }
            let gops = max(1, frameCount / gop)
            #expect(chunks.count >= min(minimum, gops), "too few chunks: \(context)")
            if minimum <= 1 && cuts.isEmpty {
                // Near the target: never longer than the target (in whole GOPs), never more chunks than needed.
                let targetGOPs = max(1, Int((target / (fd * gop)).rounded))
                #expect(chunks.count == (gops + targetGOPs - 1) / targetGOPs, "\(context)")
                for chunk in chunks.dropLast() { #expect(chunk.count <= targetGOPs * gop, "\(context)") }
            }
        }
    }

    /// The boundaries snap to cuts found by binary search; the scan over every cut that it
    /// replaced (kept here as the oracle) gives the same chunks, with hundreds of cuts.
    @Test func snappingEqualsTheScanOverEveryCut() {
        var rng = SplitMix64(seed: 0xC075)
        for _ in 0..<400 {
            let frameCount = Int.random(in: 1...6000, using: &rng)
            let gop = Int.random(in: 1...90, using: &rng)
            let target = Rational(Int64.random(in: 10...300, using: &rng), 10)
            let minimum = Int.random(in: 0...12, using: &rng)
            let cuts = (0..<Int.random(in: 0...200, using: &rng)).map { _ in Int.random(in: 0..<frameCount, using: &rng) }
            let fd = Rational(1, 30)
            #expect(ChunkPlanner.plan(frameCount: frameCount, gopFrames: gop, frameDuration: fd, targetChunkSeconds: target,
                                      minimumChunks: minimum, cutFrames: cuts)
                    == Self.scanningPlan(frameCount: frameCount, gopFrames: gop, frameDuration: fd, targetChunkSeconds: target,
                                         minimumChunks: minimum, cutFrames: cuts),
                    "frames \(frameCount) gop \(gop) target \(target) min \(minimum) cuts \(cuts.count)")
        }
    }

    @Test func edgesModeKeepsASharedIntroAndOutroApart() {
        // A batch's template: 15 s at 30 fps, 2 s GOPs, a 3 s intro (edge at frame 90), a caption
        // over 3–12 s, a 3 s outro from 12 s (frame 360). The grid alone gives [0, 360) and
        // [360, 450): the intro shares its chunk with the row's own frames.
        let edges = [90, 360]
        #expect(ChunkPlanner.plan(frameCount: 450, gopFrames: 60, frameDuration: Rational(1, 30), cutFrames: edges)
                == ranges([(0, 360), (360, 450)]))
        // Edges mode: the GOPs either side of 90 (60 and 120) and 360 itself; the grid boundary
        // at 300 is within one GOP of 360 and dropped. [0, 60) and [360, 450) are intro and outro only.
        #expect(ChunkPlanner.plan(frameCount: 450, gopFrames: 60, frameDuration: Rational(1, 30), cutFrames: edges, edgeFrames: edges)
                == ranges([(0, 60), (60, 120), (120, 360), (360, 450)]))
        // An intro of whole GOPs (4 s) is one chunk of its own, with no shared GOP.
        #expect(ChunkPlanner.plan(frameCount: 450, gopFrames: 60, frameDuration: Rational(1, 30), edgeFrames: [120, 360])
                == ranges([(0, 120), (120, 360), (360, 450)]))
    }

    @Test func edgesModeKeepsTheGridBetweenEdgesAndWholeGOPs() {
        // 60 s, one edge at 31 s (frame 930): boundaries at 900 and 960, the grid's 300, 600 and
        // 1500 kept, 1200 (more than one GOP from 960) kept too; an edge in the trailing partial
        // GOP or at the end adds nothing.
        let chunks = ChunkPlanner.plan(frameCount: 1830, gopFrames: 60, frameDuration: Rational(1, 30), edgeFrames: [930, 1810])
        #expect(chunks == ranges([(0, 300), (300, 600), (600, 900), (900, 960), (960, 1200), (1200, 1500), (1500, 1830)]))
        #expect(chunks.dropLast().allSatisfy { $0.start % 60 == 0 && $0.count % 60 == 0 })
        // More edges than chunks allowed: the ordinary plan.
        let many = Array(stride(from: 61, to: 60 * (RenderLimits.maximumChunks + 10), by: 60))
        let frameCount = 60 * (RenderLimits.maximumChunks + 10)
        #expect(ChunkPlanner.plan(frameCount: frameCount, gopFrames: 60, frameDuration: Rational(1, 30), edgeFrames: many)
                == ChunkPlanner.plan(frameCount: frameCount, gopFrames: 60, frameDuration: Rational(1, 30)))
    }

    /// `ChunkPlanner.plan` as it was before the binary search: every boundary scans every cut.
    static func scanningPlan(frameCount: Int, gopFrames: Int, frameDuration: Rational, targetChunkSeconds: Rational,
                             minimumChunks: Int, cutFrames: [Int]) -> [FrameRange] {
        let gops = max(1, frameCount / gopFrames)
        let gopSeconds = frameDuration * gopFrames
        let targetGOPs = targetChunkSeconds > .zero ? min(gops, max(1, Int((targetChunkSeconds / gopSeconds).rounded))) : 1
        let forMinimum = minimumChunks >= 2 ? max(1, (gops + minimumChunks - 2) / (minimumChunks - 1) - 1) : gops
        let step = max(min(targetGOPs, forMinimum), (gops + RenderLimits.maximumChunks - 1) / RenderLimits.maximumChunks)
        let count = (gops + step - 1) / step
        func ideal(_ i: Int) -> Int { i >= count ? gops : i * step }
        var boundaries = [0]
        for i in 1..<max(1, count) {
            let target = ideal(i)
            let lower = boundaries.last! + 1, upper = ideal(i + 1) - 1
            let snapped = cutFrames.compactMap { cut -> (gop: Int, miss: Int, shift: Int)? in
                let g = Int(Rational(Int64(cut), Int64(gopFrames)).rounded)
                guard abs(g - target) <= 1, g >= lower, g <= upper else { return nil }
                return (g, abs(cut - g * gopFrames), abs(g - target))
            }.min { ($0.miss, $0.shift, $0.gop) < ($1.miss, $1.shift, $1.gop) }
            boundaries.append(snapped?.gop ?? target)
        }
        var frames = boundaries.map { $0 * gopFrames }
        frames.append(frameCount)
        return zip(frames, frames.dropFirst()).map { FrameRange(start: $0, end: $1) }
    }
}
