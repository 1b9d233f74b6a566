import Foundation
import struct ReelCore.AffineTransform
import Synchronization
import Testing
import ReelThreadTesting
@testable import ReelCore

/// No input may trap or hang the parser, the validator or the planner — `reel
/// validate` and the coordinator run exactly this code on whatever a user (or an attacker with
/// the secret) sends. Seeded, so a failure names the case that reproduces it:
/// `REEL_FUZZ_SEED=<seed> REEL_FUZZ_CASES=1 swift test --filter CompositionFuzzTests`.
///
/// Each case is a composition generated from the format's grammar with values drawn mostly
/// from edge cases (extreme fractions, zero, negative, huge, off-grid), or a seed document with
/// bytes mutated, validated against probe results that are themselves hostile (absurd
/// durations, time bases and frame rates, NaN transforms). A valid plan is then cut into
/// chunks with random targets and has frames, cut frames and audio gains evaluated.
@Suite(.blocking) struct CompositionFuzzTests {
    static let cases = ProcessInfo.processInfo.environment["REEL_FUZZ_CASES"].flatMap(Int.init) ?? 100_000
    static let seed = ProcessInfo.processInfo.environment["REEL_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x5EED_8_2026

    @Test func noCompositionTrapsOrHangsParsingValidationOrPlanning() throws {
        let watchdog = Watchdog(limit: .seconds(60))
        var outcomes = (parseErrors: 0, invalid: 0, planned: 0)
        for i in 0..<Self.cases {
            let caseSeed = Self.seed &+ UInt64(i) &* 0x9E37_79B9_7F4A_7C15
            var rng = SplitMix64(seed: caseSeed)
            let json = FuzzInput.document(&rng)
            let assets = FuzzInput.assets(&rng)
            watchdog.begin(caseSeed: caseSeed, json: json)
            let composition: Composition
            do {
                composition = try Composition.parse(json)
            } catch {
                #expect(!error.problems.isEmpty)
                outcomes.parseErrors += 1
                continue
            }
            switch CompositionValidator.validate(composition, assets: assets) {
            case .failure(let error):
                #expect(!error.problems.isEmpty)
                outcomes.invalid += 1
            case .success(let plan):
                outcomes.planned += 1
                exercise(plan, &rng)
            }
        }
        watchdog.stop()
        print("composition fuzz: \(Self.cases) cases from seed \(Self.seed): \(outcomes)")
        // The generator must reach every stage, or the test proves little.
        #expect(outcomes.parseErrors > Self.cases / 20, "\(outcomes)")
        #expect(outcomes.invalid > Self.cases / 20, "\(outcomes)")
        #expect(outcomes.planned > Self.cases / 20, "\(outcomes)")
    }

    /// What the coordinator and agents do with a plan, without media.
    private func exercise(_ plan: RenderPlan, _ rng: inout SplitMix64) {
        #expect(plan.frameCount > 0 && plan.frameCount <= RenderLimits.maximumFrames)
        let target = FuzzInput.pick(&rng, FuzzInput.chunkTargets)
        let minimum = Int(rng.next() % 300)
        let chunks = ChunkPlanner.plan(for: plan, targetChunkSeconds: target, minimumChunks: minimum)
        if plan.hasPicture {
            #expect(chunks.first?.start == 0 && chunks.last?.end == plan.frameCount)
        } else {
            #expect(chunks.isEmpty, "a plan without a picture has no video chunks")
        }
        #expect(chunks.count <= RenderLimits.maximumChunks)
        for k in [0, plan.frameCount - 1, Int(rng.next() % UInt64(plan.frameCount))] {
            _ = plan.frame(k)
        }
        _ = plan.cutFrames
        for track in plan.audioTracks {
            let n = Int64(rng.next() % UInt64(max(1, plan.duration.scaled(to: 48000))))
            let gain = track.gain(atSample: n, sampleRate: 48000)
            #expect(gain.isFinite)
        }
        if rng.next() % 50 == 0 {
            // The plan travels to agents as JSON: it must come back identical.
            let data = try? JSONEncoder().encode(plan)
            #expect(data.flatMap { try? JSONDecoder().decode(RenderPlan.self, from: $0) } == plan)
        }
    }
}

/// Fails the test process loudly if one case runs for longer than `limit` (a hang), naming
/// the case. A hang cannot be interrupted from inside, so the watchdog ends the process with
/// the reproduction in its message.
final class Watchdog: Sendable {
    private struct Current { var started: ContinuousClock.Instant; var seed: UInt64; var json: String; var running: Bool }
    private let current = Mutex(Current(started: .now, seed: 0, json: "", running: true))
    private let limit: Duration

    init(limit: Duration) {
        self.limit = limit
        let thread = Thread { [weak self] in
            while let self {
                let (overdue, seed, json, running) = self.current.withLock { c in
                    (ContinuousClock.now - c.started > self.limit, c.seed, c.json, c.running)
                }
                if !running { return }
                if overdue { fatalError("fuzz case \(seed) ran longer than \(self.limit) (a hang): \(json)") }
                Thread.sleep(forTimeInterval: 1) // a watchdog's polling period, not test synchronisation
            }
        }
        thread.start()
    }

    func begin(caseSeed: UInt64, json: String) {
        current.withLock { $0 = Current(started: .now, seed: caseSeed, json: json, running: true) }
    }

    func stop() { current.withLock { $0.running = false } }
}

/// The generators: compositions from the grammar, mutations of them, and hostile probe results.
enum FuzzInput {
    static func pick<T>(_ rng: inout SplitMix64, _ options: [T]) -> T { options[Int(rng.next() % UInt64(options.count))] }
    static func chance(_ rng: inout SplitMix64, _ percent: UInt64) -> Bool { rng.next() % 100 < percent }

    static let assetIDs = ["a", "s", "m", "n", "x", "gone", "w"]

    static let times: [String] = [
        "0", "1", "2", "10", "0.5", "1.000001", "3.333333", "-1", "-0.000001", "\"1/30\"", "\"1001/30000\"", "\"1/9223372036854775783\"",
        "\"1/9223372036854775643\"", "\"9223372036854775807\"", "\"-9223372036854775807/1\"", "\"9223372036854775807/3\"",
        "\"1/4294967296\"", "\"1/4294967291\"", "\"3/4294967279\"", "\"1/1000000\"", "\"7/1000003\"", "\"0/5\"", "\"1/0\"", "10000000",
        "10000001", "999999999999999999", "1e3", "0.0000001", "\"12/7\"", "\"1/44100\"", "\"1/90000\"", "\"1/48000\"", "86400",
        "\"abc\"", "null", "true", "[]", "{}", "1000000", "\"-5\"", "\"5/-1\"", "\"+1/2\"",
    ]
    static let numbers: [String] = [
        "0", "1", "-1", "0.5", "2", "1e308", "-1e308", "1e-308", "1280", "720", "8192", "8194", "99999999999999999999", "3.4e38",
        "-0", "0.999999", "1.5", "30", "6.283185", "-6.283185", "1e400", "\"1\"", "null",
    ]
    static let chunkTargets: [Rational] = [
        Rational(10), Rational(2), Rational(1, 30), Rational(1, Int64.max), Rational(Int64.max), Rational(3600), Rational(-1), .zero,
        Rational(1_000_000_007, 3), Rational(1, 4_294_967_291),
    ]

    static func time(_ rng: inout SplitMix64) -> String {
        chance(&rng, 80) ? pick(&rng, times) : "\"\(Int64(bitPattern: rng.next()) % 100_000)/\(1 + rng.next() % 5_000_000_000)\""
    }
    static func number(_ rng: inout SplitMix64) -> String {
        chance(&rng, 80) ? pick(&rng, numbers) : String(Double(Int64(bitPattern: rng.next()) % 10_000) / 7)
    }
    static func range(_ rng: inout SplitMix64) -> String { "{\"start\": \(time(&rng)), \"duration\": \(time(&rng))}" }
    static func list(_ rng: inout SplitMix64, max: UInt64, _ element: (inout SplitMix64) -> String) -> String {
        let n = rng.next() % (max + 1)
        return "[" + (0..<n).map { _ in element(&rng) }.joined(separator: ", ") + "]"
    }

    static func segment(_ rng: inout SplitMix64) -> String {
        if chance(&rng, 15) { return "{\"empty\": \(range(&rng))}" }
        var fields = ["\"asset\": \"\(pick(&rng, assetIDs))\"", "\"at\": \(time(&rng))"]
        if chance(&rng, 50) { fields.append("\"sourceRange\": \(range(&rng))") }
        if chance(&rng, 30) { fields.append("\"duration\": \(time(&rng))") }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    static func transform(_ rng: inout SplitMix64) -> String {
        if chance(&rng, 40) { return "\"preferred\"" }
        return "{" + ["a", "b", "c", "d", "tx", "ty"].map { "\"\($0)\": \(number(&rng))" }.joined(separator: ", ") + "}"
    }

    static func ramp(_ rng: inout SplitMix64, _ value: (inout SplitMix64) -> String) -> String {
        "{\"from\": \(value(&rng)), \"to\": \(value(&rng)), \"timeRange\": \(range(&rng))}"
    }

    static func layer(_ rng: inout SplitMix64) -> String {
        var fields = ["\"track\": \(pick(&rng, ["1", "2", "3", "0", "-1", "99999999999"]))"]
        if chance(&rng, 50) { fields.append("\"transform\": \(transform(&rng))") }
        if chance(&rng, 30) { fields.append("\"transformRamps\": \(list(&rng, max: 2) { ramp(&$0, transform) })") }
        if chance(&rng, 30) { fields.append("\"opacity\": \(number(&rng))") }
        if chance(&rng, 30) { fields.append("\"opacityRamps\": \(list(&rng, max: 2) { ramp(&$0, number) })") }
        if chance(&rng, 20) {
            fields.append("\"cropRectangle\": {\"x\": \(number(&rng)), \"y\": \(number(&rng)), \"width\": \(number(&rng)), \"height\": \(number(&rng))}")
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    static func overlay(_ rng: inout SplitMix64) -> String {
        var fields: [String] = chance(&rng, 50)
            ? ["\"image\": \"\(pick(&rng, assetIDs))\""]
            : ["\"text\": \"\(pick(&rng, ["加点水印", "hello", "", "\\u0000\\u001b[2J", "مرحبا"]))\"", "\"fontSize\": \(number(&rng))"]
        fields.append("\"frame\": {\"x\": \(number(&rng)), \"y\": \(number(&rng)), \"width\": \(number(&rng)), \"height\": \(number(&rng))}")
        if chance(&rng, 40) { fields.append("\"timeRange\": \(range(&rng))") }
        if chance(&rng, 40) {
            fields.append("\"animations\": " + list(&rng, max: 2) { r in
                let property = pick(&r, ["rotation", "opacity", "scale", "position", "spin"])
                func value(_ r: inout SplitMix64) -> String {
                    property == "position" ? "{\"x\": \(number(&r)), \"y\": \(number(&r))}" : number(&r)
                }
                let repeatCount = pick(&r, ["true", "false", "2.5", "0", "1000001", "0.000001", "\"2\""])
                guard chance(&r, 50) else {
                    return "{\"property\": \"\(property)\", \"from\": \(value(&r)), \"to\": \(value(&r)), \"duration\": \(time(&r)), \"begin\": \(time(&r)), \"repeat\": \(repeatCount)}"
                }
                // Core Animation's keyframe form, with edge-case key times and timing functions.
                let values = (0..<Int(r.next() % 5)).map { _ in value(&r) }
                var fields = ["\"property\": \"\(property)\"", "\"values\": [\(values.joined(separator: ", "))]",
                              "\"duration\": \(time(&r))", "\"repeat\": \(repeatCount)", "\"autoreverses\": \(pick(&r, ["true", "false"]))"]
                if chance(&r, 50) {
                    let keys = (0..<values.count).map { i in chance(&r, 80) ? "\"\(i)/\(max(values.count - 1, 1))\"" : time(&r) }
                    fields.append("\"keyTimes\": [\(keys.joined(separator: ", "))]")
                }
                if chance(&r, 50) {
                    fields.append("\"timingFunction\": " + pick(&r, ["\"easeIn\"", "\"easeInEaseOut\"", "\"bounce\"",
                        "{\"controlPoints\": [\(number(&r)), \(number(&r)), \(number(&r)), \(number(&r))]}", "{\"controlPoints\": [0.5, 2, 0.5, -1]}"]))
                }
                if chance(&r, 50) { fields.append("\"begin\": \(time(&r))") }
                return "{" + fields.joined(separator: ", ") + "}"
            })
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    /// A composition from the grammar: structurally plausible, with edge-case values.
    static func generated(_ rng: inout SplitMix64) -> String {
        let assets = assetIDs.filter { _ in chance(&rng, 80) }.map { "\"\($0)\": {\"url\": \"\($0).mp4\"}" }.joined(separator: ", ")
        let tracks = list(&rng, max: 3) { r in
            "{\"id\": \(pick(&r, ["1", "2", "3", "0", "1"])), \"mediaType\": \"\(pick(&r, ["video", "audio", "video"]))\", \"segments\": \(list(&r, max: 4, segment))}"
        }
        var fields = ["\"formatVersion\": 1", "\"assets\": {\(assets)}", "\"tracks\": \(tracks)"]
        if chance(&rng, 40) {
            fields.append("\"audioMix\": " + list(&rng, max: 2) { r in
                "{\"track\": \(pick(&r, ["1", "2", "3"])), \"volume\": \(number(&r)), \"volumeRamps\": \(list(&r, max: 2) { ramp(&$0, number) })}"
            })
        }
        if chance(&rng, 60) {
            var vc: [String] = []
            if chance(&rng, 70) { vc.append("\"renderSize\": {\"width\": \(pick(&rng, ["1280", "2", "0", "8192", "8194", "641"])), \"height\": \(pick(&rng, ["720", "2", "-2", "8192"]))}") }
            if chance(&rng, 70) { vc.append("\"frameDuration\": \(time(&rng))") }
            if chance(&rng, 60) {
                vc.append("\"instructions\": " + list(&rng, max: 3) { r in
                    "{\"timeRange\": \(range(&r)), \"backgroundColor\": \"\(pick(&r, ["#000000", "#FF00FF80", "#GGGGGG"]))\", \"layerInstructions\": \(list(&r, max: 2, layer))}"
                })
            }
            if chance(&rng, 50) { vc.append("\"overlays\": \(list(&rng, max: 3, overlay))") }
            fields.append("\"videoComposition\": {" + vc.joined(separator: ", ") + "}")
        }
        if chance(&rng, 40) {
            fields.append("\"export\": {\"preset\": \"\(pick(&rng, ["highest", "medium", "low", "best"]))\", \"video\": {\"gopDuration\": \(time(&rng)), \"crf\": \(pick(&rng, ["18", "-1", "52", "9999999999999"]))}, \"audio\": {\"sampleRate\": \(pick(&rng, ["48000", "0", "1", "2147483648"])), \"channels\": \(pick(&rng, ["2", "0", "6", "1000"]))}}")
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    /// Byte-level damage to a document: flips, deletions, duplications and number swaps.
    static func mutated(_ text: String, _ rng: inout SplitMix64) -> String {
        var bytes = Array(text.utf8)
        for _ in 0..<(1 + rng.next() % 4) where !bytes.isEmpty {
            let i = Int(rng.next() % UInt64(bytes.count))
            switch rng.next() % 5 {
            case 0: bytes[i] = UInt8(truncatingIfNeeded: rng.next())
            case 1: bytes.remove(at: i)
            case 2:
                let end = min(bytes.count, i + Int(rng.next() % 40))
                bytes.insert(contentsOf: bytes[i..<end], at: i)
            case 3: bytes.insert(contentsOf: Array(pick(&rng, ["9", "\"1/0\"", "-", "{", "]", ",", "\\u0000", "\u{FEFF}"]).utf8), at: i)
            default:
                if let digit = bytes[i...].firstIndex(where: { (48...57).contains($0) }) {
                    bytes.replaceSubrange(digit...digit, with: Array(time(&rng).utf8))
                }
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func document(_ rng: inout SplitMix64) -> String {
        switch rng.next() % 20 {
        case 0...5: return generated(&rng)
        case 6...8: return mutated(generated(&rng), &rng)
        case 9...13: return plausible(&rng)
        case 14...16: return mutated(plausible(&rng), &rng)
        case 17, 18: return mutated(Fixtures.designExample, &rng)
        default: return mutated(Fixtures.composition(), &rng)
        }
    }

    /// A composition that is usually valid (sequential segments of the fixture assets, tiling
    /// instructions, ramps inside them), so planning and frame evaluation are reached often;
    /// some values are still drawn from the edge cases.
    static func plausible(_ rng: inout SplitMix64) -> String {
        let lengths = ["1", "2", "0.5", "1.5", "\"1/3\"", "\"1001/30000\"", "0.04", "3"]
        func length(_ rng: inout SplitMix64) -> String { chance(&rng, 97) ? pick(&rng, lengths) : time(&rng) }
        func seconds(_ text: String) -> Rational {
            let t = text.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            return Rational(parsing: t) ?? .one
        }
        var at = Rational.zero
        var segments: [String] = []
        for _ in 0..<(1 + rng.next() % 4) {
            let d = length(&rng)
            let atText = "\"\(at)\""
            switch rng.next() % 5 {
            case 0: segments.append("{\"asset\": \"s\", \"at\": \(atText), \"duration\": \(d)}")
            case 4:
                // A speed change: some source range played in `d`.
                segments.append("{\"asset\": \"a\", \"at\": \(atText), \"sourceRange\": {\"start\": \(pick(&rng, ["0", "\"1/7\""])), \"duration\": \(length(&rng))}, \"duration\": \(d)}")
            case 1: segments.append("{\"empty\": {\"start\": \(atText), \"duration\": \(d)}}")
            default: segments.append("{\"asset\": \"a\", \"at\": \(atText), \"sourceRange\": {\"start\": \(pick(&rng, ["0", "1", "\"1/7\""])), \"duration\": \(d)}}")
            }
            at = at + seconds(d)
        }
        let total = "\"\(at)\""
        var fields = ["\"formatVersion\": 1", #""assets": {"a": {"url": "a.mp4"}, "s": {"url": "s.png"}, "m": {"url": "m.m4a"}}"#,
                      "\"tracks\": [{\"id\": 1, \"mediaType\": \"video\", \"segments\": [\(segments.joined(separator: ", "))]}, "
                      + "{\"id\": 2, \"mediaType\": \"audio\", \"segments\": [{\"asset\": \"m\", \"at\": 0, \"sourceRange\": {\"start\": 0, \"duration\": \(length(&rng))}}]}]"]
        if chance(&rng, 50) {
            fields.append("\"audioMix\": [{\"track\": 2, \"volume\": \(pick(&rng, ["0.8", "1", "0", "2"])), \"volumeRamps\": [{\"from\": 1, \"to\": 0, \"timeRange\": {\"start\": 0, \"duration\": \(length(&rng))}}]}]")
        }
        if chance(&rng, 70) {
            let layer = "{\"track\": 1, \"transform\": \(chance(&rng, 70) ? "\"preferred\"" : transform(&rng)), "
                + "\"opacityRamps\": [{\"from\": 1, \"to\": 0, \"timeRange\": {\"start\": 0, \"duration\": \(length(&rng))}}]}"
            var vc = ["\"renderSize\": {\"width\": \(pick(&rng, ["1280", "640", "2"])), \"height\": \(pick(&rng, ["720", "360", "2"]))}",
                      "\"frameDuration\": \(chance(&rng, 95) ? pick(&rng, ["\"1/30\"", "\"1/25\"", "\"1001/30000\"", "\"1/60\"", "1"]) : time(&rng))",
                      "\"instructions\": [{\"timeRange\": {\"start\": 0, \"duration\": \(total)}, \"layerInstructions\": [\(layer)]}]"]
            if chance(&rng, 60) { vc.append("\"overlays\": \(list(&rng, max: 2, overlay))") }
            fields.append("\"videoComposition\": {" + vc.joined(separator: ", ") + "}")
        }
        if chance(&rng, 30) {
            fields.append("\"export\": {\"preset\": \"\(pick(&rng, ["highest", "medium", "low"]))\", \"video\": {\"gopDuration\": \(length(&rng))}}")
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    /// Probe results, mostly ordinary, some hostile (what a crafted media file could report).
    static func assets(_ rng: inout SplitMix64) -> [String: AssetResolution] {
        let durations: [Rational] = [Rational(10), Rational(4), Rational(1, 1000), Rational(1001, 30000) * 300, Rational(Int64.max),
                                     Rational(1, Int64.max), Rational(123_456_789, 2_147_483_647), Rational(9_000_000_000, 90000)]
        let frameDurations: [Rational?] = [Rational(1, 30), Rational(1001, 30000), Rational(1, 25), nil, Rational(1, 2_147_483_647),
                                           Rational(2_147_483_647, 1), Rational(1, 1000)]
        let transforms: [AffineTransform] = [.identity, Fixtures.portraitTransform(encodedHeight: 1080),
                                             AffineTransform(a: .nan, b: 0, c: 0, d: .infinity, tx: 0, ty: 0),
                                             AffineTransform(a: 0, b: 0, c: 0, d: 0, tx: 0, ty: 0)]
        let sizes = [PixelSize(width: 1920, height: 1080), PixelSize(width: 0, height: 0), PixelSize(width: 1, height: 99_999),
                     PixelSize(width: 640, height: 360)]
        func movie(_ rng: inout SplitMix64) -> AssetDescription {
            let video = VideoTrackDescription(naturalSize: pick(&rng, sizes), preferredTransform: pick(&rng, transforms),
                                              frameDuration: pick(&rng, frameDurations), hasAlpha: false, codec: "h264")
            return AssetDescription(kind: .movie, duration: pick(&rng, durations), video: video,
                                    audio: chance(&rng, 70) ? AudioTrackDescription(sampleRate: pick(&rng, [48000, 44100, 1, 0]), channels: pick(&rng, [2, 6, 0]), codec: "aac") : nil)
        }
        var table: [String: AssetResolution] = [
            "a": .described(url: "/m/a", chance(&rng, 80) ? Fixtures.movie(1920, 1080, duration: Rational(10)) : movie(&rng)),
            "s": .described(url: "/m/s", Fixtures.still(400, 300)),
            "m": .described(url: "/m/m", Fixtures.sound(duration: chance(&rng, 80) ? Rational(20) : pick(&rng, durations))),
            "n": .described(url: "/m/n", movie(&rng)),
            "x": .described(url: "/m/x", movie(&rng)),
            "gone": .unavailable(reason: "no such file"),
        ]
        // The design example's ids, so its mutations get past asset resolution.
        for (id, resolution) in Fixtures.designExampleAssets { table[id] = chance(&rng, 85) ? resolution : .described(url: "/m/\(id)", movie(&rng)) }
        return table
    }
}
