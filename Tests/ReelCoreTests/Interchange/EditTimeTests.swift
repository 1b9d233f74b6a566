import Foundation
import Testing
@testable import ReelCore
import ReelThreadTesting

/// Rates, values and timecode from editors' files become exact fractions (docs/interchange.md).
@Suite(.blocking) struct EditTimeTests {
    @Test(arguments: [
        (24.0, Rational(24)), (25.0, Rational(25)), (30.0, Rational(30)), (48000.0, Rational(48000)),
        (23.976, Rational(24000, 1001)), (23.98, Rational(24000, 1001)), (24000.0 / 1001.0, Rational(24000, 1001)),
        (29.97, Rational(30000, 1001)), (30000.0 / 1001.0, Rational(30000, 1001)), (59.94, Rational(60000, 1001)),
        (47.952, Rational(48000, 1001)), (119.88, Rational(120000, 1001)), (12.5, Rational(25, 2)), (23.999999999, Rational(24)),
    ])
    func ratesAreExact(_ rate: Double, _ expected: Rational) {
        #expect(EditRate.exact(rate) == expected)
    }

    @Test func unusableRatesAndValues() {
        #expect(EditRate.exact(0) == nil)
        #expect(EditRate.exact(-24) == nil)
        #expect(EditRate.exact(.infinity) == nil)
        #expect(EditRate.value(.nan) == nil)
        #expect(EditRate.value(12.000000000000002) == 12)
        #expect(EditRate.value(12.5) == Rational(25, 2))
        #expect(EditRate.parse("30000/1001") == Rational(30000, 1001))
        #expect(EditRate.parse("29.97") == Rational(30000, 1001))
        #expect(EditRate.parse("0/1") == nil)
        #expect(EditRate.parse("fast") == nil)
    }

    @Test func nonDropFrameTimecode() throws {
        #expect(try Timecode(parsing: "01:00:00:00")!.frameNumber(nominalRate: 24, dropFrame: false).get() == 86400)
        #expect(try Timecode(parsing: "00:00:01:05")!.frameNumber(nominalRate: 25, dropFrame: false).get() == 30)
        #expect(try Timecode(parsing: "00:01:00:00")!.frameNumber(nominalRate: 30, dropFrame: false).get() == 1800)
        #expect(Timecode(parsing: "00:00:01") == nil)
        #expect(Timecode(parsing: "aa:00:01:00") == nil)
        #expect(throws: TimecodeError.self) { try Timecode(parsing: "00:00:00:24")!.frameNumber(nominalRate: 24, dropFrame: false).get() }
    }

    /// Drop-frame labels against an independent construction: count frames, and skip labels
    /// ;00 and ;01 (;00…;03 at 60) at each minute not divisible by ten.
    @Test(arguments: [30, 60]) func dropFrameTimecodeNumbersEveryFrameOnce(nominal: Int) throws {
        let dropped = nominal / 15
        var h = 0, m = 0, s = 0, f = 0
        for frame in 0..<(nominal * 60 * 12) {
            let label = Timecode(parsing: Substring(String(format: "%02d:%02d:%02d;%02d", h, m, s, f)))!
            #expect(try label.frameNumber(nominalRate: Int64(nominal), dropFrame: true).get() == Int64(frame))
            f += 1
            if f == nominal { f = 0; s += 1 }
            if s == 60 { s = 0; m += 1 }
            if m == 60 { m = 0; h += 1 }
            if s == 0 && f == 0 && m % 10 != 0 { f = dropped }
        }
        #expect(throws: TimecodeError.self) { try Timecode(parsing: "00:01:00;00")!.frameNumber(nominalRate: Int64(nominal), dropFrame: true).get() }
        #expect(try Timecode(parsing: "00:10:00;00")!.frameNumber(nominalRate: Int64(nominal), dropFrame: true).get() == Int64(600 * nominal - 9 * dropped))
        #expect(throws: TimecodeError.self) { try Timecode(parsing: "00:00:00;00")!.frameNumber(nominalRate: 25, dropFrame: true).get() }
    }
}
