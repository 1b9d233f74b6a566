import Testing
@testable import ReelCore
import ReelThreadTesting

/// Exact time that cannot trap, and the per-job ceilings.
@Suite(.blocking) struct TimeDomainTests {
    @Test func hostileFractionsNeverTrapAndRoundOnlyOutsideTheDomain() {
        let a = Rational(1, 9_223_372_036_854_775_783), b = Rational(1, 9_223_372_036_854_775_643)
        let sum = a + b // exact: ~2.2e-19 with a 127-bit denominator; rounded to the nearest representable value
        #expect(sum >= .zero && sum.seconds < 1e-18)
        #expect(Rational(Int64.max) + Rational(Int64.max) == .greatestFinite)
        #expect(-Rational(Int64.max) - Rational(Int64.max) == -Rational.greatestFinite)
        #expect(Rational(Int64.max) * Rational(Int64.max) == .greatestFinite)
        #expect(Rational(Int64.min).num == -Int64.max, "Int64.min saturates so that negation is always safe")
        #expect(Rational(1, 3).scaled(to: Int64.max) == Int64.max / 3)
        #expect(Rational(Int64.max).scaled(to: 48000) == Int64.max, "saturates instead of trapping")
        #expect(Rational(Int64.max).ceilDiv(Rational(1, 1_000_000)) == Int64.max)
        #expect(Rational(-7, 2).floor == -4 && Rational(-7, 2).ceil == -3 && Rational(-7, 2).rounded == -4 && Rational(7, 2).rounded == 4)
        #expect(Rational(5, 2).floorDiv(Rational(1, 3)) == 7 && Rational(5, 2).ceilDiv(Rational(1, 3)) == 8)
    }

    /// Inside the domain every operation the planner takes is exact: sums of times on one
    /// timescale ≤ 2³², products with frame numbers up to the ceiling, quotients.
    @Test func arithmeticInsideTheDomainIsExact() {
        let scale = Int64(3_528_000_000) // lcm of 10⁶, 44 100, 48 000, 90 000, 192 000, 176 400
        #expect(scale <= TimeDomain.maximumTimescale)
        var rng = SplitMix64(seed: 42)
        for _ in 0..<20_000 {
            let x = Int64(bitPattern: rng.next()) % (TimeDomain.maximumSeconds * scale)
            let y = Int64(bitPattern: rng.next()) % (TimeDomain.maximumSeconds * scale)
            let a = Rational(x, scale), b = Rational(y, scale)
            #expect(TimeDomain.contains(a) && TimeDomain.contains(b))
            // Exactness checked independently in Int128.
            let s = a + b, d = a - b
            #expect(Int128(s.num) * Int128(scale) == (Int128(x) + Int128(y)) * Int128(s.den))
            #expect(Int128(d.num) * Int128(scale) == (Int128(x) - Int128(y)) * Int128(d.den))
            let k = Int(rng.next() % UInt64(RenderLimits.maximumFrames))
            let frameTime = Rational(1001, 60000) * k
            #expect(Int128(frameTime.num) * 60000 == Int128(1001) * Int128(k) * Int128(frameTime.den))
            if !b.isZero {
                let q = a / b
                #expect(Int128(q.num) * Int128(y) == Int128(x) * Int128(q.den))
            }
        }
    }

    @Test func commonTimescalesFitTogether() {
        var ts = TimeDomain.Timescale()
        for den: Int64 in [1_000_000, 44100, 48000, 90000, 30000, 24000, 60000, 192_000, 176_400, 25, 30] {
            let joined = ts.include(Rational(1, den))
            #expect(joined, "1/\(den)")
        }
        #expect(ts.value == 3_528_000_000)
        let eleventh = ts.include(Rational(1, 11))
        #expect(!eleventh, "an eleventh cannot join: 11 × 3 528 000 000 > 2³²")
        #expect(ts.value == 3_528_000_000, "a refused time leaves the timescale as it was")
    }

    /// The reported reproduction: it killed `reel validate` and the coordinator with SIGILL.
    @Test func theReportedOverflowIsAValidationProblemWithItsPath() {
        let json = Fixtures.composition(tracks: #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": "1/9223372036854775783", "sourceRange": {"start": 0, "duration": "1/9223372036854775643"}}]}]"#)
        let problems = Fixtures.problems(json)
        #expect(problems.count == 2)
        #expect(problems.first?.hasPrefix("tracks[0].segments[0].at: the fraction 1/9223372036854775783 has a denominator above 4294967296") == true)
        #expect(problems.last?.hasPrefix("tracks[0].segments[0].sourceRange.duration:") == true)
    }

    @Test func fractionsThatCannotShareATimescaleAreNamed() {
        let json = Fixtures.composition(tracks: #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": "1/4294967291", "sourceRange": {"start": "1/4294967279", "duration": 1}}]}]"#)
        #expect(Fixtures.problems(json) == [
            "tracks[0].segments[0].sourceRange.start: the fraction 1/4294967279 cannot be combined exactly with this composition's other times "
            + "(their common denominator would exceed 4294967296); write it with at most 6 decimals or with a denominator the other times share",
        ])
    }

    @Test func timesBeyondTheRangeAreRefused() {
        let json = Fixtures.composition(tracks: #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "s", "at": 10000001, "duration": 1}]}]"#)
        #expect(Fixtures.problems(json) == ["tracks[0].segments[0].at: 10000001 s is out of range: times must lie within ±10000000 s"])
    }

    @Test func aStillHeldAMillionSecondsExceedsTheFrameCeiling() {
        let json = Fixtures.composition(tracks: #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "s", "at": 0, "duration": 1000000}]}]"#)
        #expect(Fixtures.problems(json) == [
            "tracks[0].segments[0]: the composition lasts 1000000 s, 30000000 frames of 0.033333 s (1/30); "
            + "a job may have at most 5184000 frames (24 hours at 60 fps): shorten it or split it into several jobs",
        ])
    }

    @Test func aMicrosecondFrameDurationIsRefused() {
        let json = Fixtures.composition(extra: #""videoComposition": {"frameDuration": "1/1000000"}"#)
        #expect(Fixtures.problems(json) == [
            "videoComposition.frameDuration: 0.000001 s is more than 240 frames per second; the shortest frame duration is 0.004167 s (1/240)",
        ])
    }

    @Test func hostileProbeResultsMakeTheAssetUnusableNotTheProcessCrash() {
        var assets = Fixtures.ruleAssets
        let nan = AffineTransform(a: .nan, b: 0, c: 0, d: 1, tx: 0, ty: 0)
        assets["a"] = .described(url: "/m/a", Fixtures.movie(1920, 1080, duration: Rational(10), transform: nan))
        let problems = Fixtures.problems(Fixtures.composition(), assets: assets)
        #expect(problems.first?.hasPrefix("assets.a.url: the file's display matrix") == true, "\(problems)")

        assets["a"] = .described(url: "/m/a", Fixtures.movie(1920, 1080, duration: Rational(123_456_789, 2_147_483_647)))
        #expect(Fixtures.problems(Fixtures.composition(), assets: assets).first?.hasPrefix(
            "tracks[0].segments[0].asset: asset \"a\" lasts 0.057489 s (123456789/2147483647), which cannot be placed exactly") == true)
    }

    @Test func chunkCountNeverExceedsTheCeiling() {
        let chunks = ChunkPlanner.plan(frameCount: RenderLimits.maximumFrames, gopFrames: 1, frameDuration: Rational(1, 60),
                                       targetChunkSeconds: Rational(1, 60), minimumChunks: 1)
        // On a fixed grid of whole GOPs the step is rounded up, so the count lands at or just under the ceiling.
        #expect(chunks.count <= RenderLimits.maximumChunks && chunks.count > RenderLimits.maximumChunks / 2, "\(chunks.count)")
        #expect(chunks.first?.start == 0 && chunks.last?.end == RenderLimits.maximumFrames)
        #expect(RenderLimits.problem(withChunkSeconds: Rational(1, 9_223_372_036_854_775_783)) != nil)
        #expect(RenderLimits.problem(withChunkSeconds: .zero) == "must be > 0")
        #expect(RenderLimits.problem(withChunkSeconds: Rational(2)) == nil)
    }

    @Test(arguments: [(Rational(5312, 1000), "5.312 s"), (Rational(1001, 30000), "0.033367 s (1001/30000)"), (Rational(3), "3 s"),
                      (Rational(-1, 4), "-0.25 s")])
    func timesReadAsSeconds(_ t: Rational, _ text: String) {
        #expect(TimeFormatting.seconds(t) == text)
    }
}

/// The container follows `-o` when the composition does not name one.
@Suite(.blocking) struct OutputContainerTests {
    @Test(arguments: [("out.mp4", nil, FileType.mp4), ("a/b/OUT.M4V", nil, .mp4), ("clip.mov", nil, .mov),
                      ("clip.mov", FileType.mov, .mov), ("x.mp4", FileType.mp4, .mp4)])
    func extensionDecides(_ path: String, _ written: FileType?, _ expected: FileType) throws {
        #expect(try OutputContainer.fileType(forOutput: path, written: written).get() == expected)
    }

    @Test func unknownOrConflictingNamesAreErrorsNamingBoth() {
        guard case .failure(let mkv) = OutputContainer.fileType(forOutput: "/tmp/out.mkv", written: nil),
              case .failure(let bare) = OutputContainer.fileType(forOutput: "out", written: .mov),
              case .failure(let conflict) = OutputContainer.fileType(forOutput: "out.mov", written: .mp4) else {
            Issue.record("a bad output name was accepted"); return
        }
        #expect(mkv.message == "the output name out.mkv ends in .mkv; Reel writes .mp4, .m4v, .mov, .m4a, .wav, .webm, .m3u8, .png")
        #expect(bare.message == "the output name out has no extension; Reel writes .mp4, .m4v, .mov, .m4a, .wav, .webm, .m3u8, .png (this composition's export.fileType is \"mov\")")
        #expect(conflict.message == "export.fileType is \"mp4\" but the output name out.mov ends in .mov (mov): change the name's extension or the fileType so they agree")
    }
}
