/// A half-open range of frame indices `[start, end)`.
public struct FrameRange: Hashable, Sendable, Codable, CustomStringConvertible {
    public var start: Int
    public var end: Int
    public init(start: Int, end: Int) { self.start = start; self.end = end }
    public var count: Int { end - start }
    public var description: String { "[\(start), \(end))" }
}

/// Splits a render into video chunks that can be encoded independently and joined by stream copy.
///
/// Invariants of the result: the chunks tile `[0, frameCount)` in order with no gap or
/// overlap; every boundary between chunks is a multiple of `gopFrames` (each chunk starts
/// with an IDR frame of a closed GOP); every chunk holds at least one whole GOP (unless the
/// whole job is shorter than one GOP); a trailing partial GOP joins the last chunk.
///
/// Boundaries lie on a fixed grid counted from frame 0: every `s` GOPs, where `s` is the
/// target chunk length in whole GOPs, made smaller only when the job has too few GOPs to give
/// `minimumChunks` chunks (e.g. the number of agents) and larger only when it would give more
/// than `RenderLimits.maximumChunks`. The last chunk takes what is left. A boundary may then
/// move by at most one GOP towards a cut (a segment or instruction change), choosing the GOP
/// boundary nearest that cut, because a join at a cut hides the encoder's small
/// discontinuity at chunk joins.
///
/// Decision (stability over balance): the grid is not spread evenly over the job, so that an
/// edit in one place leaves every other chunk's frame range as it was and incremental
/// re-rendering (`ContentKey`) can reuse those chunks. Lengthening or shortening the
/// composition changes only its last chunk; a cut moved, added or removed changes at most the
/// boundary within one GOP of it, i.e. the two chunks around it. The price is a last chunk
/// that may be shorter than the others.
public enum ChunkPlanner {
    public static let defaultTargetChunkSeconds = Rational(10)

    ///
    /// `edgeFrames` (a batch's rows: `JobSettings.chunkAtEdges`) asks for chunks that keep the
    /// composition's spans apart instead: every edge (a segment's, an instruction's or an
    /// overlay's start or end) gets a boundary on the GOP boundaries either side of it (one,
    /// when it falls on a GOP boundary), and the grid's boundaries fill the spans between
    /// them, except those within one GOP of an edge's boundary. So a span that is the same in
    /// every row, such as a template's 3 s intro, is chunks of its own, reused by every row,
    /// save the GOP an edge falls inside. Chunks stay whole GOPs. When that would give more
    /// than `RenderLimits.maximumChunks` chunks, the plan is the ordinary one.
    public static func plan(frameCount: Int, gopFrames: Int, frameDuration: Rational,
                            targetChunkSeconds: Rational = defaultTargetChunkSeconds,
                            minimumChunks: Int = 1, cutFrames: [Int] = [], edgeFrames: [Int]? = nil) -> [FrameRange] {
        precondition(gopFrames > 0 && frameDuration > .zero, "ChunkPlanner needs gopFrames > 0 and frameDuration > 0")
        guard frameCount > 0 else { return [] }
        let gops = max(1, frameCount / gopFrames)
        let gopSeconds = frameDuration * gopFrames
        let targetGOPs = targetChunkSeconds > .zero ? min(gops, max(1, Int((targetChunkSeconds / gopSeconds).rounded))) : 1
        // The grid step in GOPs: the largest `s` ≤ the target with ceil(gops / s) ≥ minimumChunks
        // (s < gops / (minimumChunks − 1)), and never more than `RenderLimits.maximumChunks` chunks.
        let forMinimum = minimumChunks >= 2 ? max(1, (gops + minimumChunks - 2) / (minimumChunks - 1) - 1) : gops
        let step = max(min(targetGOPs, forMinimum), (gops + RenderLimits.maximumChunks - 1) / RenderLimits.maximumChunks)
        let count = (gops + step - 1) / step

        // Grid boundary i at i·step GOPs (the job's end for i == count).
        func ideal(_ i: Int) -> Int { i >= count ? gops : i * step }
        if let edgeFrames, let edged = edgeBoundaries(edgeFrames, gops: gops, gopFrames: gopFrames, grid: (1..<max(1, count)).map(ideal)) {
            let frames = [0] + edged.map { $0 * gopFrames } + [frameCount]
            return zip(frames, frames.dropFirst()).map { FrameRange(start: $0, end: $1) }
        }
        let cuts = cutFrames.sorted()
        var boundaries = [0]
        for i in 1..<max(1, count) {
            let target = ideal(i)
            let lower = boundaries.last! + 1, upper = ideal(i + 1) - 1
            // A cut's nearest GOP boundary, if within one GOP of the grid and keeping order. Only
            // cuts within two GOPs of the grid can qualify: found by binary search, so planning
            // stays linear in the number of cuts.
            let near = cuts[firstIndex(in: cuts, notBelow: (target - 2) * gopFrames)..<firstIndex(in: cuts, notBelow: (target + 2) * gopFrames + 1)]
            let snapped = near.compactMap { cut -> (gop: Int, miss: Int, shift: Int)? in
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

    /// The inner boundaries (in GOPs, sorted) of `plan`'s edges mode, or nil when they would
    /// give more than `RenderLimits.maximumChunks` chunks.
    private static func edgeBoundaries(_ edgeFrames: [Int], gops: Int, gopFrames: Int, grid: [Int]) -> [Int]? {
        // Boundaries lie in 1...gops − 1 GOPs: a trailing partial GOP stays in the last chunk.
        var atEdges = Set<Int>()
        for edge in edgeFrames {
            for gop in [edge / gopFrames, (edge + gopFrames - 1) / gopFrames] where gop >= 1 && gop <= gops - 1 { atEdges.insert(gop) }
        }
        let edged = atEdges.sorted()
        let kept = grid.filter { gop in
            let i = firstIndex(in: edged, notBelow: gop - 1)
            return i == edged.count || edged[i] > gop + 1
        }
        let all = (edged + kept).sorted()  // kept has nothing within a GOP of an edge's boundary
        return all.count + 1 <= RenderLimits.maximumChunks ? all : nil
    }

    /// The index of the first element ≥ `value` in sorted `list` (`list.count` if none).
    private static func firstIndex(in list: [Int], notBelow value: Int) -> Int {
        var lo = 0, hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid] < value { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Chunks for `plan`, with its GOP length and cut frames; none when the output has no
    /// picture (sound only: the audio task and the finaliser make it). For an HLS ladder the
    /// unit is the segment (`RenditionLadder.segmentFrames`, a whole number of GOPs) instead of
    /// the GOP, so every chunk is a whole number of segments and no segment spans a join.
    /// `atEdges`: the edges mode above, with `plan.edgeFrames`.
    public static func plan(for plan: RenderPlan, targetChunkSeconds: Rational = defaultTargetChunkSeconds,
                            minimumChunks: Int = 1, atEdges: Bool = false) -> [FrameRange] {
        guard plan.hasPicture else { return [] }
        return self.plan(frameCount: plan.frameCount, gopFrames: plan.boundaryFrames, frameDuration: plan.frameDuration,
                  targetChunkSeconds: targetChunkSeconds, minimumChunks: minimumChunks, cutFrames: plan.cutFrames,
                  edgeFrames: atEdges ? plan.edgeFrames : nil)
    }
}

extension RenderPlan {
    /// The unit chunk boundaries are multiples of: the HLS segment for a ladder, else the GOP.
    public var boundaryFrames: Int { export.ladder?.segmentFrames ?? export.video.gopFrames }

    /// First frame (time ≥ the change) of every segment start or end in a video track and of
    /// every instruction start, excluding frame 0; sorted, unique. Fed to `ChunkPlanner`.
    public var cutFrames: [Int] { frames(of: cutTimes) }

    /// `cutFrames` and the first frame of every overlay's start and end: where what a frame
    /// shows may change. Fed to `ChunkPlanner`'s edges mode.
    public var edgeFrames: [Int] {
        frames(of: cutTimes.union(overlays.flatMap { [$0.timeRange.start, $0.timeRange.end] }))
    }

    /// Every segment's start and end in a video track, and every instruction's start.
    private var cutTimes: Set<Rational> {
        var times: Set<Rational> = []
        for track in videoTracks {
            for segment in track.segments { times.insert(segment.at); times.insert(segment.end) }
        }
        for instruction in instructions { times.insert(instruction.timeRange.start) }
        return times
    }

    /// The first frame at or after each time, without frame 0 and the end; sorted, unique.
    private func frames(of times: Set<Rational>) -> [Int] {
        Set(times.map { Int($0.ceilDiv(frameDuration)) }).filter { $0 > 0 && $0 < frameCount }.sorted()
    }
}
