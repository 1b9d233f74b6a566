import Foundation
import Testing
@testable import ReelCore
import ReelThreadTesting

/// `DuckEnvelope` against its definition, worked out by hand for 48 kHz (10 ms windows of 480
/// samples): the gain in dB at each window boundary, a straight line at `amount/attack` dB/s
/// down and `amount/release` dB/s up.
@Suite(.blocking) struct DuckEnvelopeTests {
    static let rate = 48_000
    static func dB(_ gain: Float) -> Double { 20 * log10(Double(gain)) }

    /// Mean squares: `loud` (−20 dBFS) in windows `sounding`, silence elsewhere, 200 windows (2 s).
    static func levels(_ sounding: Range<Int>, windows: Int = 200) -> [Double] {
        (0..<windows).map { sounding.contains($0) ? 0.01 : 0 }
    }

    @Test func silenceLeavesTheTrackAlone() {
        let envelope = DuckEnvelope(Ducking(under: [2]), levels: [Self.levels(0..<0)], sampleRate: Self.rate)
        #expect(envelope.windowSamples == 480)
        #expect(envelope.gains.count == 201 && envelope.gains.allSatisfy { $0 == 1 })
    }

    @Test func attackAndReleaseAreStraightLinesInDecibels() {
        // 12 dB in 0.1 s (10 windows) down, 0.5 s (50 windows) up; the voice sounds in windows 20..<100.
        let duck = Ducking(under: [2], amount: 12, threshold: -30, attack: 0.1, release: 0.5)
        let g = DuckEnvelope(duck, levels: [Self.levels(20..<100)], sampleRate: Self.rate).gains
        #expect(g[20] == 1)                                  // the dip starts with the voice's first window
        #expect(abs(Self.dB(g[25]) + 6) < 1e-4)              // half-way down after 5 windows
        #expect(abs(Self.dB(g[30]) + 12) < 1e-4)             // the full dip after the attack
        #expect(abs(Self.dB(g[100]) + 12) < 1e-4)            // held while the voice sounds
        #expect(abs(Self.dB(g[125]) + 6) < 1e-4)             // half-way back after 0.25 s
        #expect(abs(Self.dB(g[150])) < 1e-4 && g[150...].allSatisfy { $0 == 1 })
        #expect(zip(g[20..<30], g[21...30]).allSatisfy { $0 > $1 })  // monotonic down
    }

    @Test func zeroTimesStepAtOnce() {
        let duck = Ducking(under: [2], amount: 6, threshold: -30, attack: 0, release: 0)
        let g = DuckEnvelope(duck, levels: [Self.levels(10..<20)], sampleRate: Self.rate).gains
        #expect(g[10] == 1 && abs(Self.dB(g[11]) + 6) < 1e-4 && abs(Self.dB(g[20]) + 6) < 1e-4 && g[21] == 1)
    }

    @Test func theThresholdIsAnRMSLevelAndAnyUnderTrackCounts() {
        let duck = Ducking(under: [2, 3], amount: 10, threshold: -20, attack: 0, release: 0)
        // −20 dBFS RMS is a mean square of 0.01: just above it sounds, just below does not.
        let atThreshold = (0..<10).map { $0 < 5 ? 0.0101 : 0.0099 }
        let other = (0..<10).map { $0 == 8 ? 1.0 : 0 }
        let g = DuckEnvelope(duck, levels: [atThreshold, other], sampleRate: Self.rate).gains
        let dipped = g.dropFirst().map { abs(Self.dB($0) + 10) < 1e-4 }
        #expect(dipped == [true, true, true, true, true, false, false, false, true, false])
    }

    @Test func samplesBetweenBoundariesAreInterpolated() {
        let duck = Ducking(under: [2], amount: 12, threshold: -30, attack: 0, release: 0)
        let envelope = DuckEnvelope(duck, levels: [Self.levels(1..<2, windows: 3)], sampleRate: Self.rate)
        let low = envelope.gains[2]
        #expect(envelope.gain(atSample: -5) == 1 && envelope.gain(atSample: 480) == 1)
        #expect(envelope.gain(atSample: 960) == low)
        #expect(abs(envelope.gain(atSample: 720) - (1 + low) / 2) < 1e-6)
        #expect(envelope.gain(atSample: 10_000) == envelope.gains.last)
    }
}
