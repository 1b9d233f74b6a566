import ReelCore

/// Composites a layer buffer onto the frame with a separable blend mode of W3C Compositing
/// and Blending Level 1, in gamma-encoded 0…1 RGB (both inputs clamped to 0…1).
///
/// The frame (backdrop) is opaque, so the specification's `Cs' = (1 − αb)·Cs + αb·B(Cb, Cs)`
/// is `B(Cb, Cs)`, and source-over with `αs` = the layer's alpha × opacity gives
/// `αs·B(Cb, Cs) + (1 − αs)·Cb`. Per pixel in RGB, luma written per pixel and chroma from each
/// 2×2 block's mean (see `PixelLanes`). `normal` is not handled here: it is the compositor's
/// source-over in Y'CbCr, which equals it.
enum BlendModeKernel {
    /// `layer` (with an alpha plane, same size as `frame`) onto `frame` at `opacity` (0…1).
    ///
    /// One loop per mode: the mode is a constant inside each (`apply` inlined with a literal
    /// mode folds its `switch` away), so no pixel group pays for choosing it.
    /// On x86-64 `FixedBlend` runs the same formulas in 16-bit fixed point (twice as many
    /// pixels a register) unless `fixedPoint` is false; this `Float` loop runs elsewhere.
    static func blend(_ layer: YUVImage, onto frame: YUVImage, mode: BlendMode, opacity: Double, colour: KernelYCbCr = .bt601,
                      fixedPoint: Bool = true) {
        precondition(layer.width == frame.width && layer.height == frame.height)
        #if arch(x86_64)
        if fixedPoint && frame.width % 2 == 0 && frame.height % 2 == 0 {
            return FixedBlend.blend(layer, onto: frame, mode: mode, opacity: opacity, colour: colour)
        }
        #endif
        switch mode {
        case .normal: run(layer, frame, opacity, colour) { apply(.normal, $0, $1) }
        case .multiply: run(layer, frame, opacity, colour) { apply(.multiply, $0, $1) }
        case .screen: run(layer, frame, opacity, colour) { apply(.screen, $0, $1) }
        case .overlay: run(layer, frame, opacity, colour) { apply(.overlay, $0, $1) }
        case .darken: run(layer, frame, opacity, colour) { apply(.darken, $0, $1) }
        case .lighten: run(layer, frame, opacity, colour) { apply(.lighten, $0, $1) }
        case .colorDodge: run(layer, frame, opacity, colour) { apply(.colorDodge, $0, $1) }
        case .colorBurn: run(layer, frame, opacity, colour) { apply(.colorBurn, $0, $1) }
        case .hardLight: run(layer, frame, opacity, colour) { apply(.hardLight, $0, $1) }
        case .softLight: run(layer, frame, opacity, colour) { apply(.softLight, $0, $1) }
        case .difference: run(layer, frame, opacity, colour) { apply(.difference, $0, $1) }
        case .exclusion: run(layer, frame, opacity, colour) { apply(.exclusion, $0, $1) }
        case .add: run(layer, frame, opacity, colour) { apply(.add, $0, $1) }
        }
    }

    /// The blend loop with `B(Cb, Cs)` = `mode`.
    @inline(__always)
    private static func run(_ layer: YUVImage, _ frame: YUVImage, _ opacity: Double, _ colour: KernelYCbCr, _ mode: (Lanes8, Lanes8) -> Lanes8) {
        let op = Float(min(max(opacity, 0), 1)) / 255
        let alpha = layer.a
        RGBGroup.forEach(width: frame.width, height: frame.height) { x, cy, count in
            var s = RGBGroup.load(layer, x: x, cy: cy, count: count, colour)
            var b = RGBGroup.load(frame, x: x, cy: cy, count: count, colour)
            s.clamp(); b.clamp()
            let a0: Lanes8, a1: Lanes8
            if let alpha {
                a0 = PixelLanes.load(alpha.row(2 * cy) + x, count: count) * op
                a1 = PixelLanes.load(alpha.row(2 * cy + 1) + x, count: count) * op
            } else {
                a0 = Lanes8(repeating: op * 255); a1 = a0
            }
            var out = b
            out.r0 = mix(b.r0, mode(b.r0, s.r0), a0)
            out.g0 = mix(b.g0, mode(b.g0, s.g0), a0)
            out.b0 = mix(b.b0, mode(b.b0, s.b0), a0)
            out.r1 = mix(b.r1, mode(b.r1, s.r1), a1)
            out.g1 = mix(b.g1, mode(b.g1, s.g1), a1)
            out.b1 = mix(b.b1, mode(b.b1, s.b1), a1)
            out.store(frame, x: x, cy: cy, count: count, colour)
        }
    }

    @inline(__always) static func mix(_ b: Lanes8, _ blended: Lanes8, _ a: Lanes8) -> Lanes8 {
        b + (blended - b) * a
    }

    /// `B(Cb, Cs)` for one channel, both in 0…1.
    @inline(__always) static func apply(_ mode: BlendMode, _ cb: Lanes8, _ cs: Lanes8) -> Lanes8 {
        let one = Lanes8(repeating: 1), zero = Lanes8(repeating: 0), exact: Float = 1e-5
        switch mode {
        case .normal:
            return cs
        case .multiply:
            return cb * cs
        case .screen:
            return cb + cs - cb * cs
        case .overlay:
            return hardLight(cs: cb, cb: cs)
        case .darken:
            return cb.replacing(with: cs, where: cs .< cb)
        case .lighten:
            return cb.replacing(with: cs, where: cs .> cb)
        case .colorDodge:
            // Cb = 0 → 0; Cs = 1 → 1; else min(1, Cb / (1 − Cs)). "= 0" and "= 1" within
            // `exact` (far below an 8-bit step): Float's 0…1 of a code value is not always exact.
            let full = cs .>= 1 - exact
            let denominator = (one - cs).replacing(with: one, where: full)
            var r = PixelLanes.clamp(cb / denominator, 0, 1)
            r.replace(with: one, where: full)
            r.replace(with: zero, where: cb .<= exact)
            return r
        case .colorBurn:
            // Cb = 1 → 1; Cs = 0 → 0; else 1 − min(1, (1 − Cb) / Cs).
            let none = cs .<= exact
            let denominator = cs.replacing(with: one, where: none)
            var r = one - PixelLanes.clamp((one - cb) / denominator, 0, 1)
            r.replace(with: zero, where: none)
            r.replace(with: one, where: cb .>= 1 - exact)
            return r
        case .hardLight:
            return hardLight(cs: cs, cb: cb)
        case .softLight:
            // Cs ≤ 0.5: Cb − (1 − 2Cs)·Cb·(1 − Cb); else Cb + (2Cs − 1)·(D(Cb) − Cb),
            // D(Cb) = Cb ≤ 0.25 ? ((16Cb − 12)·Cb + 4)·Cb : √Cb.
            let low = cb - (one - 2 * cs) * cb * (one - cb)
            let d = (((16 * cb - 12) * cb + 4) * cb).replacing(with: cb.squareRoot(), where: cb .> 0.25)
            let high = cb + (2 * cs - one) * (d - cb)
            return low.replacing(with: high, where: cs .> 0.5)
        case .difference:
            let d = cb - cs
            return d.replacing(with: -d, where: d .< 0)
        case .exclusion:
            return cb + cs - 2 * cb * cs
        case .add:
            return PixelLanes.clamp(cb + cs, 0, 1)
        }
    }

    /// Cs ≤ 0.5: Multiply(Cb, 2Cs); else Screen(Cb, 2Cs − 1).
    @inline(__always) static func hardLight(cs: Lanes8, cb: Lanes8) -> Lanes8 {
        let multiply = cb * (2 * cs)
        let s = 2 * cs - 1
        let screen = cb + s - cb * s
        return multiply.replacing(with: screen, where: cs .> 0.5)
    }
}

extension Compositor {
    /// Composites `layer` (with an alpha plane, the size of `frame`) onto `frame` with `mode`
    /// at `opacity`: source-over in Y'CbCr for `normal`, `BlendModeKernel` otherwise, on the
    /// R'G'B' of both pictures' matrix `matrix`.
    public static func blend(_ layer: YUVImage, onto frame: YUVImage, mode: BlendMode, opacity: Double, matrix: YCbCrMatrix = .smpte170M) {
        if mode == .normal {
            draw(layer, transform: .identity, opacity: opacity, crop: nil, onto: frame)
        } else {
            BlendModeKernel.blend(layer, onto: frame, mode: mode, opacity: opacity, colour: KernelYCbCr(matrix))
            Compositor.accumulateCoverage(of: layer, opacity: opacity, onto: frame)
        }
    }
}
