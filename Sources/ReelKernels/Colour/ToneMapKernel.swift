import ReelCore

/// Tone-maps linear-light RGB in place, as ffmpeg's `tonemap` filter does each pixel:
/// desaturate towards luma by how far luma exceeds `desat`, take the brightest component
/// `sig` (at least 1e-6), and scale all three by `curve(sig) / sig`.
///
/// The curve is read from a table with 1024 entries per octave of `sig` (from 2⁻²⁰ to 2⁸,
/// indexed by the float's bits, linearly interpolated): within a few parts in 10⁷ of the
/// formula, and a few nanoseconds a pixel where the formula (BT.2390's four powers) costs
/// a hundred.
public struct ToneMapKernel: Sendable {
    private let table: [Float]
    private let desat: Float
    private let weights: SIMD3<Float>?

    private static let lowExponentBits: UInt32 = Float(0x1p-20).bitPattern
    private static let highValue: Float = 0x1p8
    private static let fractionBits: UInt32 = 13

    /// `lumaWeights`: the source matrix's (Kr, Kg, Kb), which ffmpeg's filter uses for the
    /// desaturation; nil (an RGB source) turns desaturation off.
    public init(mapping: ToneMapping, peak: Double, lumaWeights: (r: Double, g: Double, b: Double)?) {
        let curve = ToneCurve(mapping, peak: peak)
        let entries = Int((Self.highValue.bitPattern - Self.lowExponentBits) >> Self.fractionBits) + 2
        table = (0..<entries).map { i in
            let x = Float(bitPattern: Self.lowExponentBits + UInt32(i) << Self.fractionBits)
            return Float(curve(Double(x)))
        }
        desat = Float(mapping.desat)
        weights = mapping.desat > 0 ? lumaWeights.map { SIMD3(Float($0.r), Float($0.g), Float($0.b)) } : nil
    }

    /// The curve as the kernel evaluates it (tests compare it with `ToneCurve`).
    @inline(__always) public func curve(_ sig: Float) -> Float {
        let s = min(max(sig, Float(0x1p-20)), Self.highValue)
        let offset = s.bitPattern &- Self.lowExponentBits
        let index = Int(offset >> Self.fractionBits)
        let fraction = Float(offset & ((1 << Self.fractionBits) - 1)) * (1 / Float(1 << Self.fractionBits))
        return table.withUnsafeBufferPointer { t in t[index] + (t[index + 1] - t[index]) * fraction }
    }

    /// Maps `count` pixels of three float planes in place.
    public func apply(r: UnsafeMutablePointer<Float>, g: UnsafeMutablePointer<Float>, b: UnsafeMutablePointer<Float>, count: Int) {
        table.withUnsafeBufferPointer { t in
            let t = t.baseAddress!
            for i in 0..<count {
                var cr = r[i], cg = g[i], cb = b[i]
                if let w = weights {
                    let luma = w.x * cr + w.y * cg + w.z * cb
                    let overbright = max(luma - desat, 1e-6) / max(luma, 1e-6)
                    cr = cr * (1 - overbright) + luma * overbright
                    cg = cg * (1 - overbright) + luma * overbright
                    cb = cb * (1 - overbright) + luma * overbright
                }
                let sig = max(max(cr, cg), max(cb, 1e-6))
                let s = min(sig, Self.highValue)
                let offset = s.bitPattern &- Self.lowExponentBits
                let index = Int(offset >> Self.fractionBits)
                let fraction = Float(offset & ((1 << Self.fractionBits) - 1)) * (1 / Float(1 << Self.fractionBits))
                let mapped = t[index] + (t[index + 1] - t[index]) * fraction
                let scale = mapped / sig
                r[i] = cr * scale; g[i] = cg * scale; b[i] = cb * scale
            }
        }
    }
}
