/// Turns `EditDecisions` into a Reel composition (docs/composition.md), as the JSON a user
/// could have written, plus where each track segment and asset came from.
///
/// **Rolls.** A lane whose clips overlap at transitions is spread over several composition
/// tracks ("rolls", as in A/B-roll editing): each clip goes to the first roll that is free when
/// it starts, so the clips of a dissolve are on different rolls. An audio roll whose volume was
/// faded to 0 takes a later clip only if that clip fades in, or if there is idle time to bring
/// the volume back to 1 unheard; otherwise a new roll is used.
///
/// **Layers.** OTIO stacks tracks bottom first, a composition lists layers top first: the last
/// video lane becomes the first track. Without transitions the composition has no
/// `instructions` (each track fitted, first on top — the defaults). With video transitions the
/// timeline is cut at every transition's start and end; inside a dissolve the incoming roll is
/// drawn directly above the outgoing one with an opacity ramp 0→1 (source-over gives
/// `(1−α)·A + α·B`), a fade from nothing ramps the incoming roll 0→1 and a fade to nothing the
/// outgoing roll 1→0; every layer is `"fit"`, like the defaults.
///
/// **Sound.** An audio dissolve ramps the outgoing roll's volume 1→0 and the incoming roll's
/// 0→1 over the transition.
struct CompositionBuilder {
    var decisions: EditDecisions
    /// `--size`: the render size when given.
    var renderSize: PixelSize?
    /// `--fps`: overrides the cut's own frame rate.
    var frameDuration: Rational?
    var isStill: (String) -> Bool

    struct Output {
        var composition: JSONValue
        /// Composition JSON path (`tracks[2].segments[0]`, `assets.shotA`) → the item it came from.
        var origins: [String: ItemOrigin]
    }

    private struct Roll {
        var segments: [EditClip] = []
        var lastEnd: Rational = .zero
        /// Audio: the volume after the last clip (0 after a fade out).
        var silent = false
        var volumeRamps: [(from: Double, to: Double, range: TimeRange)] = []
    }

    private struct PlacedLane {
        var lane: EditLane
        var rolls: [Roll]
        var rollOfClip: [Int: Int]
        /// Composition track id of each roll.
        var trackIDs: [Int] = []
    }

    func build() -> Result<Output, CompositionError> {
        var problems: [Problem] = []
        var placed: [PlacedLane] = []
        for lane in decisions.lanes {
            problems += overlappingTransitions(lane)
            placed.append(assignRolls(lane))
        }
        guard problems.isEmpty else { return .failure(CompositionError(problems: problems)) }

        // Track ids: video lanes top first, then audio lanes.
        var nextID = 1
        var order: [Int] = []
        for i in placed.indices.reversed() where placed[i].lane.kind == .video { order.append(i) }
        for i in placed.indices where placed[i].lane.kind == .audio { order.append(i) }
        order = order.filter { !placed[$0].lane.clips.isEmpty || placed[$0].lane.end > .zero }
        for i in order {
            placed[i].trackIDs = placed[i].rolls.indices.map { _ in defer { nextID += 1 }; return nextID }
        }

        var assets = AssetNames()
        var origins: [String: ItemOrigin] = [:]
        var tracks: [JSONValue] = []
        var audioMix: [JSONValue] = []
        var duration = Rational.zero
        for i in order {
            let lane = placed[i]
            let laneEnd = max(lane.lane.end, lane.rolls.map(\.lastEnd).max() ?? .zero)
            duration = max(duration, laneEnd)
            for (r, roll) in lane.rolls.enumerated() {
                let trackIndex = tracks.count
                var segments: [JSONValue] = []
                for clip in roll.segments {
                    let asset = assets.id(for: clip.media)
                    if origins["assets.\(asset)"] == nil { origins["assets.\(asset)"] = clip.origin }
                    origins["tracks[\(trackIndex)].segments[\(segments.count)]"] = clip.origin
                    segments += self.segments(for: clip, asset: asset)
                }
                // The track's end marks time (a trailing gap), on the first roll after every roll's clips.
                if r == 0, laneEnd > (lane.rolls.map(\.lastEnd).max() ?? .zero) {
                    let start = lane.rolls.map(\.lastEnd).max() ?? .zero
                    segments.append(.object(JSONObject([.init(key: "empty", value: JSONTime.range(start: start, duration: laneEnd - start))])))
                }
                tracks.append(.object(JSONObject([
                    .init(key: "id", value: .number("\(lane.trackIDs[r])")),
                    .init(key: "mediaType", value: .string(lane.lane.kind.rawValue)),
                    .init(key: "segments", value: .array(segments)),
                ])))
                if lane.lane.kind == .audio, !roll.volumeRamps.isEmpty {
                    let ramps = roll.volumeRamps.sorted { $0.range.start < $1.range.start }.map {
                        Self.ramp(from: $0.from, to: $0.to, over: $0.range)
                    }
                    audioMix.append(.object(JSONObject([
                        .init(key: "track", value: .number("\(lane.trackIDs[r])")),
                        .init(key: "volumeRamps", value: .array(ramps)),
                    ])))
                }
            }
        }

        var video: [JSONObject.Member] = []
        if let renderSize {
            video.append(.init(key: "renderSize", value: .object(JSONObject([
                .init(key: "width", value: .number("\(renderSize.width)")),
                .init(key: "height", value: .number("\(renderSize.height)")),
            ]))))
        }
        if let fd = frameDuration ?? decisions.frameDuration { video.append(.init(key: "frameDuration", value: JSONTime.value(fd))) }
        let videoLanes = order.filter { placed[$0].lane.kind == .video }.map { placed[$0] }
        if videoLanes.contains(where: { !$0.lane.transitions.isEmpty }), duration > .zero {
            video.append(.init(key: "instructions", value: .array(instructions(videoLanes, duration: duration))))
        }

        var members: [JSONObject.Member] = [
            .init(key: "formatVersion", value: .number("1")),
            .init(key: "assets", value: assets.table),
            .init(key: "tracks", value: .array(tracks)),
        ]
        if !audioMix.isEmpty { members.append(.init(key: "audioMix", value: .array(audioMix))) }
        if !video.isEmpty { members.append(.init(key: "videoComposition", value: .object(JSONObject(video)))) }
        return .success(Output(composition: .object(JSONObject(members)), origins: origins))
    }

    // MARK: - Rolls

    private func overlappingTransitions(_ lane: EditLane) -> [Problem] {
        let sorted = lane.transitions.sorted { $0.range.start < $1.range.start }
        var problems: [Problem] = []
        for (a, b) in zip(sorted, sorted.dropFirst()) where b.range.start < a.range.end {
            problems.append(Problem(path: b.origin.path, message: "\(b.origin.what) overlaps \(a.origin.what) (\(a.origin.path)): "
                + "the clip between them is shorter than the two transitions; shorten a transition"))
        }
        return problems
    }

    private func assignRolls(_ lane: EditLane) -> PlacedLane {
        let fadesIn = Set(lane.transitions.compactMap(\.incoming)), fadesOut = Set(lane.transitions.compactMap(\.outgoing))
        var rolls: [Roll] = []
        var rollOf: [Int: Int] = [:]
        for clip in lane.clips.sorted(by: { ($0.at, $0.id) < ($1.at, $1.id) }) {
            let enters = fadesIn.contains(clip.id)
            let r = rolls.firstIndex { roll in
                roll.lastEnd <= clip.at && (lane.kind == .video || !roll.silent || enters || roll.lastEnd < clip.at)
            } ?? { rolls.append(Roll()); return rolls.count - 1 }()
            if lane.kind == .audio, rolls[r].silent, !enters {
                // Back to full volume while this roll is idle, unheard.
                rolls[r].volumeRamps.append((0, 1, TimeRange(start: rolls[r].lastEnd, duration: clip.at - rolls[r].lastEnd)))
            }
            rolls[r].segments.append(clip)
            rolls[r].lastEnd = clip.at + clip.duration
            rolls[r].silent = fadesOut.contains(clip.id)
            rollOf[clip.id] = r
        }
        if rolls.isEmpty { rolls.append(Roll()) }
        if lane.kind == .audio {
            for t in lane.transitions {
                if let out = t.outgoing, let r = rollOf[out] { rolls[r].volumeRamps.append((1, 0, t.range)) }
                if let inc = t.incoming, let r = rollOf[inc] { rolls[r].volumeRamps.append((0, 1, t.range)) }
            }
        }
        return PlacedLane(lane: lane, rolls: rolls, rollOfClip: rollOf)
    }

    // MARK: - Segments

    private func segments(for clip: EditClip, asset: String) -> [JSONValue] {
        if isStill(clip.media) {
            return [.object(JSONObject([
                .init(key: "asset", value: .string(asset)), .init(key: "at", value: JSONTime.value(clip.at)),
                .init(key: "duration", value: JSONTime.value(clip.duration)),
            ]))]
        }
        switch clip.timing {
        case .normal:
            return [Self.plain(asset: asset, at: clip.at, start: clip.sourceStart, duration: clip.duration)]
        case .speed(let scalar):
            return [TimeWarpMapping.segment(asset: asset, at: clip.at, duration: clip.duration, sourceStart: clip.sourceStart, scalar: scalar)]
        case .freeze(let frame):
            // Not a speed change (a frame held for seconds is far below 1/16×): one frame of source, placed again for every frame the clip lasts: each shows the held frame.
            var out: [JSONValue] = []
            var at = clip.at
            let end = clip.at + clip.duration
            while at < end {
                let length = min(frame, end - at)
                out.append(Self.plain(asset: asset, at: at, start: clip.sourceStart, duration: length))
                at += length
            }
            return out
        }
    }

    private static func plain(asset: String, at: Rational, start: Rational, duration: Rational) -> JSONValue {
        .object(JSONObject([
            .init(key: "asset", value: .string(asset)), .init(key: "at", value: JSONTime.value(at)),
            .init(key: "sourceRange", value: JSONTime.range(start: start, duration: duration)),
        ]))
    }

    private static func ramp(from: Double, to: Double, over range: TimeRange) -> JSONValue {
        .object(JSONObject([
            .init(key: "from", value: .number(from == 0 ? "0" : "1")), .init(key: "to", value: .number(to == 0 ? "0" : "1")),
            .init(key: "timeRange", value: JSONTime.range(start: range.start, duration: range.duration)),
        ]))
    }

    // MARK: - Instructions

    /// Instructions tiling `[0, duration)`, cut at every video transition's start and end.
    private func instructions(_ lanes: [PlacedLane], duration: Rational) -> [JSONValue] {
        var cuts: Set<Rational> = [.zero, duration]
        for lane in lanes {
            for t in lane.lane.transitions {
                cuts.insert(min(max(t.range.start, .zero), duration))
                cuts.insert(min(max(t.range.end, .zero), duration))
            }
        }
        let bounds = cuts.sorted()
        var pieces: [(range: TimeRange, layers: [JSONValue])] = []
        for (start, end) in zip(bounds, bounds.dropFirst()) where end > start {
            let drawn = lanes.flatMap { layers(of: $0, from: start, to: end) }
            if let last = pieces.last, last.layers == drawn {
                pieces[pieces.count - 1].range.duration = end - last.range.start
            } else {
                pieces.append((TimeRange(start: start, duration: end - start), drawn))
            }
        }
        return pieces.map {
            .object(JSONObject([
                .init(key: "timeRange", value: JSONTime.range(start: $0.range.start, duration: $0.range.duration)),
                .init(key: "layerInstructions", value: .array($0.layers)),
            ]))
        }
    }

    /// The lane's layers, top first, during `[start, end)`.
    private func layers(of lane: PlacedLane, from start: Rational, to end: Rational) -> [JSONValue] {
        func layer(_ roll: Int, ramp: (Double, Double, TimeRange)? = nil) -> JSONValue {
            var members: [JSONObject.Member] = [.init(key: "track", value: .number("\(lane.trackIDs[roll])")),
                                                 .init(key: "transform", value: .string("fit"))]
            if let ramp {
                members.append(.init(key: "opacity", value: .number(ramp.0 == 0 ? "0" : "1")))
                members.append(.init(key: "opacityRamps", value: .array([Self.ramp(from: ramp.0, to: ramp.1, over: ramp.2)])))
            }
            return .object(JSONObject(members))
        }
        var order = Array(lane.rolls.indices)
        var ramps: [Int: (Double, Double, TimeRange)] = [:]
        if let t = lane.lane.transitions.first(where: { $0.range.start <= start && end <= $0.range.end }) {
            let incoming = t.incoming.flatMap { lane.rollOfClip[$0] }, outgoing = t.outgoing.flatMap { lane.rollOfClip[$0] }
            var front: [Int] = []
            if let incoming {
                front.append(incoming)
                ramps[incoming] = (0, 1, t.range)
            }
            if let outgoing {
                front.append(outgoing)
                if incoming == nil { ramps[outgoing] = (1, 0, t.range) }
            }
            order = front + order.filter { !front.contains($0) }
        }
        return order.map { layer($0, ramp: ramps[$0]) }
    }
}

/// Asset ids from file names: `shot_A.mov` → `shot_A`, a second `shot_A.mp4` elsewhere → `shot_A-2`.
struct AssetNames {
    private var byPath: [String: String] = [:]
    private var used: Set<String> = []
    private var members: [JSONObject.Member] = []

    mutating func id(for path: String) -> String {
        if let known = byPath[path] { return known }
        let file = path.split(separator: "/").last.map(String.init) ?? path
        var stem = file
        if let dot = file.lastIndex(of: "."), dot > file.startIndex { stem = String(file[..<dot]) }
        let cleaned = String(stem.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" ? $0 : "_" })
        let base = cleaned.isEmpty ? "media" : cleaned
        var id = base
        var n = 2
        while used.contains(id) { id = "\(base)-\(n)"; n += 1 }
        used.insert(id)
        byPath[path] = id
        members.append(.init(key: id, value: .object(JSONObject([.init(key: "url", value: .string(path))]))))
        return id
    }

    var table: JSONValue { .object(JSONObject(members)) }
}
