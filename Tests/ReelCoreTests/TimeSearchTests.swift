import ReelThreadTesting
import Testing
@testable import ReelCore

/// Every lookup by time is a binary search with a hint (`lastIndex(startingAtOrBefore:hint:)`,
/// `FrameCursor`, `OverlaySchedule`). These properties hold them to the
/// naive scans they replaced — `first { contains }`, `last(where:)`, a filter over every
/// overlay, a pass over every animation — on seeded random plans, whatever order frames are
/// asked in.
@Suite("Lookups by time", .blocking)
struct TimeSearchTests {
    private struct Span: TimeSpanned {
        var spanStart: Rational
        var spanEnd: Rational
    }

    @Test func binarySearchWithAnyHintEqualsTheScan() {
        var rng = SplitMix64(seed: 0x71DE)
        for _ in 0..<2000 {
            // Sorted starts, some equal; the search needs only the order.
            var t = Rational(Int64.random(in: -5...5, using: &rng), 2)
            let spans: [Span] = (0..<Int.random(in: 0...40, using: &rng)).map { _ in
                t += Rational(Int64.random(in: 0...3, using: &rng), 3)
                return Span(spanStart: t, spanEnd: t + Rational(1, 3))
            }
            for _ in 0..<20 {
                let time = Rational(Int64.random(in: -20...Int64(spans.count * 2 + 20), using: &rng), 6)
                let expected = spans.lastIndex { $0.spanStart <= time }
                let hint: Int? = Bool.random(using: &rng) ? nil : Int.random(in: -2...(spans.count + 2), using: &rng)
                #expect(spans.lastIndex(startingAtOrBefore: time, hint: hint) == expected, "t \(time) hint \(String(describing: hint)) in \(spans.map(\.spanStart))")
                #expect(spans[...].lastIndex(startingAtOrBefore: time, hint: hint) == expected)
            }
        }
        // A slice keeps its own indices.
        let spans = (0..<10).map { Span(spanStart: Rational(Int64($0)), spanEnd: Rational(Int64($0) + 1)) }
        #expect(spans[4...].lastIndex(startingAtOrBefore: Rational(15, 2)) == 7)
        #expect(spans[4...].lastIndex(startingAtOrBefore: Rational(4)) == 4)
        #expect(spans[4...].lastIndex(startingAtOrBefore: Rational(7, 2)) == nil)
        #expect(spans[4...].index(containing: Rational(9)) == 9)
        #expect(spans[4...].index(containing: Rational(10)) == nil)
    }

    @Test func framesEqualTheNaiveScanInOrderAndAtRandom() {
        var rng = SplitMix64(seed: 0xF4A3E)
        for round in 0..<150 {
            let plan = Self.randomPlan(&rng)
            var walking = FrameCursor(plan: plan)
            var jumping = FrameCursor(plan: plan)
            for k in 0..<plan.frameCount {
                let expected = Self.naiveFrame(plan, k)
                #expect(walking.frame(k) == expected, "round \(round) frame \(k), in order")
                let j = Int.random(in: 0..<plan.frameCount, using: &rng)
                #expect(jumping.frame(j) == Self.naiveFrame(plan, j), "round \(round) frame \(j), at random")
            }
            // Backwards, and the one-off API.
            for k in stride(from: plan.frameCount - 1, through: 0, by: -7) {
                #expect(walking.frame(k) == Self.naiveFrame(plan, k), "round \(round) frame \(k), backwards")
                #expect(plan.frame(k) == Self.naiveFrame(plan, k), "round \(round) frame \(k), plan.frame")
            }
        }
    }

    @Test func segmentAndInstructionLookupsEqualTheScan() {
        var rng = SplitMix64(seed: 0x5E6)
        for _ in 0..<300 {
            let plan = Self.randomPlan(&rng)
            for _ in 0..<50 {
                let time = Rational(Int64.random(in: -10...(Int64(plan.duration.seconds) * 10 + 10), using: &rng), 10)
                for track in plan.videoTracks {
                    #expect(track.segment(at: time) == track.segments.first { $0.at <= time && time < $0.end })
                }
                #expect(plan.instruction(at: time) == plan.instructions.first { $0.timeRange.contains(time) } ?? plan.instructions.last)
            }
        }
    }

    // MARK: - The naive scans

    /// `RenderPlan.frame(_:)` as it was: a scan for every lookup.
    static func naiveFrame(_ plan: RenderPlan, _ k: Int) -> FrameDescription {
        let time = plan.frameDuration * k
        let instruction = plan.instructions.first { $0.timeRange.contains(time) } ?? plan.instructions.last
        var layers: [LayerDraw] = []
        for layer in (instruction?.layers ?? []).reversed() {
            guard let track = plan.videoTracks.first(where: { $0.id == layer.trackID }),
                  let segment = track.segments.first(where: { $0.at <= time && time < $0.end }),
                  let asset = plan.assets[segment.asset]?.description,
                  let video = asset.video else { continue }
            let base: AffineTransform
            switch layer.transform {
            case .preferred: base = video.preferredTransform
            case .fit: base = RenderDefaults.fitTransform(video, into: plan.renderSize)
            case .fill: base = RenderDefaults.fillTransform(video, into: plan.renderSize)
            case .explicit(let t): base = t
            }
            let placed = naiveRamp(layer.transformRamps, base: base, at: time) { $0.interpolated(to: $1, $2) }
            layers.append(LayerDraw(trackID: layer.trackID, asset: segment.asset,
                                    sourceTime: asset.kind == .still ? .zero : segment.sourceStart + (time - segment.at),
                                    transform: placed.concatenating(plan.renderToOutput),
                                    opacity: naiveRamp(layer.opacityRamps, base: layer.opacity, at: time) { $0 + ($1 - $0) * $2 },
                                    crop: layer.crop))
        }
        let overlays = plan.overlays.indices.compactMap { i -> OverlayDraw? in
            guard plan.overlays[i].timeRange.contains(time) else { return nil }
            return plan.overlayDraw(i, at: time)
        }
        return FrameDescription(index: k, time: time, background: instruction?.backgroundColor ?? .black, layers: layers, overlays: overlays)
    }

    static func naiveRamp<V>(_ ramps: [Ramp<V>], base: V, at time: Rational, _ interpolate: (V, V, Double) -> V) -> V {
        guard let ramp = ramps.last(where: { $0.start <= time }) else { return base }
        if time >= ramp.end { return ramp.to }
        return interpolate(ramp.from, ramp.to, ((time - ramp.start) / ramp.duration).seconds)
    }

    // MARK: - Random plans

    /// A plan that keeps `RenderPlan`'s invariants (sorted, non-overlapping segments and ramps,
    /// instructions tiling the duration) without going through the validator: gaps, segments
    /// shorter than a frame, tracks missing from instructions, overlapping overlays and
    /// animations of one property that override each other all occur.
    static func randomPlan(_ rng: inout SplitMix64) -> RenderPlan {
        let denominators: [Int64] = [1, 2, 3, 10, 24, 30]
        func time(_ upTo: Int64) -> Rational {
            let den = denominators.randomElement(using: &rng)!
            return Rational(Int64.random(in: 0...(upTo * den), using: &rng), den)
        }
        func positive(_ upTo: Int64) -> Rational {
            let den = denominators.randomElement(using: &rng)!
            return Rational(Int64.random(in: 1...(upTo * den), using: &rng), den)
        }
        let movie = AssetDescription(kind: .movie, duration: Rational(10_000),
                                     video: VideoTrackDescription(naturalSize: PixelSize(width: 640, height: 360), preferredTransform: .identity,
                                                                  frameDuration: Rational(1, 30), hasAlpha: false, codec: "h264"),
                                     audio: nil)
        let portrait = AssetDescription(kind: .movie, duration: Rational(10_000),
                                        video: VideoTrackDescription(naturalSize: PixelSize(width: 320, height: 240),
                                                                     preferredTransform: AffineTransform(a: 0, b: 1, c: -1, d: 0, tx: 240, ty: 0),
                                                                     frameDuration: Rational(1, 25), hasAlpha: false, codec: "h264"),
                                        audio: nil)
        let still = AssetDescription(kind: .still, duration: nil,
                                     video: VideoTrackDescription(naturalSize: PixelSize(width: 200, height: 100), preferredTransform: .identity,
                                                                  frameDuration: nil, hasAlpha: true, codec: "png"),
                                     audio: nil)
        let assets = ["m": PlannedAsset(url: "/m.mp4", description: movie), "p": PlannedAsset(url: "/p.mp4", description: portrait),
                      "s": PlannedAsset(url: "/s.png", description: still)]

        var tracks: [PlannedTrack] = []
        var duration = Rational(1, 10)
        for id in 1...Int.random(in: 1...3, using: &rng) {
            var t = time(2)
            var segments: [PlannedSegment] = []
            for _ in 0..<Int.random(in: 0...12, using: &rng) {
                let length = Bool.random(using: &rng) ? positive(3) : Rational(Int64.random(in: 1...3, using: &rng), 100)
                segments.append(PlannedSegment(asset: ["m", "p", "s"].randomElement(using: &rng)!, sourceStart: time(20), at: t, duration: length))
                t = t + length + (Bool.random(using: &rng) ? .zero : time(2))
            }
            duration = max(duration, segments.last?.end ?? .zero)
            tracks.append(PlannedTrack(id: id * 10, segments: segments))
        }
        func ramps<V>(_ value: () -> V) -> [Ramp<V>] {
            var t = time(3) - Rational(1)
            return (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                let ramp = Ramp(from: value(), to: value(), start: t, duration: positive(3))
                t = ramp.end + (Bool.random(using: &rng) ? .zero : time(2))
                return ramp
            }
        }
        func transform() -> AffineTransform {
            AffineTransform(a: rng.unit() + 0.5, b: rng.unit() - 0.5, c: rng.unit() - 0.5, d: rng.unit() + 0.5, tx: rng.unit() * 100, ty: rng.unit() * 100)
        }
        var cuts = (0..<Int.random(in: 0...6, using: &rng)).map { _ in time(Int64(duration.seconds) + 1) }.filter { $0 > .zero && $0 < duration }
        cuts = Array(Set(cuts)).sorted()
        let bounds = [Rational.zero] + cuts + [duration]
        let instructions = zip(bounds, bounds.dropFirst()).map { start, end in
            let layers = tracks.shuffled(using: &rng).prefix(Int.random(in: 0...tracks.count, using: &rng)).map { track in
                let kinds: [LayerTransform] = [.preferred, .fit, .fill, .explicit(transform())]
                return PlannedLayer(trackID: track.id, transform: kinds.randomElement(using: &rng)!, transformRamps: ramps(transform),
                                    opacity: rng.unit(), opacityRamps: ramps { rng.unit() },
                                    crop: Bool.random(using: &rng) ? Rect(x: 1, y: 2, width: 30, height: 40) : nil)
            }
            return PlannedInstruction(timeRange: TimeRange(start: start, duration: end - start),
                                      backgroundColor: RGBAColor(r: UInt8.random(in: 0...255, using: &rng), g: 0, b: 9), layers: Array(layers))
        }
        let overlays = (0..<Int.random(in: 0...12, using: &rng)).map { i -> PlannedOverlay in
            // Without animations: the per-overlay evaluation is `RenderPlan.overlayDraw(_:at:)`'s
            // own; what is checked here is which overlays the schedule finds visible.
            let animations: [OverlayAnimation] = []
            let kind: PlannedOverlay.Kind = Bool.random(using: &rng) ? .image(assetID: "s") : .text(text: "t\(i)", font: "sans", fontSize: 20, color: .white)
            return PlannedOverlay(kind: kind, frame: Rect(x: 10, y: 20, width: 100, height: 40), opacity: rng.unit(),
                                  timeRange: TimeRange(start: time(Int64(duration.seconds) + 1), duration: positive(4)), animations: animations)
        }
        let frameDuration = [Rational(1, 24), Rational(1, 30), Rational(1001, 30000), Rational(1, 10)].randomElement(using: &rng)!
        let export = ExportSettings(resolving: ExportOptions(preset: .medium), frameDuration: frameDuration)
        return RenderPlan(renderSize: PixelSize(width: 640, height: 360), outputSize: PixelSize(width: 640, height: 360),
                          frameDuration: frameDuration, duration: duration, frameCount: Int(duration.ceilDiv(frameDuration)),
                          assets: assets, videoTracks: tracks, audioTracks: [], instructions: instructions, overlays: overlays, export: export)
    }
}
