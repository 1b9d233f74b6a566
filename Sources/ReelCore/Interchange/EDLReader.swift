/// Reads a CMX 3600 edit decision list into `EditDecisions`.
///
/// An event line is `NNN  REEL  CHANNELS  TRANSITION [DURATION]  SRC-IN SRC-OUT REC-IN REC-OUT`;
/// comment lines (`* …`) and `M2` lines after it belong to its event. docs/interchange.md says
/// what each part becomes. In short:
/// - **Time.** Timecodes count frames at the list's rate: `--fps`, or 29.97 for `FCM: DROP FRAME`
///   (drop-frame counting, exact: `Timecode`). A list without a drop-frame `FCM` and without
///   `--fps` is refused (an EDL does not say its rate). Composition time 0 is the earliest
///   record-in of any event, so a list starting at 01:00:00:00 starts at 0.
/// - **Media.** A reel is found from its event's comments — `* FROM CLIP:`/`* FROM FILE:`/
///   `* SOURCE FILE:` (a path), then `* FROM CLIP NAME:` (a file name) — then from the reel name
///   itself (with the usual movie and sound extensions), under the list's directory and
///   `--media-root`. Source timecode is time in the file from its start. `BL` is black (nothing).
/// - **Tracks.** `V` is the picture; `A`, `A2`, `AA`, `B` (= V + A), `A/V`, `AA/V`, `A3`… route
///   the file's sound to audio tracks A1, A2, …; the same sound on two audio tracks at the same
///   time (a stereo pair listed as A and A2) plays once, with a warning.
/// - **Transitions.** `C` is a cut. A dissolve is the event pair `NNN … C` (outgoing) and
///   `NNN … D DUR` (incoming): the incoming clip starts at its record-in, and the outgoing source
///   runs on from the `C` line's source-out for DUR frames while the two cross-fade. Wipes and
///   keys are refused.
/// - **Speed.** `M2 REEL SPEED TC`: SPEED frames per second of source over the list's rate; 0
///   (or `* FREEZE FRAME`) holds the frame.
final class EDLReader {
    let lookup: MediaLookup
    let frameRate: Rational?
    private(set) var problems: [Problem] = []
    private(set) var warnings: [String] = []
    private var nextClipID = 0

    init(lookup: MediaLookup, frameRate: Rational?) { self.lookup = lookup; self.frameRate = frameRate }

    private func report(_ path: String, _ message: String) { problems.append(Problem(path: path, message: message)) }

    /// One event line, as written.
    private struct EventLine {
        var line: Int
        var number: String
        var reel: String
        var channels: String
        var transition: String
        var transitionFrames: Int64?
        var timecodes: [Timecode]
        var dropFrame: Bool
    }

    /// An event: its lines (two for a dissolve) and the comments and M2 lines after them.
    private struct Event {
        var lines: [EventLine]
        var comments: [(line: Int, text: String)] = []
        var motion: (line: Int, text: String)?
    }

    func read(_ text: String) -> EditDecisions? {
        let events = parse(text)
        guard !events.isEmpty else {
            if problems.isEmpty { report("", "the EDL lists no events") }
            return nil
        }
        let usesDropFrame = events.contains { $0.lines.contains(where: \.dropFrame) }
        let rate: Rational
        if let frameRate { rate = frameRate } else if usesDropFrame { rate = Rational(30000, 1001) } else {
            report("", "an EDL does not say its frame rate: give it with --fps (24, 25, 30, 23.976, 29.97, …)")
            return nil
        }
        let nominal = rate.rounded
        guard nominal >= 1 else { report("", "the frame rate \(rate) is too low for timecode"); return nil }

        // Every timecode as a frame number; nil for an event with a timecode that names no frame.
        let frames: [[[Int64]]?] = events.map { event in
            var ok = true
            let numbers = event.lines.map { line in
                line.timecodes.map { tc in
                    switch tc.frameNumber(nominalRate: nominal, dropFrame: line.dropFrame) {
                    case .success(let n): return n
                    case .failure(let error):
                        report(Self.path(line), "timecode \(error)")
                        ok = false
                        return 0
                    }
                }
            }
            return ok ? numbers : nil
        }
        let recordZero = frames.compactMap { $0 }.flatMap { $0.map { $0[2] } }.min() ?? 0
        let frame = Rational.one / rate
        func seconds(_ n: Int64) -> Rational { frame * Int(n) }
        func record(_ n: Int64) -> Rational { frame * Int(n - recordZero) }

        var lanes: [String: EditLane] = [:]
        func laneKeys(_ line: EventLine) -> [String]? {
            guard let keys = Self.tracks(forChannels: line.channels) else {
                report(Self.path(line), "channels \"\(line.channels)\" are not CMX 3600 channels Reel reads (V, A, A2, AA, B, A/V, AA/V, A3 …)")
                return nil
            }
            return keys
        }
        /// Adds the clip to each lane; returns its id in each.
        @discardableResult
        func add(_ clip: EditClip, to keys: [String]) -> [String: Int] {
            var ids: [String: Int] = [:]
            for key in keys {
                var lane = lanes[key] ?? EditLane(kind: key.hasPrefix("V") ? .video : .audio, label: "track \(key)")
                if lane.kind == .audio, case .freeze = clip.timing {
                    warnings.append("\(clip.origin.path): \(clip.origin.what) is a freeze frame on audio track \(key): it is silent")
                    continue
                }
                var copy = clip
                nextClipID += 1
                copy.id = nextClipID
                ids[key] = nextClipID
                lane.clips.append(copy)
                lanes[key] = lane
            }
            return ids
        }
        func extendEnd(_ keys: [String], to end: Rational) {
            for key in keys {
                var lane = lanes[key] ?? EditLane(kind: key.hasPrefix("V") ? .video : .audio, label: "track \(key)")
                lane.end = max(lane.end, end)
                lanes[key] = lane
            }
        }

        for (e, event) in events.enumerated() {
            guard let eventFrames = frames[e] else { continue }
            for comment in event.comments {
                let upper = comment.text.uppercased()
                if upper.hasPrefix("LOC") { warnings.append("line \(comment.line): locator \"\(comment.text)\" is ignored: a composition has no markers") }
                if upper.hasPrefix("ASC_") { warnings.append("line \(comment.line): colour decision \"\(comment.text)\" is ignored: Reel does not grade") }
            }
            let lines = event.lines
            if let bad = lines.first(where: { !["C", "D"].contains($0.transition) }) {
                report(Self.path(bad), "transition \"\(bad.transition)\" (a wipe or key) is not rendered; Reel renders cuts (C) and dissolves (D)")
                continue
            }
            guard lines.count <= 2, lines.count == 1 || (lines[0].transition == "C" && lines[1].transition == "D") else {
                report(Self.path(lines[0]), "event \(lines[0].number) has \(lines.count) lines; an event is one cut line, or a cut line and a dissolve line")
                continue
            }
            let timing = motion(event, rate: rate)
            for (l, line) in lines.enumerated() {
                let f = eventFrames[l]
                let recIn = record(f[2]), recOut = record(f[3])
                guard let keys = laneKeys(line) else { continue }
                guard recOut >= recIn, f[1] >= f[0] else {
                    report(Self.path(line), "an out timecode is before its in timecode"); continue
                }
                extendEnd(keys, to: recOut)
                let isDissolve = line.transition == "D"
                if isDissolve && line.transitionFrames == nil {
                    report(Self.path(line), "a dissolve (D) needs its duration in frames after the D"); continue
                }
                let fade = frame * Int(line.transitionFrames ?? 0)
                let isIncoming = isDissolve
                let (refs, name) = references(event, line: line, incoming: isIncoming && lines.count == 2)
                let black = Self.isBlack(line.reel)

                // The outgoing side's tail of a two-line dissolve: the C line's source runs on.
                if isDissolve, lines.count == 2, let fadeFrames = line.transitionFrames {
                    let cut = lines[0], cf = eventFrames[0]
                    var tails: [String: Int] = [:], incomings: [String: Int] = [:]
                    if !Self.isBlack(cut.reel) {
                        let cutRefs = references(event, line: cut, incoming: false)
                        guard let media = locate(event, line: cut, refs: cutRefs) else { continue }
                        tails = add(EditClip(id: 0, origin: origin(cut, name: cutRefs.name), media: media,
                                             at: recIn, duration: fade, sourceStart: seconds(cf[1])), to: keys)
                    }
                    if !black {
                        guard let media = locate(event, line: line, refs: (refs, name)) else { continue }
                        guard recOut - recIn >= fade else {
                            report(Self.path(line), "the dissolve lasts \(fadeFrames) frames, longer than its event"); continue
                        }
                        incomings = add(EditClip(id: 0, origin: origin(line, name: name), media: media, at: recIn, duration: recOut - recIn,
                                                 sourceStart: seconds(f[0])), to: keys)
                    }
                    for key in keys where tails[key] != nil || incomings[key] != nil {
                        lanes[key]!.transitions.append(EditTransition(origin: ItemOrigin(path: Self.path(line), what: "the dissolve of event \(line.number)"),
                                                                      range: TimeRange(start: recIn, duration: fade),
                                                                      outgoing: tails[key], incoming: incomings[key]))
                    }
                    continue
                }
                if isDissolve {
                    report(Self.path(line), "a dissolve needs its cut line first (NNN REEL V C … then NNN REEL V D DUR …)"); continue
                }
                guard recOut > recIn, !black else { continue }
                guard let media = locate(event, line: line, refs: (refs, name)) else { continue }
                var clipTiming = ClipTiming.normal
                let sourceFrames = f[1] - f[0], recordFrames = f[3] - f[2]
                switch timing {
                case nil: continue
                case .normal?:
                    if sourceFrames != recordFrames {
                        report(Self.path(line), "the source lasts \(sourceFrames) frames but the record \(recordFrames), and no M2 line gives a speed; fix the timecodes")
                        continue
                    }
                case .freeze?: clipTiming = .freeze(frame: frame)
                case .speed(let s)?: clipTiming = .speed(s)
                }
                add(EditClip(id: 0, origin: origin(line, name: name), media: media, at: recIn, duration: recOut - recIn,
                             sourceStart: seconds(f[0]), timing: clipTiming), to: keys)
            }
        }
        guard problems.isEmpty else { return nil }

        var decisions = EditDecisions(frameDuration: frame)
        let keys = lanes.keys.sorted { Self.laneOrder($0) < Self.laneOrder($1) }
        for key in keys {
            var lane = lanes[key]!
            lane.clips.sort { ($0.at, $0.id) < ($1.at, $1.id) }
            checkOverlaps(&lane)
            decisions.lanes.append(lane)
        }
        dropRepeatedSound(&decisions)
        return problems.isEmpty ? decisions : nil
    }

    // MARK: - Lines

    private func parse(_ text: String) -> [Event] {
        var events: [Event] = []
        var dropFrame = false
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        for (i, raw) in lines.enumerated() {
            let number = i + 1
            let line = raw.trimmingCharacters(in: " \t")
            if line.isEmpty { continue }
            let upper = line.uppercased()
            if upper.hasPrefix("TITLE:") { continue }
            if upper.hasPrefix("FCM:") {
                let mode = upper.dropFirst(4).trimmingCharacters(in: " \t")
                if mode.hasPrefix("DROP") { dropFrame = true } else if mode.hasPrefix("NON") { dropFrame = false } else {
                    report("line \(number)", "FCM must be DROP FRAME or NON-DROP FRAME, not \"\(mode)\"")
                }
                continue
            }
            if line.hasPrefix("*") {
                let body = String(line.drop { $0 == "*" || $0 == " " })
                if events.isEmpty { continue } // a comment before the first event describes the list
                events[events.count - 1].comments.append((number, body))
                continue
            }
            if upper.hasPrefix("M2") {
                guard !events.isEmpty else { report("line \(number)", "an M2 line must follow its event"); continue }
                events[events.count - 1].motion = (number, String(line))
                continue
            }
            if upper.hasPrefix("AUD") || upper.hasPrefix("SPLIT") || upper.hasPrefix("SWM") {
                report("line \(number)", "\"\(line)\": split edits, audio channel extensions and swap lines are not supported")
                continue
            }
            let tokens = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let first = tokens.first, first.allSatisfy(\.isWholeNumber) else {
                report("line \(number)", "\"\(line)\" is not an EDL event, comment, FCM or M2 line")
                continue
            }
            guard let event = eventLine(tokens, line: number, dropFrame: dropFrame) else { continue }
            if let last = events.last, last.lines.last?.number == event.number, last.comments.isEmpty, last.motion == nil {
                events[events.count - 1].lines.append(event)
            } else {
                events.append(Event(lines: [event]))
            }
        }
        return events
    }

    /// Parses from the right, so a reel name with spaces stays whole.
    private func eventLine(_ tokens: [Substring], line: Int, dropFrame: Bool) -> EventLine? {
        let path = "line \(line)"
        guard tokens.count >= 8 else {
            report(path, "an event line needs: number, reel, channels, transition, and four timecodes (source in/out, record in/out)")
            return nil
        }
        let codes = tokens.suffix(4).compactMap { Timecode(parsing: $0) }
        guard codes.count == 4 else { report(path, "the last four fields must be timecodes HH:MM:SS:FF"); return nil }
        var rest = Array(tokens.dropFirst().dropLast(4))
        var duration: Int64?
        if let last = rest.last, last.allSatisfy(\.isWholeNumber), rest.count >= 4 {
            duration = Int64(last)
            rest.removeLast()
        }
        guard rest.count >= 3 else { report(path, "an event line needs a reel, channels and a transition"); return nil }
        let transition = String(rest.removeLast()).uppercased()
        let channels = String(rest.removeLast()).uppercased()
        return EventLine(line: line, number: String(tokens[0]), reel: rest.joined(separator: " "), channels: channels,
                         transition: transition, transitionFrames: duration, timecodes: codes, dropFrame: dropFrame)
    }

    /// The speed an event's M2 line (or `* FREEZE FRAME`) gives it; nil after a problem.
    private func motion(_ event: Event, rate: Rational) -> ClipTiming? {
        if event.comments.contains(where: { $0.text.uppercased().contains("FREEZE FRAME") }) { return .freeze(frame: .one) }
        guard let m2 = event.motion else { return .normal }
        let fields = m2.text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count >= 3, let speedText = fields.dropLast().last, let fps = Double(speedText), let speed = EditRate.value(fps) else {
            report("line \(m2.line)", "an M2 line is M2 REEL SPEED TIMECODE (speed in frames per second)")
            return nil
        }
        let scalar = speed / rate
        if scalar == .zero { return .freeze(frame: .one) }
        if scalar < .zero { report("line \(m2.line)", "event \(event.lines[0].number) plays backwards (M2 \(speedText)); Reel does not render reverse playback"); return nil }
        if scalar == .one { return .normal }
        return .speed(scalar)
    }

    // MARK: - Media

    /// Where an event line's media may be: the file comments first, then the clip name.
    private func references(_ event: Event, line: EventLine, incoming: Bool) -> (refs: [String], name: String?) {
        let side = incoming ? "TO" : "FROM"
        var paths: [String] = [], name: String?
        for comment in event.comments {
            let upper = comment.text.uppercased()
            func body(after prefix: String) -> String? {
                guard upper.hasPrefix(prefix) else { return nil }
                let rest = comment.text.dropFirst(prefix.count).drop { $0 == ":" || $0 == " " || $0 == "\t" }
                return rest.isEmpty ? nil : String(rest).trimmingCharacters(in: " \t")
            }
            if let n = body(after: "\(side) CLIP NAME") { name = n; continue }
            if let p = body(after: "\(side) CLIP") ?? body(after: "\(side) FILE") { paths.append(p); continue }
            if !incoming, let p = body(after: "SOURCE FILE") { paths.append(p) }
        }
        var refs = paths
        if let name { refs.append(name) }
        let reel = line.reel
        if !reel.isEmpty, reel.uppercased() != "AX" {
            refs.append(reel)
            refs += MediaLookup.reelExtensions.map { "\(reel).\($0)" }
        }
        return (refs, name)
    }

    private func locate(_ event: Event, line: EventLine, refs: (refs: [String], name: String?)) -> String? {
        if Self.isBlack(line.reel) { return nil }
        if line.reel.uppercased() == "BARS" {
            report(Self.path(line), "reel BARS (colour bars) is not media Reel has; put a bars file in the cut instead")
            return nil
        }
        guard !refs.refs.isEmpty else {
            report(Self.path(line), "reel \(line.reel) names no file: add a * FROM CLIP NAME: comment, or name the reel after its file")
            return nil
        }
        if let remote = refs.refs.first(where: MediaLookup.isRemote) { return remote }
        switch lookup.locate(refs.refs) {
        case .success(let path):
            if lookup.isStill(path) {
                report(Self.path(line), "reel \(line.reel) is a still image (\(path)); EDL events take timed media")
                return nil
            }
            return path
        case .failure(let notFound):
            report(Self.path(line), "reel \(line.reel)\(refs.name.map { " (clip \"\($0)\")" } ?? ""): \(notFound.message)")
            return nil
        }
    }

    private func origin(_ line: EventLine, name: String?) -> ItemOrigin {
        ItemOrigin(path: Self.path(line), what: "event \(line.number), reel \(line.reel)\(name.map { ", clip \"\($0)\"" } ?? "")")
    }

    // MARK: - Checks

    /// Clips of one lane may overlap only where a dissolve joins them.
    private func checkOverlaps(_ lane: inout EditLane) {
        let joined = Set(lane.transitions.flatMap { [$0.outgoing, $0.incoming].compactMap { $0 } })
        for (a, b) in zip(lane.clips, lane.clips.dropFirst()) where b.at < a.at + a.duration {
            if joined.contains(a.id) && joined.contains(b.id) { continue }
            report(b.origin.path, "\(b.origin.what) starts before \(a.origin.what) (\(a.origin.path)) ends on \(lane.label): record times overlap")
        }
    }

    /// A file's whole sound is played for each audio track it is on: the same sound at the same
    /// time on two tracks (a stereo pair listed channel by channel) is kept once.
    private func dropRepeatedSound(_ decisions: inout EditDecisions) {
        var seen: [String: String] = [:]
        for l in decisions.lanes.indices where decisions.lanes[l].kind == .audio {
            let lane = decisions.lanes[l]
            let joined = Set(lane.transitions.flatMap { [$0.outgoing, $0.incoming].compactMap { $0 } })
            decisions.lanes[l].clips.removeAll { clip in
                guard !joined.contains(clip.id) else { return false }
                let key = "\(clip.media)|\(clip.at)|\(clip.duration)|\(clip.sourceStart)"
                if let first = seen[key] {
                    warnings.append("\(clip.origin.path): \(clip.origin.what) on \(lane.label) repeats the sound on \(first); it plays once (Reel plays a file's whole audio, every channel)")
                    return true
                }
                seen[key] = lane.label
                return false
            }
        }
    }

    // MARK: - Names

    private static func path(_ line: EventLine) -> String { "line \(line.line)" }

    static func isBlack(_ reel: String) -> Bool { ["BL", "BLK", "BLACK"].contains(reel.uppercased()) }

    /// Lane keys for a channel field: `V`/`V2` for pictures, `A1`, `A2`, … for sound.
    static func tracks(forChannels channels: String) -> [String]? {
        switch channels {
        case "V": return ["V"]
        case "A": return ["A1"]
        case "AA": return ["A1", "A2"]
        case "B", "A/V": return ["V", "A1"]
        case "AA/V": return ["V", "A1", "A2"]
        case "A2/V": return ["V", "A2"]
        case "NONE": return []
        default:
            if channels.hasPrefix("A"), let n = Int(channels.dropFirst()), n >= 1 { return ["A\(n)"] }
            if channels.hasPrefix("V"), let n = Int(channels.dropFirst()), n >= 1 { return [n == 1 ? "V" : "V\(n)"] }
            return nil
        }
    }

    /// Video lanes bottom first (V, V2, …), then audio lanes.
    static func laneOrder(_ key: String) -> (Int, Int) {
        let n = Int(key.dropFirst()) ?? 1
        return (key.hasPrefix("V") ? 0 : 1, n)
    }
}

private extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        var s = Substring(self)
        while let f = s.first, chars.contains(f) { s = s.dropFirst() }
        while let l = s.last, chars.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
