extension RenderPlan {
    /// Composition time of frame `k`: `k · frameDuration`, exact.
    public func time(ofFrame k: Int) -> Rational { frameDuration * k }

    /// What to draw for output frame `k` (0 ≤ k < frameCount); see `FrameCursor.frame(_:)`.
    ///
    /// For one frame: it arranges the overlays for lookup first (O(m log m) for m overlays).
    /// Code that evaluates many frames keeps one `FrameCursor` instead.
    public func frame(_ k: Int) -> FrameDescription {
        var cursor = FrameCursor(plan: self)
        return cursor.frame(k)
    }

    /// The instruction whose range contains `time` (the last one for times at or past the end).
    public func instruction(at time: Rational) -> PlannedInstruction? {
        instructions.index(containing: time).map { instructions[$0] } ?? instructions.last
    }
}

extension PlannedTrack {
    /// The segment showing at `time`, if any (a gap shows the layers below).
    public func segment(at time: Rational) -> PlannedSegment? {
        segments.index(containing: time).map { segments[$0] }
    }
}

extension PlannedAudioTrack {
    /// The segment playing at `time`, if any.
    public func segment(at time: Rational) -> PlannedSegment? {
        segments.index(containing: time).map { segments[$0] }
    }
}

/// Evaluates a plan's frames: every lookup by time (instruction, segment, ramp, overlay,
/// animation) is a binary search in the plan's sorted lists (`lastIndex(startingAtOrBefore:)`),
/// and the cursor remembers where each landed, so walking frames in order — a chunk's render,
/// its content key — costs O(1) per lookup, and any frame at random O(log n).
///
/// `frame(k)` depends only on the plan and `k`, never on what the cursor evaluated before
/// (the remembered positions are hints, checked before use).
public struct FrameCursor {
    public let plan: RenderPlan
    /// Video track id → index into `plan.videoTracks` (the first track with the id).
    private let trackPositions: [Int: Int]
    private let overlaySchedule: OverlaySchedule
    private var instructionHint: Int?
    /// Per video track (by position).
    private var segmentHints: [Int?]
    /// Per layer of the instruction last evaluated (reset when it changes).
    private var transformRampHints: [Int?] = []
    private var opacityRampHints: [Int?] = []
    /// Per layer of the instruction last evaluated: its segment and what follows from it alone.
    private var layerSources: [LayerSource?] = []
    /// Per layer of the instruction last evaluated: its track's index into `plan.videoTracks`.
    private var layerTracks: [Int?] = []
    private var hintedInstruction: Int?
    private let renderToOutput: AffineTransform

    /// What a layer draws while one segment lasts: the segment's asset is a still or not, and
    /// the layer's transform before ramps (fit and fill depend on the asset's size).
    private struct LayerSource {
        var segment: Int
        var isStill: Bool
        var base: AffineTransform
    }

    public init(plan: RenderPlan) {
        self.plan = plan
        var positions: [Int: Int] = [:]
        for (i, track) in plan.videoTracks.enumerated() where positions[track.id] == nil { positions[track.id] = i }
        trackPositions = positions
        overlaySchedule = OverlaySchedule(plan.overlays)
        segmentHints = Array(repeating: nil, count: plan.videoTracks.count)
        renderToOutput = plan.renderToOutput
    }

    /// What to draw for output frame `k` (0 ≤ k < frameCount).
    ///
    /// The active instruction is the one whose range contains the frame's time; layers are
    /// listed bottom first and only where their track has a segment at that time; overlays
    /// follow in array order, only while visible and not fully transparent.
    public mutating func frame(_ k: Int) -> FrameDescription {
        let time = plan.time(ofFrame: k)
        let instructionIndex = plan.instructions.index(containing: time, hint: instructionHint)
            ?? (plan.instructions.isEmpty ? nil : plan.instructions.count - 1)
        instructionHint = instructionIndex
        if instructionIndex != hintedInstruction {
            hintedInstruction = instructionIndex
            let count = instructionIndex.map { plan.instructions[$0].layers.count } ?? 0
            transformRampHints = Array(repeating: nil, count: count)
            opacityRampHints = Array(repeating: nil, count: count)
            layerSources = Array(repeating: nil, count: count)
            layerTracks = instructionIndex.map { plan.instructions[$0].layers.map { trackPositions[$0.trackID] } } ?? []
        }
        // The plan's instructions, layers and segments are read in place (`plan.instructions[i]
        // .layers[l].…`), not copied out per frame: a copy retains and releases every array in
        // them, which was a fifth of keying a long timeline.
        let toOutput = renderToOutput
        var layers: [LayerDraw] = []
        if let i = instructionIndex {
            layers.reserveCapacity(plan.instructions[i].layers.count)
            for l in plan.instructions[i].layers.indices.reversed() {
                guard let position = layerTracks[l],
                      let s = plan.videoTracks[position].segments.index(containing: time, hint: segmentHints[position]) else { continue }
                segmentHints[position] = s
                let source: LayerSource
                if let known = layerSources[l], known.segment == s {
                    source = known
                } else {
                    guard let asset = plan.assets[plan.videoTracks[position].segments[s].asset]?.description, let video = asset.video else { continue }
                    let base: AffineTransform
                    switch plan.instructions[i].layers[l].transform {
                    case .preferred: base = video.preferredTransform
                    case .fit: base = RenderDefaults.fitTransform(video, into: plan.renderSize)
                    case .fill: base = RenderDefaults.fillTransform(video, into: plan.renderSize)
                    case .explicit(let t): base = t
                    }
                    source = LayerSource(segment: s, isStill: asset.kind == .still, base: base)
                    layerSources[l] = source
                }
                let placed = RampedValue.value(at: time, base: source.base, ramps: plan.instructions[i].layers[l].transformRamps,
                                               hint: &transformRampHints[l])
                let filters = plan.instructions[i].layers[l].filters
                layers.append(LayerDraw(
                    trackID: plan.instructions[i].layers[l].trackID,
                    asset: plan.videoTracks[position].segments[s].asset,
                    sourceTime: source.isStill ? .zero : plan.videoTracks[position].segments[s].sourceTime(at: time),
                    transform: placed.concatenating(toOutput),
                    opacity: RampedValue.value(at: time, base: plan.instructions[i].layers[l].opacity,
                                               ramps: plan.instructions[i].layers[l].opacityRamps, hint: &opacityRampHints[l]),
                    crop: RampedValue.value(at: time, base: plan.instructions[i].layers[l].crop, ramps: plan.instructions[i].layers[l].cropRamps),
                    filters: filters.isEmpty ? [] : filters.map { $0.evaluated(at: time) },
                    blendMode: plan.instructions[i].layers[l].blendMode))
            }
        }
        let overlayDraws = overlaySchedule.visible(at: time).compactMap {
            plan.overlayDraw($0, at: time)
        }
        return FrameDescription(index: k, time: time, background: instructionIndex.map { plan.instructions[$0].backgroundColor } ?? .black,
                                layers: layers, overlays: overlayDraws, filters: plan.filters.isEmpty ? [] : plan.filters.map { $0.evaluated(at: time) })
    }
}

/// Which overlays are visible at a time. Overlays may overlap in time and are drawn in array
/// order, so this is not a sorted non-overlapping list: they are sorted by start, and a tree
/// over that order keeps the latest end in each subtree, so a lookup descends only into
/// subtrees that hold a visible overlay — O(log m) plus O(log m) per visible overlay.
struct OverlaySchedule {
    private struct Entry: TimeSpanned {
        var overlay: Int
        var spanStart: Rational
        var spanEnd: Rational
    }

    /// Sorted by start (ties in array order).
    private let entries: [Entry]
    /// Node 1 covers `entries[0..<count]`; node n's children are 2n and 2n+1 over the halves.
    private var latestEnd: [Rational]

    init(_ overlays: [PlannedOverlay]) {
        entries = overlays.enumerated()
            .map { Entry(overlay: $0.offset, spanStart: $0.element.timeRange.start, spanEnd: $0.element.timeRange.end) }
            .sorted { ($0.spanStart, $0.overlay) < ($1.spanStart, $1.overlay) }
        latestEnd = Array(repeating: .zero, count: max(1, 4 * entries.count))
        if !entries.isEmpty { build(node: 1, entries.startIndex, entries.endIndex) }
    }

    private mutating func build(node: Int, _ lo: Int, _ hi: Int) {
        if hi - lo == 1 { latestEnd[node] = entries[lo].spanEnd; return }
        let mid = (lo + hi) / 2
        build(node: 2 * node, lo, mid)
        build(node: 2 * node + 1, mid, hi)
        latestEnd[node] = max(latestEnd[2 * node], latestEnd[2 * node + 1])
    }

    /// Indices of the overlays whose time range contains `time`, ascending (draw order).
    func visible(at time: Rational) -> [Int] {
        guard let last = entries.lastIndex(startingAtOrBefore: time) else { return [] }
        var found: [Int] = []
        collect(node: 1, 0, entries.count, startedBefore: last + 1, time, into: &found)
        return found.count > 1 ? found.sorted() : found
    }

    /// Adds the entries in `[lo, hi) ∩ [0, started)` that end after `time`.
    private func collect(node: Int, _ lo: Int, _ hi: Int, startedBefore started: Int, _ time: Rational, into found: inout [Int]) {
        guard lo < started, time < latestEnd[node] else { return }
        if hi - lo == 1 { found.append(entries[lo].overlay); return }
        let mid = (lo + hi) / 2
        collect(node: 2 * node, lo, mid, startedBefore: started, time, into: &found)
        collect(node: 2 * node + 1, mid, hi, startedBefore: started, time, into: &found)
    }
}
