import ArgumentParser
import ReelCore

/// How `reel concat --transition` passes from one clip to the next.
enum ConcatTransition: String, CaseIterable, ExpressibleByArgument {
    /// A cross-dissolve: the outgoing clip's opacity ramps from 1 to 0 over the incoming one.
    case fade
    /// The incoming clip is revealed from the left edge to the right: the outgoing clip, on
    /// top, is cropped away by a crop rectangle ramp.
    case wipe
    /// The incoming clip enters from the right and pushes the outgoing one out to the left
    /// (transform ramps).
    case slide
}

/// The composition of clips that overlap by a transition: an A/B roll. Clip `i` is on video
/// track 1 (even `i`) or 2 (odd `i`), and its sound on audio track 3 or 4, so consecutive clips
/// overlap for `seconds`; the instructions show each clip alone between transitions, and both
/// during one, with the ramps the transition needs. The sound cross-fades with volume ramps.
struct ConcatTransitionPlan {
    struct Clip {
        var id: String
        var video: VideoTrackDescription
        var duration: Rational
        var hasAudio: Bool
    }

    var clips: [Clip]
    var transition: ConcatTransition
    var seconds: Rational
    var renderSize: PixelSize

    /// Where each clip starts: each after the previous one's end minus the transition.
    var starts: [Rational] {
        var at = Rational.zero
        return clips.map { clip in
            defer { at += clip.duration - seconds }
            return at
        }
    }

    var end: Rational { starts.last! + clips.last!.duration }

    /// The first clip too short for its transitions, with what it needs.
    func tooShort() -> (index: Int, needs: Rational)? {
        for (i, clip) in clips.enumerated() {
            let sides = (i > 0 ? 1 : 0) + (i < clips.count - 1 ? 1 : 0)
            let needs = seconds * sides
            if clip.duration < needs { return (i, needs) }
        }
        return nil
    }

    func videoTracks() -> [[String: Any]] {
        (0..<2).compactMap { parity in
            let segments = clips.indices.filter { $0 % 2 == parity }.map { i -> [String: Any] in
                ["asset": clips[i].id, "at": starts[i].description]
            }
            return segments.isEmpty ? nil : ["id": 1 + parity, "mediaType": "video", "segments": segments]
        }
    }

    /// Audio tracks 3 and 4 with their cross-fade ramps (none when no clip has sound).
    func audio() -> (tracks: [[String: Any]], mix: [[String: Any]]) {
        var tracks: [[String: Any]] = [], mix: [[String: Any]] = []
        for parity in 0..<2 {
            let indices = clips.indices.filter { $0 % 2 == parity && clips[$0].hasAudio }
            guard !indices.isEmpty else { continue }
            let id = 3 + parity
            tracks.append(["id": id, "mediaType": "audio",
                           "segments": indices.map { ["asset": clips[$0].id, "at": starts[$0].description] as [String: Any] }])
            var ramps: [[String: Any]] = []
            for i in indices {
                if i > 0 { ramps.append(ramp(0, 1, start: starts[i])) }
                if i < clips.count - 1 { ramps.append(ramp(1, 0, start: starts[i + 1])) }
            }
            if !ramps.isEmpty { mix.append(["track": id, "volumeRamps": ramps]) }
        }
        return (tracks, mix)
    }

    /// Instructions tiling the whole: each clip alone, then each transition with both.
    func instructions() -> [[String: Any]] {
        var list: [[String: Any]] = []
        let starts = starts
        for i in clips.indices {
            // Clip i alone: after the transition into it, until the next clip starts.
            let from = i == 0 ? .zero : starts[i] + seconds
            let until = i == clips.count - 1 ? end : starts[i + 1]
            if until > from {
                list.append(instruction(TimeRange(start: from, duration: until - from), layers: [["track": track(i), "transform": "fit"]]))
            }
            if i < clips.count - 1 {
                list.append(instruction(TimeRange(start: starts[i + 1], duration: seconds), layers: transitionLayers(from: i)))
            }
        }
        return list
    }

    private func track(_ i: Int) -> Int { 1 + i % 2 }

    private func transitionLayers(from i: Int) -> [[String: Any]] {
        let range = TimeRange(start: starts[i + 1], duration: seconds)
        let outgoing = track(i), incoming = track(i + 1)
        switch transition {
        case .fade:
            return [["track": outgoing, "transform": "fit", "opacityRamps": [ramp(1, 0, start: range.start)]],
                    ["track": incoming, "transform": "fit"]]
        case .wipe:
            // The edge moves across the outgoing clip's upright picture from its left side to its
            // right; the crop is in coded pixels, so it goes through the inverse of the clip's
            // own rotation.
            let video = clips[i].video
            let display = video.displaySize
            let toCoded = video.preferredTransform.inverted ?? .identity
            let whole = toCoded.boundingBox(of: Rect(x: 0, y: 0, width: Double(display.width), height: Double(display.height)))
            let gone = toCoded.boundingBox(of: Rect(x: Double(display.width), y: 0, width: 0, height: Double(display.height)))
            return [["track": outgoing, "transform": "fit",
                     "cropRectangleRamps": [["from": rect(whole), "to": rect(gone), "timeRange": timeRange(range)]]],
                    ["track": incoming, "transform": "fit"]]
        case .slide:
            let width = Double(renderSize.width)
            let fitOut = RenderDefaults.fitTransform(clips[i].video, into: renderSize)
            let fitIn = RenderDefaults.fitTransform(clips[i + 1].video, into: renderSize)
            return [["track": outgoing, "transform": "fit",
                     "transformRamps": [["from": matrix(fitOut), "to": matrix(fitOut.concatenating(.translation(-width, 0))), "timeRange": timeRange(range)]]],
                    ["track": incoming, "transform": "fit",
                     "transformRamps": [["from": matrix(fitIn.concatenating(.translation(width, 0))), "to": matrix(fitIn), "timeRange": timeRange(range)]]]]
        }
    }

    private func instruction(_ range: TimeRange, layers: [[String: Any]]) -> [String: Any] {
        ["timeRange": timeRange(range), "layerInstructions": layers]
    }

    private func ramp(_ from: Double, _ to: Double, start: Rational) -> [String: Any] {
        ["from": from, "to": to, "timeRange": timeRange(TimeRange(start: start, duration: seconds))]
    }

    private func timeRange(_ r: TimeRange) -> [String: Any] { ["start": r.start.description, "duration": r.duration.description] }
    private func rect(_ r: Rect) -> [String: Any] { ["x": r.x, "y": r.y, "width": r.width, "height": r.height] }
    private func matrix(_ t: AffineTransform) -> [String: Any] { ["a": t.a, "b": t.b, "c": t.c, "d": t.d, "tx": t.tx, "ty": t.ty] }
}
