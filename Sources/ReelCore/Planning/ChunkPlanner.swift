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

    public static func plan(frameCount: Int, gopFrames: Int, frameDuration: Rational,
                            targetChunkSeconds: Rational = defaultTargetChunkSeconds,
                            minimumChunks: Int = 1, cutFrames: [Int] = []) -> [FrameRange] {
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
    public static func plan(for plan: RenderPlan, targetChunkSeconds: Rational = defaultTargetChunkSeconds,
                            minimumChunks: Int = 1) -> [FrameRange] {
        guard plan.hasPicture else { return [] }
        return self.plan(frameCount: plan.frameCount, gopFrames: plan.boundaryFrames, frameDuration: plan.frameDuration,
                  targetChunkSeconds: targetChunkSeconds, minimumChunks: minimumChunks, cutFrames: plan.cutFrames)
    }
}

extension RenderPlan {
    /// The unit chunk boundaries are multiples of: the HLS segment for a ladder, else the GOP.
    public var boundaryFrames: Int { export.ladder?.segmentFrames ?? export.video.gopFrames }

    /// First frame (time ≥ the change) of every segment start or end in a video track and of
    /// every instruction start, excluding frame 0; sorted, unique. Fed to `ChunkPlanner`.
    public var cutFrames: [Int] {
        var times: Set<Rational> = []
        for track in videoTracks {
            for segment in track.segments { times.insert(segment.at); times.insert(segment.end) }
        }
        for instruction in instructions { times.insert(instruction.timeRange.start) }
        let frames = Set(times.map { Int($0.ceilDiv(frameDuration)) }).filter { $0 > 0 && $0 < frameCount }
        return frames.sorted()
    }
}
