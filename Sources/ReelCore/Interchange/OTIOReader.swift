/// Reads an OpenTimelineIO timeline (`.otio`, the JSON form written by OTIO's own serializer)
/// into `EditDecisions`: nested stacks and tracks flattened, trims applied, transitions
/// resolved into overlapping clips, media found through `MediaLookup`.
///
/// The schema followed is OTIO's (`Timeline.1`, `Stack.1`, `Track.1`, `Clip.1`/`Clip.2`, `Gap.1`,
/// `Transition.1`, `ExternalReference.1`, `LinearTimeWarp.1`, `FreezeFrame.1`, `Marker.1`/`.2`,
/// `RationalTime.1`, `TimeRange.1`); docs/interchange.md lists each item, what it becomes and
/// what is refused. Every refusal is a `Problem` at the item's JSON path in the `.otio` file,
/// naming the item; every problem is collected before giving up. Markers and disabled items are
/// not rendered and say so in `warnings`.
final class OTIOReader {
    let lookup: MediaLookup
    private(set) var problems: [Problem] = []
    private(set) var warnings: [String] = []
    private var nextClipID = 0
    /// The rates of clips' and gaps' ranges in video tracks: the cut's frame rate when they agree.
    private var videoRates: Set<Rational> = []

    /// Known schema versions: a newer one is refused rather than half-read.
    static let knownVersions: [String: Int] = [
        "Timeline": 1, "Stack": 1, "Track": 1, "Clip": 2, "Gap": 1, "Transition": 1,
        "ExternalReference": 1, "MissingReference": 1, "ImageSequenceReference": 1, "GeneratorReference": 1,
        "LinearTimeWarp": 1, "FreezeFrame": 1, "Effect": 1, "TimeEffect": 1, "Marker": 2,
        "RationalTime": 1, "TimeRange": 1, "SerializableCollection": 1,
    ]

    init(lookup: MediaLookup) { self.lookup = lookup }

    func report(_ path: String, _ message: String) { problems.append(Problem(path: path, message: message)) }

    func read(_ json: JSONValue) -> EditDecisions? {
        guard let timeline = object(json, at: "") else { return nil }
        guard let (name, _) = schema(timeline, at: "") else { return nil }
        guard name == "Timeline" else {
            report("", "the file holds an OTIO \(name), not a Timeline: export the timeline itself (a sequence) from the editor")
            return nil
        }
        var decisions = EditDecisions()
        var globalRate: Rational?
        if let start = timeline["global_start_time"], start != .null {
            globalRate = rationalTime(start, at: "global_start_time")?.rate
        }
        markers(timeline, at: "", what: "the timeline")
        guard let stackValue = timeline["tracks"], let stack = object(stackValue, at: "tracks"),
              let (stackSchema, _) = schema(stack, at: "tracks") else {
            if timeline["tracks"] == nil { report("tracks", "is required: the timeline's stack of tracks") }
            return nil
        }
        guard stackSchema == "Stack" else {
            report("tracks", "must be a Stack, not a \(stackSchema)")
            return nil
        }
        let everything = TimeRange(start: .zero, duration: TimeDomain.maximumSecondsRational)
        decisions.lanes = flattenStack(stack, at: "tracks", placedAt: .zero, window: everything, kind: nil)
        decisions.frameDuration = (globalRate ?? (videoRates.count == 1 ? videoRates.first : nil)).map { Rational.one / $0 }
        return decisions
    }

    // MARK: - Compositions

    /// A stack's children all start at its start; the first is at the bottom.
    private func flattenStack(_ o: JSONObject, at path: String, placedAt p: Rational, window: TimeRange, kind: EditLane.Kind?) -> [EditLane] {
        let what = "stack \(quotedName(o))"
        markers(o, at: path, what: what)
        refuseEffects(o, at: path, what: what)
        guard enabled(o, at: path, what: what) else { return [] }
        guard let children = array(o["children"], at: "\(path).children") else { return [] }
        let durations = children.map { duration(of: $0) }
        guard let trim = trimmedRange(o, at: path, natural: durations.compactMap { $0 }.max() ?? .zero) else { return [] }
        let base = p - trim.start
        let inner = window.intersection(TimeRange(start: p, duration: trim.duration))
        var lanes: [EditLane] = []
        for (i, child) in children.enumerated() {
            let childPath = "\(path).children[\(i)]"
            guard let c = object(child, at: childPath), let (name, _) = schema(c, at: childPath) else { continue }
            switch name {
            case "Track": lanes += flattenTrack(c, at: childPath, placedAt: base, window: inner)
            case "Stack": lanes += flattenStack(c, at: childPath, placedAt: base, window: inner, kind: kind)
            case "Clip", "Gap":
                guard let kind else {
                    report(childPath, "a \(name.lowercased()) directly in the timeline's stack belongs to no track: put it in a video or audio track")
                    continue
                }
                lanes += layOut([child], at: { _ in childPath }, base: base, window: inner, kind: kind,
                                label: "\(what) (\(path))", trackName: what)
            case "Transition":
                report(childPath, "a transition must be inside a track, between two items, not directly in \(what)")
            default:
                unsupported(name, at: childPath, in: what)
            }
        }
        return lanes
    }

    private func flattenTrack(_ o: JSONObject, at path: String, placedAt p: Rational, window: TimeRange) -> [EditLane] {
        let what = "track \(quotedName(o))"
        markers(o, at: path, what: what)
        refuseEffects(o, at: path, what: what)
        let kind: EditLane.Kind
        switch o["kind"] {
        case .string("Video"): kind = .video
        case .string("Audio"): kind = .audio
        case .string(let other):
            report("\(path).kind", "\(what) is of kind \"\(other)\"; Reel renders \"Video\" and \"Audio\" tracks")
            return []
        default:
            report("\(path).kind", "\(what) needs a kind, \"Video\" or \"Audio\"")
            return []
        }
        guard enabled(o, at: path, what: what) else { return [] }
        guard let children = array(o["children"], at: "\(path).children") else { return [] }
        let natural = children.reduce(Rational.zero) { $0 + (duration(of: $1) ?? .zero) }
        guard let trim = trimmedRange(o, at: path, natural: natural) else { return [] }
        let inner = window.intersection(TimeRange(start: p, duration: trim.duration))
        return layOut(children, at: { "\(path).children[\($0)]" }, base: p - trim.start, window: inner, kind: kind,
                      label: "\(what) (\(path))", trackName: what)
    }

    private enum Laid {
        case clip(id: Int?)   // nil: trimmed away, disabled, or unusable
        case gap
        case nested
        case transition
    }

    /// Lays a track's children end to end from `base` (composition time of the track's time 0),
    /// keeping what falls inside `window`. Returns the track's own lane first, then the lanes of
    /// nested tracks and stacks.
    private func layOut(_ children: [JSONValue], at childPath: (Int) -> String, base: Rational, window: TimeRange,
                        kind: EditLane.Kind, label: String, trackName: String) -> [EditLane] {
        var lane = EditLane(kind: kind, label: label)
        var nested: [EditLane] = []
        var laid: [Laid] = []
        var transitions: [(index: Int, cut: Rational, o: JSONObject)] = []
        var cursor = Rational.zero
        for (i, child) in children.enumerated() {
            let path = childPath(i)
            let what = "item \(i) of \(trackName)"
            guard let o = object(child, at: path), let (name, _) = schema(o, at: path) else { laid.append(.gap); continue }
            switch name {
            case "Clip":
                let placed = clip(o, at: path, what: "clip \(quotedName(o)), \(what)", kind: kind, start: base + cursor, window: window)
                if let placed { lane.clips.append(placed) }
                laid.append(.clip(id: placed?.id))
                cursor += duration(of: child) ?? .zero
            case "Gap":
                markers(o, at: path, what: "gap, \(what)")
                refuseEffects(o, at: path, what: "gap, \(what)")
                if let d = duration(of: child) {
                    noteRate(o, kind: kind)
                    cursor += d
                } else {
                    report(path, "gap, \(what), has no source_range (its duration)")
                }
                laid.append(.gap)
            case "Track":
                nested += flattenTrack(o, at: path, placedAt: base + cursor, window: window)
                cursor += duration(of: child) ?? .zero
                laid.append(.nested)
            case "Stack":
                nested += flattenStack(o, at: path, placedAt: base + cursor, window: window, kind: kind)
                cursor += duration(of: child) ?? .zero
                laid.append(.nested)
            case "Transition":
                transitions.append((i, base + cursor, o))
                laid.append(.transition)
            default:
                unsupported(name, at: path, in: trackName)
                laid.append(.gap)
            }
        }
        lane.end = min(base + cursor, window.end)
        for t in transitions {
            transition(t.o, at: childPath(t.index), index: t.index, cut: t.cut, laid: laid, lane: &lane, trackName: trackName)
        }
        return [lane] + nested
    }

    /// Resolves a transition: the clip before it runs on for `out_offset`, the clip after it
    /// starts `in_offset` early, and the two dissolve over `[cut − in_offset, cut + out_offset)`.
    private func transition(_ o: JSONObject, at path: String, index: Int, cut: Rational, laid: [Laid],
                            lane: inout EditLane, trackName: String) {
        let what = "transition \(quotedName(o)), item \(index) of \(trackName)"
        let type: String
        if case .string(let t) = o["transition_type"] { type = t } else { type = "" }
        guard type == "SMPTE_Dissolve" else {
            report("\(path).transition_type", "\(what) is a \"\(type)\"; Reel renders only \"SMPTE_Dissolve\" (a cross-dissolve)")
            return
        }
        guard let inOffset = rationalTime(o["in_offset"] ?? .null, at: "\(path).in_offset")?.seconds,
              let outOffset = rationalTime(o["out_offset"] ?? .null, at: "\(path).out_offset")?.seconds else { return }
        guard inOffset >= .zero, outOffset >= .zero, inOffset + outOffset > .zero else {
            report(path, "\(what) must have in_offset and out_offset ≥ 0 and a length > 0")
            return
        }
        func neighbour(_ i: Int) -> Int?? {
            guard laid.indices.contains(i) else { return .some(nil) }
            switch laid[i] {
            case .clip(let id): return .some(id)
            case .gap: return .some(nil)
            case .nested, .transition: return nil
            }
        }
        guard let outgoing = neighbour(index - 1), let incoming = neighbour(index + 1) else {
            report(path, "\(what) must sit between clips or gaps; a transition next to a nested track or stack, or another transition, is not supported")
            return
        }
        if let outgoing, let k = lane.clips.firstIndex(where: { $0.id == outgoing }) {
            lane.clips[k].duration += outOffset
        }
        if let incoming, let k = lane.clips.firstIndex(where: { $0.id == incoming }) {
            let earlier = lane.clips[k].timing.sourceOffset(for: inOffset)
            if lane.clips[k].sourceStart < earlier {
                report(path, "\(what) starts \(TimeFormatting.seconds(inOffset)) before the cut, but \(lane.clips[k].origin.what) has only "
                       + "\(TimeFormatting.seconds(lane.clips[k].sourceStart)) of media before its first frame: shorten in_offset or trim the clip later")
                return
            }
            lane.clips[k].at -= inOffset
            lane.clips[k].duration += inOffset
            lane.clips[k].sourceStart -= earlier
        }
        if outgoing == nil && incoming == nil {
            report(path, "\(what) joins nothing: there is no clip on either side of it")
            return
        }
        lane.transitions.append(EditTransition(origin: ItemOrigin(path: path, what: what),
                                               range: TimeRange(start: cut - inOffset, duration: inOffset + outOffset),
                                               outgoing: outgoing, incoming: incoming))
    }

    // MARK: - Clips

    /// A clip placed at `start` (composition time of its first frame), cut to `window`; nil when
    /// it is disabled, trimmed away or cannot be used (then a problem says why).
    private func clip(_ o: JSONObject, at path: String, what: String, kind: EditLane.Kind, start: Rational, window: TimeRange) -> EditClip? {
        markers(o, at: path, what: what)
        guard enabled(o, at: path, what: what) else { return nil }
        let timing = timeEffect(o, at: path, what: what)

        let (referencePath, reference) = mediaReference(o, at: path)
        guard let reference, let (refSchema, _) = schema(reference, at: referencePath) else {
            report(path, "\(what) has no media reference")
            return nil
        }
        var available: (start: Rational, duration: Rational, rate: Rational)?
        if let value = reference["available_range"], value != .null { available = timeRange(value, at: "\(referencePath).available_range") }
        var url: String?
        switch refSchema {
        case "ExternalReference":
            if case .string(let target) = reference["target_url"], !target.isEmpty { url = target } else {
                report("\(referencePath).target_url", "\(what): the external reference has no target_url")
            }
        case "MissingReference":
            report(referencePath, "\(what) has a MissingReference: its media was offline when the timeline was exported; relink it in the editor and export again")
        case "ImageSequenceReference":
            report(referencePath, "\(what) refers to an image sequence; Reel renders movie, sound and still image files: render the sequence to a movie first")
        case "GeneratorReference":
            report(referencePath, "\(what) is a generator (bars, a solid, a title); Reel renders only media files: render it to a movie first")
        default:
            unsupported(refSchema, at: referencePath, in: what)
        }

        var range: (start: Rational, duration: Rational, rate: Rational)?
        if let value = o["source_range"], value != .null {
            range = timeRange(value, at: "\(path).source_range")
        } else if let available {
            range = available
        } else {
            report(path, "\(what) has neither a source_range nor an available_range on its media: its length is unknown")
        }
        guard let url, let range, let timing else { return nil }
        let mediaStart = available?.start ?? .zero
        let sourceStart = range.start - mediaStart
        if sourceStart < .zero {
            report("\(path).source_range", "\(what) starts \(TimeFormatting.seconds(-sourceStart)) before its media's available_range")
            return nil
        }
        guard range.duration > .zero else {
            report("\(path).source_range.duration", "\(what) must last more than 0")
            return nil
        }
        if kind == .video { videoRates.insert(range.rate) }

        var clipTiming = timing
        if case .freeze = timing { clipTiming = .freeze(frame: Rational.one / range.rate) }
        if case .freeze = clipTiming, kind == .audio {
            warnings.append("\(path): \(what) is a freeze frame in an audio track: it is silent")
            return nil
        }

        let media: String
        if MediaLookup.isRemote(url) {
            media = url
        } else {
            switch lookup.locate([url]) {
            case .success(let found): media = found
            case .failure(let notFound):
                report("\(path)", "\(what): \(url): \(notFound.message)")
                return nil
            }
        }

        // Cut to the window the enclosing tracks and stacks leave visible.
        let placed = TimeRange(start: start, duration: range.duration).intersection(window)
        guard placed.duration > .zero else { return nil }
        nextClipID += 1
        return EditClip(id: nextClipID, origin: ItemOrigin(path: path, what: what), media: media, at: placed.start,
                        duration: placed.duration, sourceStart: sourceStart + clipTiming.sourceOffset(for: placed.start - start),
                        timing: clipTiming)
    }

    /// `media_references[active_media_reference_key]` (Clip.2) or `media_reference` (Clip.1).
    private func mediaReference(_ o: JSONObject, at path: String) -> (String, JSONObject?) {
        if case .object(let references)? = o["media_references"] {
            var key = "DEFAULT_MEDIA"
            if case .string(let k)? = o["active_media_reference_key"] { key = k }
            let refPath = "\(path).media_references.\(key)"
            guard let value = references[key] else { return (refPath, nil) }
            return (refPath, object(value, at: refPath))
        }
        guard let value = o["media_reference"], value != .null else { return ("\(path).media_reference", nil) }
        return ("\(path).media_reference", object(value, at: "\(path).media_reference"))
    }

    /// The clip's time effect: nil after a problem. `LinearTimeWarp` with scalar 1 is normal
    /// speed, 0 (or a `FreezeFrame`) a held frame; any other effect is refused.
    private func timeEffect(_ o: JSONObject, at path: String, what: String) -> ClipTiming? {
        guard let effects = array(o["effects"] ?? .array([]), at: "\(path).effects") else { return nil }
        var timing = ClipTiming.normal
        var found = 0
        var ok = true
        for (i, effect) in effects.enumerated() {
            let effectPath = "\(path).effects[\(i)]"
            guard let e = object(effect, at: effectPath), let (name, _) = schema(e, at: effectPath) else { ok = false; continue }
            var effectName = name
            if case .string(let n)? = e["effect_name"], !n.isEmpty { effectName = n }
            if case .bool(false)? = e["enabled"] {
                warnings.append("\(effectPath): the disabled effect \"\(effectName)\" on \(what) is not rendered")
                continue
            }
            switch name {
            case "FreezeFrame":
                timing = .freeze(frame: .one); found += 1
            case "LinearTimeWarp":
                found += 1
                guard case .number(let text)? = e["time_scalar"], let scalar = EditRate.double(text).flatMap(EditRate.value) else {
                    report("\(effectPath).time_scalar", "\(what): a LinearTimeWarp needs a numeric time_scalar"); ok = false; continue
                }
                if scalar == .one { continue }
                if scalar == .zero { timing = .freeze(frame: .one); continue }
                if scalar < .zero {
                    report(effectPath, "\(what) plays backwards (time_scalar \(text)); Reel does not render reverse playback"); ok = false; continue
                }
                timing = .speed(scalar)
            default:
                report(effectPath, "\(what) has the effect \"\(effectName)\" (\(name)), which Reel does not render: remove it, or render it in the editor first")
                ok = false
            }
        }
        if found > 1 {
            report("\(path).effects", "\(what) has \(found) time effects; Reel renders at most one per clip")
            return nil
        }
        return ok ? timing : nil
    }

    // MARK: - Durations and ranges

    /// An item's length in its parent (its trimmed range), or nil when it has none or is broken
    /// (the item's own reading reports why).
    private func duration(of value: JSONValue) -> Rational? {
        guard case .object(let o) = value, case .string(let s)? = o["OTIO_SCHEMA"] else { return nil }
        let name = s.split(separator: ".").first.map(String.init) ?? s
        if let range = o["source_range"], range != .null { return quietTimeRange(range)?.duration }
        switch name {
        case "Clip":
            let reference: JSONValue?
            if case .object(let refs)? = o["media_references"] {
                var key = "DEFAULT_MEDIA"
                if case .string(let k)? = o["active_media_reference_key"] { key = k }
                reference = refs[key]
            } else {
                reference = o["media_reference"]
            }
            if case .object(let r)? = reference, let available = r["available_range"], available != .null {
                return quietTimeRange(available)?.duration
            }
            return nil
        case "Gap":
            if let d = o["duration"] { return quietRationalTime(d)?.seconds }
            return nil
        case "Track":
            guard case .array(let children)? = o["children"] else { return nil }
            return children.reduce(Rational.zero) { $0 + (duration(of: $1) ?? .zero) }
        case "Stack":
            guard case .array(let children)? = o["children"] else { return nil }
            return children.compactMap { duration(of: $0) }.max() ?? .zero
        default:
            return name == "Transition" ? .zero : nil
        }
    }

    /// The item's `source_range` or, without one, `[0, natural)`.
    private func trimmedRange(_ o: JSONObject, at path: String, natural: Rational) -> TimeRange? {
        guard let value = o["source_range"], value != .null else { return TimeRange(start: .zero, duration: natural) }
        guard let r = timeRange(value, at: "\(path).source_range") else { return nil }
        return TimeRange(start: r.start, duration: r.duration)
    }

    private func noteRate(_ o: JSONObject, kind: EditLane.Kind) {
        if kind == .video, let value = o["source_range"], let r = quietTimeRange(value) { videoRates.insert(r.rate) }
    }

    // MARK: - Values

    func rationalTime(_ value: JSONValue, at path: String) -> (seconds: Rational, rate: Rational)? {
        guard let o = object(value, at: path), let (name, _) = schema(o, at: path) else { return nil }
        guard name == "RationalTime" else { report(path, "must be a RationalTime, not a \(name)"); return nil }
        guard case .number(let rateText)? = o["rate"], let rateDouble = EditRate.double(rateText), let rate = EditRate.exact(rateDouble) else {
            report("\(path).rate", "must be a rate > 0 (frames per second)"); return nil
        }
        guard case .number(let valueText)? = o["value"], let v = EditRate.double(valueText).flatMap(EditRate.value) else {
            report("\(path).value", "must be a number of frames"); return nil
        }
        return (v / rate, rate)
    }

    func timeRange(_ value: JSONValue, at path: String) -> (start: Rational, duration: Rational, rate: Rational)? {
        guard let o = object(value, at: path), let (name, _) = schema(o, at: path) else { return nil }
        guard name == "TimeRange" else { report(path, "must be a TimeRange, not a \(name)"); return nil }
        let start = rationalTime(o["start_time"] ?? .null, at: "\(path).start_time")
        let duration = rationalTime(o["duration"] ?? .null, at: "\(path).duration")
        guard let start, let duration else { return nil }
        if duration.seconds < .zero { report("\(path).duration", "must not be negative"); return nil }
        return (start.seconds, duration.seconds, duration.rate)
    }

    private func quietRationalTime(_ value: JSONValue) -> (seconds: Rational, rate: Rational)? {
        guard case .object(let o) = value, case .number(let r)? = o["rate"], case .number(let v)? = o["value"],
              let rate = EditRate.double(r).flatMap(EditRate.exact), let frames = EditRate.double(v).flatMap(EditRate.value) else { return nil }
        return (frames / rate, rate)
    }

    private func quietTimeRange(_ value: JSONValue) -> (start: Rational, duration: Rational, rate: Rational)? {
        guard case .object(let o) = value, let s = o["start_time"].flatMap(quietRationalTime),
              let d = o["duration"].flatMap(quietRationalTime) else { return nil }
        return (s.seconds, d.seconds, d.rate)
    }

    func object(_ value: JSONValue, at path: String) -> JSONObject? {
        guard case .object(let o) = value else {
            report(path, "must be an OTIO object, not \(value.typeName)")
            return nil
        }
        return o
    }

    func array(_ value: JSONValue?, at path: String) -> [JSONValue]? {
        guard case .array(let items)? = value else {
            report(path, "must be an array")
            return nil
        }
        return items
    }

    /// `"Name.version"`; a newer version than Reel knows is refused.
    func schema(_ o: JSONObject, at path: String) -> (String, Int)? {
        guard case .string(let s)? = o["OTIO_SCHEMA"] else {
            report(path, "has no OTIO_SCHEMA: this is not an OpenTimelineIO object")
            return nil
        }
        let parts = s.split(separator: ".")
        guard parts.count == 2, let version = Int(parts[1]) else {
            report("\(path).OTIO_SCHEMA", "\"\(s)\" is not an OTIO schema name (Name.version)")
            return nil
        }
        let name = String(parts[0])
        if let known = Self.knownVersions[name], version > known {
            report("\(path).OTIO_SCHEMA", "\(s) was written by a newer OpenTimelineIO than Reel reads (up to \(name).\(known))")
            return nil
        }
        return (name, version)
    }

    private func unsupported(_ schema: String, at path: String, in what: String) {
        report(path, "\(schema) (in \(what)) is not an OTIO schema Reel renders; see docs/interchange.md for what is supported")
    }

    private func enabled(_ o: JSONObject, at path: String, what: String) -> Bool {
        if case .bool(false)? = o["enabled"] {
            warnings.append("\(path): \(what) is disabled (enabled: false) and is not rendered")
            return false
        }
        return true
    }

    private func refuseEffects(_ o: JSONObject, at path: String, what: String) {
        guard case .array(let effects)? = o["effects"] else { return }
        for (i, effect) in effects.enumerated() {
            var name = "an effect"
            if case .object(let e) = effect {
                if case .string(let n)? = e["effect_name"], !n.isEmpty { name = "\"\(n)\"" }
                else if case .string(let s)? = e["OTIO_SCHEMA"] { name = s }
            }
            report("\(path).effects[\(i)]", "\(what) has \(name); Reel renders effects only as time effects on clips (LinearTimeWarp, FreezeFrame)")
        }
    }

    private func markers(_ o: JSONObject, at path: String, what: String) {
        guard case .array(let markers)? = o["markers"] else { return }
        for (i, marker) in markers.enumerated() {
            var name = ""
            var detail = ""
            if case .object(let m) = marker {
                if case .string(let n)? = m["name"] { name = n }
                if case .string(let c)? = m["color"] { detail = ", \(c)" }
                if let range = m["marked_range"], let r = quietTimeRange(range) { detail += ", at \(TimeFormatting.seconds(r.start)) of its item" }
            }
            warnings.append("\(path).markers[\(i)]: marker \"\(name)\"\(detail) on \(what) is ignored: a composition has no markers")
        }
    }

    func quotedName(_ o: JSONObject) -> String {
        if case .string(let n)? = o["name"], !n.isEmpty { return "\"\(n)\"" }
        return "(unnamed)"
    }
}

extension TimeRange {
    /// The part of `self` inside `other` (duration 0 when they do not meet).
    func intersection(_ other: TimeRange) -> TimeRange {
        let s = max(start, other.start), e = min(end, other.end)
        return TimeRange(start: s, duration: max(.zero, e - s))
    }
}

extension TimeDomain {
    static var maximumSecondsRational: Rational { Rational(maximumSeconds) }
}
