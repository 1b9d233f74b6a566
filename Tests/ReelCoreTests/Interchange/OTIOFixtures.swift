@testable import ReelCore

/// OpenTimelineIO documents shaped exactly as OTIO 0.18's serializer writes them (keys, schema
/// versions, doubles), for the pure mapping tests. The end-to-end tests build their timelines
/// with OTIO itself (Python); these keep the unit tests free of any tool.
enum OTIO {
    static func number(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? "\(Int64(x)).0" : "\(x)"
    }
    static func time(_ value: Double, _ rate: Double) -> String {
        #"{"OTIO_SCHEMA": "RationalTime.1", "rate": \#(number(rate)), "value": \#(number(value))}"#
    }
    static func range(_ start: Double, _ duration: Double, rate: Double = 24) -> String {
        #"{"OTIO_SCHEMA": "TimeRange.1", "duration": \#(time(duration, rate)), "start_time": \#(time(start, rate))}"#
    }
    static func item(_ schema: String, name: String, sourceRange: String?, effects: [String] = [], markers: [String] = [],
                     enabled: Bool = true, extra: String = "") -> String {
        #"{"OTIO_SCHEMA": "\#(schema)", "metadata": {}, "name": "\#(name)", "source_range": \#(sourceRange ?? "null"), "effects": [\#(effects.joined(separator: ", "))], "markers": [\#(markers.joined(separator: ", "))], "enabled": \#(enabled), "color": null\#(extra)}"#
    }
    static func external(_ url: String, available: String? = nil) -> String {
        #"{"OTIO_SCHEMA": "ExternalReference.1", "metadata": {}, "name": "", "available_range": \#(available ?? "null"), "available_image_bounds": null, "target_url": "\#(url)"}"#
    }
    static let missing = #"{"OTIO_SCHEMA": "MissingReference.1", "metadata": {}, "name": "", "available_range": null, "available_image_bounds": null}"#

    static func clip(_ name: String, _ url: String, start: Double, duration: Double, rate: Double = 24, available: String? = nil,
                     reference: String? = nil, effects: [String] = [], markers: [String] = [], enabled: Bool = true) -> String {
        item("Clip.2", name: name, sourceRange: range(start, duration, rate: rate), effects: effects, markers: markers, enabled: enabled,
             extra: #", "media_references": {"DEFAULT_MEDIA": \#(reference ?? external(url, available: available))}, "active_media_reference_key": "DEFAULT_MEDIA""#)
    }
    static func gap(_ duration: Double, rate: Double = 24) -> String {
        item("Gap.1", name: "", sourceRange: range(0, duration, rate: rate))
    }
    static func dissolve(in inOffset: Double, out outOffset: Double, rate: Double = 24, type: String = "SMPTE_Dissolve") -> String {
        #"{"OTIO_SCHEMA": "Transition.1", "metadata": {}, "name": "", "in_offset": \#(time(inOffset, rate)), "out_offset": \#(time(outOffset, rate)), "transition_type": "\#(type)"}"#
    }
    static func warp(_ scalar: Double) -> String {
        #"{"OTIO_SCHEMA": "LinearTimeWarp.1", "metadata": {}, "name": "", "effect_name": "LinearTimeWarp", "enabled": true, "time_scalar": \#(number(scalar))}"#
    }
    static let freeze = #"{"OTIO_SCHEMA": "FreezeFrame.1", "metadata": {}, "name": "", "effect_name": "FreezeFrame", "enabled": true, "time_scalar": 0.0}"#
    static func effect(_ name: String) -> String {
        #"{"OTIO_SCHEMA": "Effect.1", "metadata": {}, "name": "", "effect_name": "\#(name)", "enabled": true}"#
    }
    static func marker(_ name: String, at frame: Double) -> String {
        #"{"OTIO_SCHEMA": "Marker.2", "metadata": {}, "name": "\#(name)", "color": "RED", "marked_range": \#(range(frame, 0)), "comment": ""}"#
    }
    static func track(_ name: String, _ children: [String], kind: String = "Video", sourceRange: String? = nil, enabled: Bool = true) -> String {
        item("Track.1", name: name, sourceRange: sourceRange, enabled: enabled,
             extra: #", "children": [\#(children.joined(separator: ", "))], "kind": "\#(kind)""#)
    }
    static func stack(_ children: [String], name: String = "tracks", sourceRange: String? = nil) -> String {
        item("Stack.1", name: name, sourceRange: sourceRange, extra: #", "children": [\#(children.joined(separator: ", "))]"#)
    }
    static func timeline(_ tracks: [String], globalStart: String? = nil) -> String {
        #"{"OTIO_SCHEMA": "Timeline.1", "metadata": {}, "name": "cut", "global_start_time": \#(globalStart ?? "null"), "tracks": \#(stack(tracks))}"#
    }

    /// Imports `otio` with the given files present under `/media`.
    static func read(_ otio: String, files: Set<String> = ["/media/a.mp4", "/media/b.mp4", "/media/c.mp4", "/media/s.wav"],
                     mediaRoot: String? = nil, size: PixelSize? = nil, fps: Rational? = nil) -> Result<ImportedTimeline, CompositionError> {
        let lookup = MediaLookup(timelineDirectory: "/media", mediaRoot: mediaRoot, exists: { files.contains($0) })
        return TimelineImport.read(Array(otio.utf8), format: .otio, options: .init(lookup: lookup, renderSize: size, frameRate: fps))
    }

    /// Every file a 10 s 24 fps 320x180 movie with sound, except `.wav` files (sound only).
    static func plan(_ imported: ImportedTimeline) throws -> RenderPlan {
        let composition = try Composition.parse(imported.text)
        var resolutions: [String: AssetResolution] = [:]
        for (id, asset) in composition.assets {
            let description = asset.url.hasSuffix(".wav") ? Fixtures.sound(duration: 10)
                : Fixtures.movie(320, 180, duration: 10, frameDuration: Rational(1, 24))
            resolutions[id] = .described(url: asset.url, description)
        }
        return try CompositionValidator.validate(composition, assets: resolutions).get()
    }
}
