import Foundation
import ReelCore

/// The tone curves of `ToneMapping`, as functions of a component's linear value (1.0 = SDR
/// white, 100 cd/m²) for a signal peaking at `peak`. hable, mobius, reinhard and clip are
/// ffmpeg's `tonemap` filter's formulas (libavfilter/vf_tonemap.c) with its parameter defaults;
/// bt2390 is ITU-R BT.2390's EETF.
public struct ToneCurve: Sendable {
    public let curve: ToneMapping.Curve
    public let peak: Double
    /// The parameter after ffmpeg's defaults and its reinhard transform `(1 − p) / p`.
    public let param: Double

    public init(_ mapping: ToneMapping, peak: Double) {
        curve = mapping.curve
        self.peak = peak
        switch mapping.curve {
        case .mobius: param = mapping.param ?? 0.3
        case .reinhard: param = mapping.param.map { (1 - $0) / $0 } ?? 1
        default: param = mapping.param ?? 1
        }
        bt2390 = BT2390(peak: peak)
    }

    private let bt2390: BT2390

    /// The mapped value of `sig` (> 0).
    public func callAsFunction(_ sig: Double) -> Double {
        switch curve {
        case .clip: return min(max(sig * param, 0), 1)
        case .hable: return Self.hable(sig) / Self.hable(peak)
        case .reinhard: return sig / (sig + param) * (peak + param) / peak
        case .mobius: return Self.mobius(sig, j: param, peak: peak)
        case .bt2390: return bt2390(sig)
        }
    }

    static func hable(_ x: Double) -> Double {
        let a = 0.15, b = 0.50, c = 0.10, d = 0.20, e = 0.02, f = 0.30
        return (x * (x * a + b * c) + d * e) / (x * (x * a + b) + d * f) - e / f
    }

    static func mobius(_ x: Double, j: Double, peak: Double) -> Double {
        if x <= j { return x }
        let a = -j * j * (peak - 1) / (j * j - 2 * j + peak)
        let b = (j * j - 2 * j * peak + peak) / max(peak - 1, 1e-6)
        return (b * b + 2 * b * j + j * j) / (b - a) * (x + a) / (x + b)
    }

    /// BT.2390-10 §5.4.1 with source black and target black 0 cd/m², target peak SDR white
    /// (100 cd/m²): values are taken to PQ, normalised by the source peak's PQ value, bent by
    /// the Hermite spline above the knee `KS = 1.5·maxLum − 0.5`, and taken back to linear.
    /// A source no brighter than SDR white is left as it is.
    struct BT2390: Sendable {
        let black: Double, white: Double, maxLum: Double, knee: Double

        init(peak: Double) {
            black = Self.pq(0)
            white = Self.pq(peak / 100)
            maxLum = (Self.pq(0.01) - black) / (white - black)
            knee = 1.5 * maxLum - 0.5
        }

        func callAsFunction(_ sig: Double) -> Double {
            guard maxLum < 1 else { return sig }
            let e1 = min(max((Self.pq(sig / 100) - black) / (white - black), 0), 1)
            var e2 = e1
            if e1 >= knee {
                let t = (e1 - knee) / (1 - knee), t2 = t * t, t3 = t2 * t
                e2 = (2 * t3 - 3 * t2 + 1) * knee + (t3 - 2 * t2 + t) * (1 - knee) + (-2 * t3 + 3 * t2) * maxLum
            }
            return Self.pqInverse(e2 * (white - black) + black) * 100
        }

        static let m1 = 2610.0 / 16384, m2 = 2523.0 / 4096 * 128
        static let c1 = 3424.0 / 4096, c2 = 2413.0 / 4096 * 32, c3 = 2392.0 / 4096 * 32

        /// ST 2084's inverse EOTF: luminance / 10000 cd/m² → signal.
        static func pq(_ y: Double) -> Double {
            let p = pow(max(y, 0), m1)
            return pow((c1 + c2 * p) / (1 + c3 * p), m2)
        }

        /// ST 2084's EOTF: signal → luminance / 10000 cd/m².
        static func pqInverse(_ e: Double) -> Double {
            let p = pow(max(e, 0), 1 / m2)
            return pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
        }
    }
}
