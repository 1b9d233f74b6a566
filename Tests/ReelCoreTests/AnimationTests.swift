import Foundation
import Testing
@testable import ReelCore
import ReelThreadTesting

/// The animation model against Core Animation's timing rules, worked out independently here:
/// a reference evaluator in floating point (`Reference`) and a cubic-Bézier solver by plain
/// bisection, neither sharing code with `KeyframeAnimation` or `TimingFunction`.
@Suite("Keyframe animations", .blocking)
struct AnimationTests {
    /// Core Animation's evaluation, written straight from CAMediaTiming's rules in Double.
    enum Reference {
        /// `s` with Bx(s) = x by bisection alone (Bx is increasing for x1, x2 in 0…1), then By(s).
        static func bezier(_ x: Double, _ p: (Double, Double, Double, Double)) -> Double {
            func b(_ s: Double, _ c1: Double, _ c2: Double) -> Double {
                let t = 1 - s
                return 3 * t * t * s * c1 + 3 * t * s * s * c2 + s * s * s
            }
            var lo = 0.0, hi = 1.0
            for _ in 0..<200 {
                let mid = (lo + hi) / 2
                if b(mid, p.0, p.2) < x { lo = mid } else { hi = mid }
            }
            return b((lo + hi) / 2, p.1, p.3)
        }

        /// The value at `t` seconds of an animation beginning at 0.
        static func value(t: Double, values: [Double], keyTimes: [Double]?, duration: Double, autoreverses: Bool,
                          repeatCount: Double, timing: ((Double) -> Double)?) -> Double {
            let cycle = autoreverses ? 2 * duration : duration
            var local = t.truncatingRemainder(dividingBy: cycle)
            if t >= repeatCount * cycle {
                local = (repeatCount * cycle).truncatingRemainder(dividingBy: cycle)
                if local == 0 { local = cycle }
            }
            var x = autoreverses && local > duration ? (cycle - local) / duration : local / duration
            x = timing?(x) ?? x
            let keys = keyTimes ?? values.indices.map { Double($0) / Double(values.count - 1) }
            var i = 0
            while i + 2 < values.count && keys[i + 1] <= x { i += 1 }
            let f = (x - keys[i]) / (keys[i + 1] - keys[i])
            return values[i] + (values[i + 1] - values[i]) * f
        }
    }

    static func parse<V>(_ json: String, _ read: (JSONFieldReader) -> (JSONValue, String) -> V?) throws -> KeyframeAnimation<V> {
        let reader = JSONFieldReader()
        let animation = reader.keyframeAnimation(try JSONParser.parse(Array(json.utf8)), at: "a", read(reader))
        #expect(reader.problems.isEmpty, "\(reader.problems)")
        let parsed = try #require(animation)
        #expect(parsed.problems(at: "a").isEmpty, "\(parsed.problems(at: "a"))")
        return parsed
    }

    @Test func fromToIsTheTwoValueCaseAndMatchesTheOldLinearFormulaBitForBit() throws {
        // The formula overlays used before keyframes: f = exact phase / duration, then a + (b − a)·f.
        func old(_ t: Rational, from: Double, to: Double, duration: Rational, begin: Rational, repeats: Bool) -> Double? {
            guard begin <= t else { return nil }
            let elapsed = t - begin
            let f: Double
            if repeats {
                let phase = elapsed - duration * Int(elapsed.floorDiv(duration))
                f = (phase / duration).seconds
            } else {
                f = elapsed >= duration ? 1 : (elapsed / duration).seconds
            }
            return from + (to - from) * f
        }
        for (repeats, json) in [(true, #"{"from": 0.1, "to": -6.283185, "duration": "7/3", "begin": 0.3, "repeat": true}"#),
                                (false, #"{"from": 0.1, "to": -6.283185, "duration": "7/3", "begin": 0.3}"#)] {
            let a = try Self.parse(json) { $0.double }
            #expect(a.values == [0.1, -6.283185] && a.writtenAsFromTo)
            for k in 0..<400 {
                let t = Rational(Int64(k), 30)
                let expected = old(t, from: 0.1, to: -6.283185, duration: Rational(7, 3), begin: Rational(3, 10), repeats: repeats)
                #expect(a.value(at: t)?.bitPattern == expected?.bitPattern, "t = \(t)")
            }
        }
    }

    /// The watermark demo's mouse: four positions, 5 s, autoreverses, repeatCount HUGE_VALF.
    @Test func watermarkDemoPathIsAtEachKeyAtItsKeyTimeAndComesBack() throws {
        let a = try Self.parse(#"""
            {"values": [{"x": 575, "y": 295}, {"x": 635, "y": 255}, {"x": 695, "y": 295}, {"x": 695, "y": 295}],
             "duration": 5, "autoreverses": true, "repeat": true}
            """#) { $0.point }
        let keys = [Point(x: 575, y: 295), Point(x: 635, y: 255), Point(x: 695, y: 295), Point(x: 695, y: 295)]
        for cycle in 0..<3 {
            let start = Rational(Int64(10 * cycle))
            for (i, key) in keys.enumerated() {
                // Forward pass: key i at i/3 of 5 s; backward pass: at 10 − 5i/3 s. Exact.
                #expect(a.value(at: start + Rational(Int64(5 * i), 3)) == key)
                #expect(a.value(at: start + Rational(10) - Rational(Int64(5 * i), 3)) == key)
            }
            // Half-way between keys 0 and 1, going and coming back.
            #expect(a.value(at: start + Rational(5, 6)) == Point(x: 605, y: 275))
            #expect(a.value(at: start + Rational(10) - Rational(5, 6)) == Point(x: 605, y: 275))
        }
        #expect(a.finalValue == nil)
    }

    @Test(arguments: [
        ("linear", nil as (Double, Double, Double, Double)?),
        (#""easeIn""#, (0.42, 0, 1, 1)),
        (#""easeOut""#, (0, 0, 0.58, 1)),
        (#""easeInEaseOut""#, (0.42, 0, 0.58, 1)),
        (#"{"controlPoints": [0.1, -0.4, 0.3, 1.6]}"#, (0.1, -0.4, 0.3, 1.6)),   // overshoots both ways
    ])
    func easesAsTheTimingFunctionSays(_ timing: String, _ points: (Double, Double, Double, Double)?) throws {
        let function = timing == "linear" ? #""linear""# : timing
        let a = try Self.parse(#"{"values": [0, 100, 40, 240], "keyTimes": [0, 0.2, "2/3", 1], "timingFunction": \#(function), "duration": 3, "autoreverses": true, "repeat": 2.25}"#) { $0.double }
        for k in 0...480 {
            let t = Rational(Int64(k), 32)   // 0…15 s: past the end (2.25 · 6 s = 13.5 s)
            let expected = Reference.value(t: t.seconds, values: [0, 100, 40, 240], keyTimes: [0, 0.2, 2.0 / 3, 1], duration: 3,
                                           autoreverses: true, repeatCount: 2.25,
                                           timing: points.map { p in { Reference.bezier($0, p) } })
            let got = try #require(a.value(at: t))
            #expect(abs(got - expected) < 1e-7, "t = \(t.seconds): \(got) vs \(expected)")
        }
        // 2.25 repetitions of 6 s end a quarter into the third one: half-way through its forward pass.
        let end = Reference.value(t: 13.5, values: [0, 100, 40, 240], keyTimes: [0, 0.2, 2.0 / 3, 1], duration: 3, autoreverses: true,
                                  repeatCount: 2.25, timing: points.map { p in { Reference.bezier($0, p) } })
        #expect(abs(try #require(a.finalValue) - end) < 1e-7)
    }

    @Test func timingFunctionsMatchAnIndependentBisectionSolver() {
        for function in [TimingFunction.easeIn, .easeOut, .easeInEaseOut, .cubicBezier(x1: 0.9, y1: 0.1, x2: 0.1, y2: 0.9),
                         .cubicBezier(x1: 0, y1: 1, x2: 1, y2: 0)] {
            guard case .cubicBezier(let x1, let y1, let x2, let y2) = function else { continue }
            // The curve's ends are (0, 0) and (1, 1) by definition (bisection cannot find them
            // exactly where the curve is flat there).
            #expect(function.ease(0) == 0 && function.ease(1) == 1)
            for k in 1..<1000 {
                let x = Double(k) / 1000
                #expect(abs(function.ease(x) - Reference.bezier(x, (x1, y1, x2, y2))) < 1e-9, "\(function) at \(x)")
            }
        }
        #expect(TimingFunction.linear.ease(0.3) == 0.3)
    }

    @Test func wholeAutoreversedRepetitionsEndOnTheFirstValueAndBeforeBeginThereIsNone() throws {
        let a = try Self.parse(#"{"values": [1, 2, 3], "duration": 1, "begin": 2, "autoreverses": true, "repeat": 3}"#) { $0.double }
        #expect(a.value(at: Rational(199, 100)) == nil)
        #expect(a.value(at: Rational(2)) == 1)
        #expect(a.value(at: Rational(3)) == 3)             // end of the first forward pass
        #expect(a.value(at: Rational(7, 2)) == 2)          // half-way back
        #expect(a.value(at: Rational(8)) == 1)             // 3 repetitions of 2 s: over, at the first value
        #expect(a.value(at: Rational(100)) == 1)
        #expect(a.finalValue == 1)
        let once = try Self.parse(#"{"values": [1, 2, 3], "duration": 1, "repeat": false}"#) { $0.double }
        #expect(once.value(at: Rational(5)) == 3)
        let half = try Self.parse(#"{"from": 0, "to": 10, "duration": 2, "repeat": 1.5}"#) { $0.double }
        #expect(half.value(at: Rational(3)) == 5 && half.value(at: Rational(9)) == 5)
    }

    @Test func equalKeyTimesJump() throws {
        let a = try Self.parse(#"{"values": [0, 10, 20, 30], "keyTimes": [0, 0.5, 0.5, 1], "duration": 1}"#) { $0.double }
        #expect(a.value(at: Rational(1, 4)) == 5)
        #expect(a.value(at: Rational(1, 2)) == 20)
        #expect(a.value(at: Rational(3, 4)) == 25)
    }

    @Test func animatedNumbersHoldTheirFirstValueBeforeBeginAndTheirLastAfter() throws {
        let reader = JSONFieldReader()
        let constant = reader.animatedNumber(.number("0.5"), at: "p")
        let animated = reader.animatedNumber(try JSONParser.parse(Array(#"{"values": [0.2, 0.8], "begin": 1, "duration": 2}"#.utf8)), at: "p")
        #expect(reader.problems.isEmpty)
        #expect(constant?.value(at: Rational(9)) == 0.5)
        #expect(animated?.value(at: .zero) == 0.2)
        #expect(animated.map { abs($0.value(at: Rational(2)) - 0.5) < 1e-15 } == true)
        #expect(animated?.value(at: Rational(9)) == 0.8)
        #expect(animated?.keyValues(at: "p").map(\.path) == ["p.values[0]", "p.values[1]"])
        _ = reader.animatedNumber(.string("x"), at: "q")
        #expect(reader.problems.map(\.path) == ["q"])
    }

    @Test func badAnimationsNameTheirJSONPath() {
        let frame = #""frame": {"x": 0, "y": 0, "width": 10, "height": 10}"#
        func problems(_ animation: String) -> [String] {
            Fixtures.problems(Fixtures.composition(extra: #""videoComposition": {"overlays": [{"text": "x", \#(frame), "animations": [\#(animation)]}]}"#))
        }
        let p = "videoComposition.overlays[0].animations[0]"
        #expect(problems(#"{"property": "scale", "values": [1], "duration": 1}"#) == ["\(p).values: needs at least 2 values, not 1"])
        #expect(problems(#"{"property": "scale", "from": 1, "values": [1, 2], "duration": 1}"#) == ["\(p): give either from and to, or values, not both"])
        #expect(problems(#"{"property": "scale", "duration": 1}"#) == ["\(p): needs the values to animate through: from and to, or values"])
        #expect(problems(#"{"property": "scale", "values": [1, 2, 3], "keyTimes": [0, 1], "duration": 1}"#)
                == ["\(p).keyTimes: has 2 entries but there are 3 values: give one key time per value"])
        #expect(problems(#"{"property": "scale", "values": [1, 2, 3], "keyTimes": [0, 0.6, 0.5], "duration": 1}"#)
                == ["\(p).keyTimes: must start at 0 and end at 1 (fractions of the duration)",
                    "\(p).keyTimes[2]: must be ≥ keyTimes[1]: key times never go back"])
        #expect(problems(#"{"property": "scale", "values": [1, 2], "keyTimes": [0, 1.5], "duration": 1}"#)
                == ["\(p).keyTimes: must start at 0 and end at 1 (fractions of the duration)", "\(p).keyTimes[1]: must lie in 0…1"])
        #expect(problems(#"{"property": "scale", "from": 1, "to": 2, "duration": 1, "timingFunction": "bounce"}"#)
                == [#"\#(p).timingFunction: must be one of "linear", "easeIn", "easeOut", "easeInEaseOut" or {"controlPoints": [x1, y1, x2, y2]}, not "bounce""#])
        #expect(problems(#"{"property": "scale", "from": 1, "to": 2, "duration": 1, "timingFunction": {"controlPoints": [1.2, 0, 0.5, 1]}}"#)
                == ["\(p).timingFunction.controlPoints: x1 and x2 (the 1st and 3rd numbers) must lie in 0…1, as CAMediaTimingFunction requires"])
        #expect(problems(#"{"property": "scale", "from": 1, "to": 2, "duration": 1, "timingFunction": {"controlPoints": [0, 1]}}"#)
                == ["\(p).timingFunction.controlPoints: must be 4 numbers [x1, y1, x2, y2]: the Bézier's two control points"])
        #expect(problems(#"{"property": "scale", "from": 1, "to": 2, "duration": 1, "repeat": 0}"#)
                == ["\(p).repeat: must be true, false or a count > 0 and at most 1000000 (0 given)"])
        #expect(problems(#"{"property": "opacity", "values": [0, 1.5, 1], "duration": 1, "autoreverses": 1}"#)
                == ["\(p).autoreverses: must be true or false, not a number"])
        #expect(problems(#"{"property": "opacity", "values": [0, 1.5, 1], "duration": 1, "autoreverses": true}"#)
                == ["\(p).values[1]: must be between 0 and 1"])
        #expect(problems(#"{"property": "opacity", "from": -1, "to": 1, "duration": 0}"#)
                == ["\(p).duration: must be > 0", "\(p).from: must be between 0 and 1"])
        // Structure problems stop before validation: the dropped value is not counted again.
        #expect(problems(#"{"property": "position", "values": [{"x": 0, "y": 0}, {"x": 1}], "duration": 1, "wobble": 2}"#)
                == ["\(p).wobble: unknown key; expected one of: property, from, to, values, keyTimes, timingFunction, duration, begin, autoreverses, repeat",
                    "\(p).values[1].y: is required"])
    }
}

@Suite("Keyframe animations in stored plans", .blocking)
struct StoredAnimationTests {
    /// A plan stored before keyframes existed still decodes, as the same from/to animation.
    @Test func legacyFromToFormDecodes() throws {
        let legacy = #"{"change": {"rotation": {"from": 0, "to": -6.283185}}, "duration": "2", "begin": "1/2", "repeats": true}"#
        let decoded = try JSONDecoder().decode(OverlayAnimation.self, from: Data(legacy.utf8))
        #expect(decoded == OverlayAnimation(change: .rotation(.fromTo(0, -6.283185, duration: Rational(2), begin: Rational(1, 2), repeatCount: .forever))))
        let current = OverlayAnimation(change: .position(KeyframeAnimation(values: [Point(x: 1, y: 2), Point(x: 3, y: 4), Point(x: 5, y: 0)],
            keyTimes: [0, Rational(1, 3), 1], timingFunction: .easeOut, duration: Rational(3), autoreverses: true, repeatCount: .count(Rational(5, 2)))))
        #expect(try JSONDecoder().decode(OverlayAnimation.self, from: JSONEncoder().encode(current)) == current)
    }
}
