import Foundation
import Testing
@testable import ReelCore
import ReelThreadTesting

/// The OpenTimelineIO mapping (docs/interchange.md), checked on the composition it writes and
/// on the frames the validated plan then describes.
@Suite(.blocking) struct OTIOMappingTests {
    private func imported(_ otio: String, mediaRoot: String? = nil, fps: Rational? = nil,
                          files: Set<String> = ["/media/a.mp4", "/media/b.mp4", "/media/c.mp4", "/media/s.wav"]) throws -> ImportedTimeline {
        try OTIO.read(otio, files: files, mediaRoot: mediaRoot, fps: fps).get()
    }

    private func problems(_ otio: String, files: Set<String> = ["/media/a.mp4", "/media/b.mp4"]) -> [String] {
        switch OTIO.read(otio, files: files) {
        case .success: return []
        case .failure(let error): return error.problems.map(\.description)
        }
    }

    private func media(_ segment: Segment) -> MediaSegment? {
        if case .media(let m) = segment { return m }
        return nil
    }

    @Test func clipsAndGapsFollowEachOtherWithTheirTrims() throws {
        let otio = OTIO.timeline([OTIO.track("V1", [
            OTIO.clip("one", "a.mp4", start: 10, duration: 24),
            OTIO.gap(12),
            OTIO.clip("two", "file:///media/b.mp4", start: 0, duration: 36),
        ])])
        let imported = try imported(otio)
        let composition = try Composition.parse(imported.text)
        #expect(composition.assets.mapValues(\.url) == ["a": "/media/a.mp4", "b": "/media/b.mp4"])
        let segments = composition.tracks[0].segments.compactMap(media)
        #expect(segments == [
            MediaSegment(asset: "a", at: 0, sourceRange: TimeRange(start: Rational(10, 24), duration: 1)),
            MediaSegment(asset: "b", at: Rational(36, 24), sourceRange: TimeRange(start: 0, duration: Rational(36, 24))),
        ])
        let plan = try OTIO.plan(imported)
        #expect(plan.frameDuration == Rational(1, 24))
        #expect(plan.frameCount == 24 + 12 + 36)
        #expect(plan.frame(30).layers.isEmpty) // the gap
        #expect(plan.frame(40).layers.map(\.sourceTime) == [Rational(4, 24)])
    }

    @Test func theLastOTIOTrackIsTheTopLayer() throws {
        let otio = OTIO.timeline([
            OTIO.track("V1", [OTIO.clip("bottom", "a.mp4", start: 0, duration: 24)]),
            OTIO.track("V2", [OTIO.gap(6), OTIO.clip("top", "b.mp4", start: 0, duration: 12)]),
            OTIO.track("A1", [OTIO.clip("sound", "s.wav", start: 0, duration: 24)], kind: "Audio"),
        ])
        let imported = try imported(otio)
        let composition = try Composition.parse(imported.text)
        #expect(composition.tracks.map(\.mediaType) == [.video, .video, .audio])
        #expect(composition.tracks[0].segments.compactMap(media).map(\.asset) == ["b"])
        let plan = try OTIO.plan(imported)
        // Layers are listed bottom first: V1's clip under V2's.
        #expect(plan.frame(8).layers.map(\.asset) == ["a", "b"])
        #expect(plan.frame(2).layers.map(\.asset) == ["a"])
        #expect(plan.audioTracks.count == 1)
    }

    @Test func aDissolveOverlapsTheTwoClipsOnTwoRollsAndFadesTheIncomingOneIn() throws {
        let otio = OTIO.timeline([OTIO.track("V1", [
            OTIO.clip("A", "a.mp4", start: 0, duration: 48),
            OTIO.dissolve(in: 6, out: 6),
            OTIO.clip("B", "b.mp4", start: 24, duration: 48),
        ])])
        let imported = try imported(otio)
        let composition = try Composition.parse(imported.text)
        #expect(composition.tracks.count == 2)
        let a = composition.tracks[0].segments.compactMap(media), b = composition.tracks[1].segments.compactMap(media)
        #expect(a == [MediaSegment(asset: "a", at: 0, sourceRange: TimeRange(start: 0, duration: Rational(54, 24)))])
        #expect(b == [MediaSegment(asset: "b", at: Rational(42, 24), sourceRange: TimeRange(start: Rational(18, 24), duration: Rational(54, 24)))])
        let plan = try OTIO.plan(imported)
        #expect(plan.frameCount == 96)
        for k in 42..<54 {
            let layers = plan.frame(k).layers
            #expect(layers.map(\.asset) == ["a", "b"], "frame \(k)")
            #expect(layers.map(\.opacity) == [1, Double(k - 42) / 12], "frame \(k)")
            #expect(layers.map(\.sourceTime) == [Rational(Int64(k), 24), Rational(Int64(18 + k - 42), 24)], "frame \(k)")
        }
        #expect(plan.frame(41).layers.map(\.asset) == ["a"])
        #expect(plan.frame(54).layers.map(\.asset) == ["b"])
        #expect(plan.frame(54).layers.map(\.opacity) == [1])
    }

    @Test func fadesFromAndToAGapRampOneClip() throws {
        let otio = OTIO.timeline([OTIO.track("V1", [
            OTIO.gap(12), OTIO.dissolve(in: 0, out: 12), OTIO.clip("A", "a.mp4", start: 24, duration: 24),
            OTIO.dissolve(in: 6, out: 0), OTIO.gap(12),
        ])])
        let plan = try OTIO.plan(try imported(otio))
        #expect(plan.frameCount == 48)
        // The clip fades in over its first 12 frames (in_offset 0, out_offset 12) and out over its last 6.
        #expect(plan.frame(12).layers.map(\.opacity) == [0])
        #expect(plan.frame(18).layers.map(\.opacity) == [0.5])
        #expect(plan.frame(24).layers.map(\.opacity) == [1])
        #expect(plan.frame(30).layers.map(\.opacity) == [1])
        #expect(plan.frame(33).layers.map(\.opacity) == [0.5])
        #expect(plan.frame(36).layers.isEmpty)
        #expect(plan.frame(12).layers.map(\.sourceTime) == [1])
    }

    @Test func anAudioDissolveRampsBothRollsVolumes() throws {
        let otio = OTIO.timeline([
            OTIO.track("V1", [OTIO.clip("A", "a.mp4", start: 0, duration: 72)]),
            OTIO.track("A1", [
                OTIO.clip("A", "a.mp4", start: 0, duration: 48), OTIO.dissolve(in: 12, out: 12), OTIO.clip("S", "s.wav", start: 48, duration: 24),
            ], kind: "Audio"),
        ])
        let plan = try OTIO.plan(try imported(otio))
        #expect(plan.audioTracks.count == 2)
        let rate = 48000
        let mid = Int64(48 * rate / 24) // the cut, half-way through the dissolve
        let out = plan.audioTracks[0].gain(atSample: mid, sampleRate: rate), incoming = plan.audioTracks[1].gain(atSample: mid, sampleRate: rate)
        #expect(abs(out - 0.5) < 1e-9 && abs(incoming - 0.5) < 1e-9)
        #expect(plan.audioTracks[0].gain(atSample: mid - Int64(12 * rate / 24), sampleRate: rate) == 1)
        #expect(plan.audioTracks[1].gain(atSample: mid + Int64(12 * rate / 24), sampleRate: rate) == 1)
    }

    @Test func aSilencedAudioRollIsBroughtBackBeforeItsNextClip() throws {
        // A fades out to a gap, then B starts by a cut on the same roll: its volume must be 1 again.
        let otio = OTIO.timeline([OTIO.track("A1", [
            OTIO.clip("A", "s.wav", start: 0, duration: 24), OTIO.dissolve(in: 12, out: 0), OTIO.gap(24),
            OTIO.clip("B", "s.wav", start: 0, duration: 24),
        ], kind: "Audio")], globalStart: OTIO.time(0, 24))
        // Sound alone needs a render size.
        let plan = try OTIO.plan(try OTIO.read(otio, files: ["/media/s.wav"], size: PixelSize(width: 64, height: 36)).get())
        #expect(plan.audioTracks.count == 1)
        let track = plan.audioTracks[0]
        #expect(track.gain(atSample: 2000 * 50, sampleRate: 48000) == 1) // inside B (from 2 s)
        #expect(abs(track.gain(atSample: 2000 * 18, sampleRate: 48000) - 0.5) < 1e-9) // half-way through A's fade
    }

    @Test func nestedTracksAndStacksAreFlattenedWithTheirTrims() throws {
        let nestedTrack = OTIO.track("nested", [OTIO.clip("B", "b.mp4", start: 0, duration: 48)], sourceRange: OTIO.range(12, 24))
        let nestedStack = OTIO.stack([
            OTIO.track("under", [OTIO.clip("A", "a.mp4", start: 0, duration: 24)]),
            OTIO.track("over", [OTIO.clip("C", "c.mp4", start: 0, duration: 12)]),
        ], name: "compound")
        let otio = OTIO.timeline([OTIO.track("V1", [OTIO.clip("A", "a.mp4", start: 0, duration: 24), nestedTrack, nestedStack])])
        let imported = try imported(otio)
        let plan = try OTIO.plan(imported)
        #expect(plan.frameCount == 72)
        #expect(plan.frame(30).layers.map(\.asset) == ["b"])
        #expect(plan.frame(30).layers.map(\.sourceTime) == [Rational(12 + 6, 24)])
        // In the compound clip, "over" is drawn above "under".
        #expect(plan.frame(50).layers.map(\.asset) == ["a", "c"])
        #expect(plan.frame(50).layers.map(\.sourceTime) == [Rational(2, 24), Rational(2, 24)])
        #expect(plan.frame(70).layers.map(\.asset) == ["a"])
    }

    @Test func theMediaStartsAtItsAvailableRange() throws {
        // Media whose timecode starts at 01:00:00:00: source_range is in that time.
        let otio = OTIO.timeline([OTIO.track("V1", [
            OTIO.clip("A", "a.mp4", start: 86424, duration: 24, available: OTIO.range(86400, 240)),
        ])])
        let composition = try Composition.parse(try imported(otio).text)
        #expect(composition.tracks[0].segments.compactMap(media).first?.sourceRange == TimeRange(start: 1, duration: 1))
    }

    @Test func aClipWithoutSourceRangeUsesItsAvailableRange() throws {
        let clip = OTIO.item("Clip.2", name: "whole", sourceRange: nil,
                             extra: #", "media_references": {"DEFAULT_MEDIA": \#(OTIO.external("a.mp4", available: OTIO.range(0, 48)))}, "active_media_reference_key": "DEFAULT_MEDIA""#)
        let composition = try Composition.parse(try imported(OTIO.timeline([OTIO.track("V1", [clip, OTIO.clip("B", "b.mp4", start: 0, duration: 24)])])).text)
        let segments = composition.tracks[0].segments.compactMap(media)
        #expect(segments.map(\.at) == [0, 2])
        #expect(segments[0].sourceRange == TimeRange(start: 0, duration: 2))
    }

    @Test func ntscRatesAreExact() throws {
        let rate = 24000.0 / 1001.0
        let otio = OTIO.timeline([OTIO.track("V1", [OTIO.clip("A", "a.mp4", start: 1001, duration: 48, rate: rate)])],
                                 globalStart: OTIO.time(86400, 23.976))
        let imported = try imported(otio)
        let composition = try Composition.parse(imported.text)
        #expect(composition.videoComposition?.frameDuration == Rational(1001, 24000))
        #expect(composition.tracks[0].segments.compactMap(media).first?.sourceRange == TimeRange(start: Rational(1001 * 1001, 24000), duration: Rational(48 * 1001, 24000)))
        // --fps overrides the cut's rate.
        let overridden = try Composition.parse(try self.imported(otio, fps: 25).text)
        #expect(overridden.videoComposition?.frameDuration == Rational(1, 25))
    }

    @Test func aFreezeFrameHoldsItsFirstFrame() throws {
        let otio = OTIO.timeline([OTIO.track("V1", [OTIO.clip("held", "a.mp4", start: 30, duration: 12, effects: [OTIO.freeze])])])
        let plan = try OTIO.plan(try imported(otio))
        #expect(plan.frameCount == 12)
        for k in 0..<12 { #expect(plan.frame(k).layers.map(\.sourceTime) == [Rational(30, 24)], "frame \(k)") }
        // LinearTimeWarp with time_scalar 1 is normal speed.
        let normal = try OTIO.plan(try imported(OTIO.timeline([OTIO.track("V1", [OTIO.clip("n", "a.mp4", start: 0, duration: 12, effects: [OTIO.warp(1)])])])))
        #expect(normal.frame(5).layers.map(\.sourceTime) == [Rational(5, 24)])
    }

    @Test func aLinearTimeWarpBecomesATimeScaledSegment() throws {
        let otio = OTIO.timeline([OTIO.track("V1", [
            OTIO.clip("ok", "a.mp4", start: 0, duration: 12),
            OTIO.clip("fast", "a.mp4", start: 6, duration: 12, effects: [OTIO.warp(2)]),
            OTIO.clip("slow", "a.mp4", start: 0, duration: 12, effects: [OTIO.warp(0.5)]),
        ])])
        #expect(problems(otio).isEmpty)
        let plan = try OTIO.plan(try imported(otio))
        #expect(plan.frameCount == 36)
        // At 2× frame 12 + k shows source frame 6 + 2k; at 0.5× frame 24 + k shows k/2.
        for k in 0..<12 {
            #expect(plan.frame(12 + k).layers.map(\.sourceTime) == [Rational(Int64(6 + 2 * k), 24)])
            #expect(plan.frame(24 + k).layers.map(\.sourceTime) == [Rational(Int64(k), 48)])
        }
    }

    @Test func whatCannotBeRenderedIsRefusedNamingTheItem() {
        let otio = OTIO.timeline([
            OTIO.track("V1", [
                OTIO.clip("offline", "", start: 0, duration: 12, reference: OTIO.missing),
                OTIO.clip("blurred", "a.mp4", start: 0, duration: 12, effects: [OTIO.effect("Blur")]),
                OTIO.dissolve(in: 2, out: 2, type: "SMPTE_Wipe"),
                OTIO.clip("lost", "lost.mp4", start: 0, duration: 12),
                OTIO.clip("backwards", "a.mp4", start: 24, duration: 12, effects: [OTIO.warp(-1)]),
                OTIO.dissolve(in: 12, out: 2),
                OTIO.clip("early", "b.mp4", start: 6, duration: 12),
            ]),
            OTIO.track("D1", [], kind: "Data"),
        ])
        let lines = problems(otio)
        let expected = [
            #"tracks.children[0].children[0].media_references.DEFAULT_MEDIA: clip "offline", item 0 of track "V1" has a MissingReference"#,
            #"tracks.children[0].children[1].effects[0]: clip "blurred", item 1 of track "V1" has the effect "Blur""#,
            #"tracks.children[0].children[2].transition_type: transition (unnamed), item 2 of track "V1" is a "SMPTE_Wipe""#,
            #"tracks.children[0].children[3]: clip "lost", item 3 of track "V1": lost.mp4: media not found; looked for /media/lost.mp4"#,
            #"tracks.children[0].children[4].effects[0]: clip "backwards", item 4 of track "V1" plays backwards"#,
            #"tracks.children[0].children[5]: transition (unnamed), item 5 of track "V1" starts 0.5 s before the cut, but clip "early""#,
            #"tracks.children[1].kind: track "D1" is of kind "Data""#,
        ]
        #expect(lines.count == expected.count, "\(lines)")
        for prefix in expected { #expect(lines.contains { $0.hasPrefix(prefix) }, "\(prefix) in \(lines)") }
    }

    @Test func otherFilesAndNewerSchemasAreRefused() {
        #expect(problems(#"{"OTIO_SCHEMA": "SerializableCollection.1", "children": []}"#).first?.contains("not a Timeline") == true)
        #expect(problems("{nope").first?.hasPrefix("not an OpenTimelineIO file: invalid JSON") == true)
        let newer = OTIO.timeline([OTIO.track("V1", [OTIO.clip("A", "a.mp4", start: 0, duration: 12).replacingOccurrences(of: "Clip.2", with: "Clip.9")])])
        #expect(problems(newer) == [#"tracks.children[0].children[0].OTIO_SCHEMA: Clip.9 was written by a newer OpenTimelineIO than Reel reads (up to Clip.2)"#])
    }

    @Test func markersAndDisabledItemsAreReportedNotRendered() throws {
        let otio = OTIO.timeline([
            OTIO.track("V1", [
                OTIO.clip("A", "a.mp4", start: 0, duration: 12, markers: [OTIO.marker("fix colour", at: 3)]),
                OTIO.clip("off", "b.mp4", start: 0, duration: 12, enabled: false),
                OTIO.clip("C", "a.mp4", start: 0, duration: 12),
            ]),
            OTIO.track("V2", [OTIO.clip("hidden", "b.mp4", start: 0, duration: 36)], enabled: false),
        ])
        let imported = try imported(otio)
        #expect(imported.warnings.contains { $0.hasPrefix(#"tracks.children[0].children[0].markers[0]: marker "fix colour", RED"#) && $0.contains("ignored") })
        #expect(imported.warnings.contains(#"tracks.children[0].children[1]: clip "off", item 1 of track "V1" is disabled (enabled: false) and is not rendered"#))
        #expect(imported.warnings.contains(#"tracks.children[1]: track "V2" is disabled (enabled: false) and is not rendered"#))
        let plan = try OTIO.plan(imported)
        #expect(plan.videoTracks.count == 1)
        #expect(plan.frame(15).layers.isEmpty)
        #expect(plan.frame(25).layers.map(\.sourceTime) == [Rational(1, 24)])
    }

    @Test func mediaIsFoundUnderTheMediaRoot() throws {
        let otio = OTIO.timeline([OTIO.track("V1", [OTIO.clip("A", "file:///Volumes/Edit/Shots/a%20b.mov", start: 0, duration: 12)])])
        let found = try imported(otio, mediaRoot: "/srv/media", files: ["/srv/media/a b.mov"])
        #expect(try Composition.parse(found.text).assets.mapValues(\.url) == ["a_b": "/srv/media/a b.mov"])
        let relative = OTIO.timeline([OTIO.track("V1", [OTIO.clip("A", "shots/a.mov", start: 0, duration: 12)])])
        #expect(try Composition.parse(try imported(relative, mediaRoot: "/srv", files: ["/srv/shots/a.mov"]).text).assets["a"]?.url == "/srv/shots/a.mov")
        #expect(try Composition.parse(try imported(relative, files: ["/media/shots/a.mov"]).text).assets["a"]?.url == "/media/shots/a.mov")
    }

    @Test func compositionProblemsAreNamedByTheTimelineItem() throws {
        let imported = try imported(OTIO.timeline([OTIO.track("V1", [OTIO.clip("long", "a.mp4", start: 0, duration: 24)])]))
        let relabelled = imported.relabel(Problem(path: "tracks[0].segments[0].sourceRange", message: "ends at 12 s, beyond the end"))
        #expect(relabelled.description == #"tracks.children[0].children[0]: clip "long", item 0 of track "V1": sourceRange ends at 12 s, beyond the end (composition tracks[0].segments[0].sourceRange)"#)
        #expect(imported.relabel(Problem(path: "assets.a.url", message: "no such file")).path == "tracks.children[0].children[0]")
        #expect(imported.relabel(Problem(path: "videoComposition.renderSize", message: "x")).path == "videoComposition.renderSize")
    }
}

