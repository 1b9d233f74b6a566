import Testing
@testable import ReelCore
import ReelThreadTesting

@Suite("Rational: exact time", .blocking)
struct RationalTests {
    @Test(arguments: [
        ("1001/30000", Rational(1001, 30000)),
        ("2.5", Rational(5, 2)),
        ("-0.000001", Rational(-1, 1_000_000)),
        ("10", Rational(10)),
        ("6/4", Rational(3, 2)),
        (".5", Rational(1, 2)),
        ("0.1", Rational(1, 10)),
    ])
    func parses(_ text: String, _ expected: Rational) {
        #expect(Rational(parsing: text) == expected)
    }

    @Test(arguments: ["", "abc", "1/0", "1.2.3", ".", "-", "1/", "/2", "1e3"])
    func rejects(_ text: String) {
        #expect(Rational(parsing: text) == nil)
    }

    @Test func reducesAndKeepsDenominatorPositive() {
        let r = Rational(6, -4)
        #expect(r.num == -3 && r.den == 2)
        #expect(Rational(0, -7) == .zero && Rational(0, -7).den == 1)
    }

    @Test func arithmetic() {
        #expect(Rational(1, 30000) + Rational(1, 48000) == Rational(13, 240000))
        #expect(Rational(1, 2) - Rational(2, 3) == Rational(-1, 6))
        #expect(Rational(1001, 30000) * 30 == Rational(1001, 1000))
        #expect(Rational(3, 4) / Rational(9, 8) == Rational(2, 3))
        #expect(-Rational(1, 3) == Rational(-1, 3))
        #expect(Rational(1, 3) < Rational(34, 100))
        #expect(Rational(-1, 2) < Rational(-1, 3))
    }

    @Test func summingTwoHoursOfNTSCFramesIsExact() {
        var t = Rational.zero
        for _ in 0..<(2 * 3600 * 30) { t += Rational(1001, 30000) }
        #expect(t == Rational(2 * 3600 * 30 * 1001, 30000))
    }

    @Test(arguments: [
        // value, floor, ceil, rounded (halves away from zero)
        (Rational(5, 2), Int64(2), Int64(3), Int64(3)),
        (Rational(-5, 2), Int64(-3), Int64(-2), Int64(-3)),
        (Rational(-1, 2), Int64(-1), Int64(0), Int64(-1)),
        (Rational(1, 3), Int64(0), Int64(1), Int64(0)),
        (Rational(-7, 3), Int64(-3), Int64(-2), Int64(-2)),
        (Rational(4), Int64(4), Int64(4), Int64(4)),
    ])
    func rounding(_ value: Rational, _ floor: Int64, _ ceil: Int64, _ rounded: Int64) {
        #expect(value.floor == floor)
        #expect(value.ceil == ceil)
        #expect(value.rounded == rounded)
    }

    @Test func divisionHelpers() {
        #expect(Rational(10).ceilDiv(Rational(1001, 30000)) == 300)
        #expect(Rational(10).floorDiv(Rational(1001, 30000)) == 299)
        #expect(Rational(1001, 30000).scaled(to: 90000) == 3003)
        #expect(Rational(1, 3).scaled(to: 48000) == 16000)
    }

    @Test func codableAsString() throws {
        // Encoded as "N/D" so a plan ships without loss; the description is the wire form.
        #expect(Rational(1001, 30000).description == "1001/30000")
        #expect(Rational(-4).description == "-4")
    }
}
