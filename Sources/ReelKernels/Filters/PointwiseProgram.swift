import Foundation
import ReelCore

/// A run of consecutive pointwise filters compiled into one pass over the picture.
///
/// Semantics (docs/composition.md, "Filters"): each pixel's RGB is computed from its luma
/// and its block's chroma, unclamped; a run of consecutive affine filters (brightness,
/// contrast, saturation, exposure, hue, grayscale, invert, sepia, colorMatrix) is ONE affine
/// map whose result is clamped to 0…1 (the values in between are not clamped, as in a float
/// pipeline: brightness +0.5 then −0.5 changes nothing); `gamma` and `lut` clamp their input
/// to 0…1 (the LUT to its domain) and their output to 0…1.
///
/// Speed: the first affine run is folded into the Y'CbCr → RGB conversion, so each channel
/// of a pixel costs one multiply-add from its luma plus a per-block term from its chroma;
/// later stages run on the group's lanes in registers. One read and one write of the
/// picture whatever the number of filters. On x86-64 a program that is one affine run (or
/// one followed by a `gamma`) whose terms fit 16 bits runs in fixed point (`FixedAffine`),
/// eight pixels a register: the common case, 3.3× this loop.
struct PointwiseProgram {
    enum Stage {
        case affine([Float])
        /// `x^gamma` sampled at `Curve.segments + 1` points of 0…1, interpolated linearly.
        case curve([Float])
        case lut(LUTKernel, intensity: Float)
    }

    /// `channel = y·slope[c] + (Cb − 128)·cbWeight[c] + (Cr − 128)·crWeight[c] + offset[c]`:
    /// the first affine run applied to the picture's RGB, from 8-bit code values.
    var slope: SIMD3<Float>, cbWeight: SIMD3<Float>, crWeight: SIMD3<Float>, offset: SIMD3<Float>
    var stages: [Stage]
    /// True when the program is the identity (every filter at a neutral value): skipped.
    var isIdentity: Bool
    /// The program in 16-bit fixed point, when it is one affine map whose terms fit, possibly
    /// followed by one `gamma`.
    var fixed: FixedAffine?
    /// The picture's Y'CbCr conversions.
    let colour: KernelYCbCr

    static let curveSegments = 4096

    /// Compiles `filters` (all pointwise) for pictures converted by `colour`; `luts` gives
    /// each `lut` filter's table by asset id.
    init(_ filters: [FilterDraw], colour: KernelYCbCr = .bt601, luts: (String) throws -> LUTKernel) rethrows {
        self.colour = colour
        var first: ColorAffine?
        var pending: ColorAffine?
        var stages: [Stage] = []
        func flush() {
            if first == nil { first = pending ?? .identity }
            else if let p = pending { stages.append(.affine(p.m.map(Float.init))) }
            pending = nil
        }
        for filter in filters {
            if let affine = ColorAffine.of(filter) {
                pending = (pending ?? .identity).then(affine)
                continue
            }
            flush()
            switch filter {
            case .gamma(let g):
                stages.append(.curve((0...Self.curveSegments).map { Float(pow(Double($0) / Double(Self.curveSegments), g)) }))
            case .lut(let asset, let intensity):
                stages.append(.lut(try luts(asset), intensity: Float(intensity)))
            default:
                preconditionFailure("\(filter.type) is not a pointwise filter")
            }
        }
        flush()
        let m = first ?? .identity
        // rgb = (y − 16)·kY·(1,1,1) + C·(cb, cr) with C's rows (0, kRV), (kGU, kGV), (kBU, 0).
        let kY = Double(colour.kY), kRV = Double(colour.kRV), kGU = Double(colour.kGU), kGV = Double(colour.kGV), kBU = Double(colour.kBU)
        func row(_ i: Int) -> (Double, Double, Double, Double) { (m[i, 0], m[i, 1], m[i, 2], m[i, 3]) }
        var s = SIMD3<Float>(), u = SIMD3<Float>(), v = SIMD3<Float>(), o = SIMD3<Float>()
        for i in 0..<3 {
            let (a, b, c, d) = row(i)
            let sl = kY * (a + b + c)
            s[i] = Float(sl)
            u[i] = Float(b * kGU + c * kBU)
            v[i] = Float(a * kRV + b * kGV)
            o[i] = Float(d - 16 * sl)
        }
        slope = s; cbWeight = u; crWeight = v; offset = o
        self.stages = stages
        isIdentity = stages.isEmpty && m == .identity
        switch stages.count {
        case 0: fixed = FixedAffine(slope: s, cbWeight: u, crWeight: v, offset: o, colour: colour)
        case 1:
            // An affine run then one `gamma` (the common way to use it): the curve by table.
            if case .curve(let table) = stages[0] {
                fixed = FixedAffine(slope: s, cbWeight: u, crWeight: v, offset: o, colour: colour, curve: FixedAffine.Curve(samples: table))
            }
        default: break
        }
    }

    /// Runs the program over `image` in place (even width and height).
    func apply(to image: YUVImage) {
        guard !isIdentity else { return }
        if let fixed { return fixed.apply(to: image) }
        if stages.isEmpty { sweep(image, staged: false) } else { sweep(image, staged: true) }
    }

    /// The loop over the picture's groups, whole groups first (their `count` is a constant 8),
    /// then a narrower last one. `staged` is a constant at each call, so the affine-only
    /// programs (the common case) carry no stage code.
    @inline(__always) private func sweep(_ image: YUVImage, staged: Bool) {
        let width = image.width, whole = width & ~7
        for cy in 0..<(image.height / 2) {
            let rows = GroupRows(image, cy: cy)
            var x = 0
            while x < whole {
                group(rows, x: x, count: 8, staged: staged)
                x += 8
            }
            if x < width { group(rows, x: x, count: width - x, staged: staged) }
        }
    }

    @inline(__always) private func group(_ rows: GroupRows, x: Int, count: Int, staged: Bool) {
        let s = slope, cbw = cbWeight, crw = crWeight, o = offset
        let cx = x / 2, cn = count / 2
        let cu = PixelLanes.load4(rows.u + cx, count: cn) - 128
        let cv = PixelLanes.load4(rows.v + cx, count: cn) - 128
        let wr = PixelLanes.widen(cu * cbw.x + cv * crw.x + o.x)
        let wg = PixelLanes.widen(cu * cbw.y + cv * crw.y + o.y)
        let wb = PixelLanes.widen(cu * cbw.z + cv * crw.z + o.z)
        let y0 = PixelLanes.load(rows.y0 + x, count: count)
        let y1 = PixelLanes.load(rows.y1 + x, count: count)
        var g = RGBGroup(r0: y0 * s.x + wr, g0: y0 * s.y + wg, b0: y0 * s.z + wb,
                         r1: y1 * s.x + wr, g1: y1 * s.y + wg, b1: y1 * s.z + wb)
        g.clamp()
        if staged { runStages(on: &g) }
        g.store(rows, x: x, count: count, colour)
    }

    /// The stages after the first affine run, on one group: out of line, so the affine-only
    /// loop stays small enough to keep its constants in registers.
    @inline(never) private func runStages(on g: inout RGBGroup) {
        for stage in stages { Self.run(stage, on: &g) }
    }

    @inline(__always) static func run(_ stage: Stage, on g: inout RGBGroup) {
        switch stage {
        case .affine(let m):
            g.rows { r, gr, b in
                let nr = r * m[0] + gr * m[1] + b * m[2] + m[3]
                let ng = r * m[4] + gr * m[5] + b * m[6] + m[7]
                let nb = r * m[8] + gr * m[9] + b * m[10] + m[11]
                r = nr; gr = ng; b = nb
            }
            g.clamp()
        case .curve(let table):
            table.withUnsafeBufferPointer { t in
                g.rows { r, gr, b in
                    r = curve(r, t); gr = curve(gr, t); b = curve(b, t)
                }
            }
        case .lut(let kernel, let intensity):
            g.rows { r, gr, b in kernel.apply(&r, &gr, &b, intensity: intensity) }
            g.clamp()
        }
    }

    /// `table` (0…1 sampled at `curveSegments + 1` points) at each lane, clamped to 0…1 first.
    ///
    /// The segment index and fraction are worked out on all lanes at once (the 1.5·2²³ trick
    /// rounds, a masked step turns that into floor, and the rounded value's low mantissa bits
    /// are the index): only the two table reads are per lane.
    @inline(__always) static func curve(_ v: Lanes8, _ t: UnsafeBufferPointer<Float>) -> Lanes8 {
        let p = PixelLanes.clamp(v, 0, 1) * Float(curveSegments)
        let rounded = (p + 12_582_912) - 12_582_912
        let k = PixelLanes.clamp(rounded.replacing(with: rounded - 1, where: rounded .> p), 0, Float(curveSegments - 1))
        let w = p - k
        let index = unsafeBitCast(k + 12_582_912, to: SIMD8<UInt32>.self) & 0x3F_FFFF
        var ends = (Lanes8(), Lanes8())
        withUnsafeMutableBytes(of: &ends) { raw in
            let o = raw.baseAddress!.assumingMemoryBound(to: Float.self)
            for i in 0..<8 {
                let j = Int(index[i])
                o[i] = t[j]; o[8 + i] = t[j + 1]
            }
        }
        return ends.0 + (ends.1 - ends.0) * w
    }
}

/// A `.cube` table ready for the kernels: entries as `Float` in memory of its own (the
/// kernels read it through a plain pointer: no array access, retain or release per group),
/// the domain as scale and offset.
public final class LUTKernel: @unchecked Sendable {
    public let lut: CubeLUT
    private let scale: SIMD3<Float>, shift: SIMD3<Float>
    private let n: Int
    private let entries: UnsafeMutablePointer<Float>

    public init(_ lut: CubeLUT) {
        self.lut = lut
        n = lut.size
        var s = SIMD3<Float>(), o = SIMD3<Float>()
        for c in 0..<3 {
            let k = Double(lut.size - 1) / (lut.domainMax[c] - lut.domainMin[c])
            s[c] = Float(k); o[c] = Float(-lut.domainMin[c] * k)
        }
        scale = s; shift = o
        entries = .allocate(capacity: lut.table.count)
        entries.initialize(from: lut.table, count: lut.table.count)
    }

    deinit { entries.deallocate() }

    /// The table at every lane, mixed with the input by `intensity`.
    ///
    /// Each lane's result is written to a scalar buffer and the buffer read back as lanes once:
    /// writing a lane of a vector by a run-time index goes through memory, and reading the
    /// whole vector back after each such write stalls (the load cannot be forwarded from the
    /// narrower store), 24 times per group.
    @inline(__always) func apply(_ r: inout Lanes8, _ g: inout Lanes8, _ b: inout Lanes8, intensity: Float) {
        let last = Float(n - 1)
        let pr = PixelLanes.clamp(r * scale.x + shift.x, 0, last)
        let pg = PixelLanes.clamp(g * scale.y + shift.y, 0, last)
        let pb = PixelLanes.clamp(b * scale.z + shift.z, 0, last)
        var out = (Lanes8(), Lanes8(), Lanes8())
        let t = UnsafePointer(entries), n = n, is3D = lut.isThreeDimensional
        withUnsafeMutableBytes(of: &out) { raw in
            let o = raw.baseAddress!.assumingMemoryBound(to: Float.self)
            for i in 0..<8 {
                let v: SIMD3<Float>
                if is3D {
                    v = Self.tetrahedral(t, n, pr[i], pg[i], pb[i])
                } else {
                    v = SIMD3(Self.linear(t, n, pr[i], 0), Self.linear(t, n, pg[i], 1), Self.linear(t, n, pb[i], 2))
                }
                o[i] = v.x; o[8 + i] = v.y; o[16 + i] = v.z
            }
        }
        if intensity >= 1 {
            r = out.0; g = out.1; b = out.2
        } else {
            r += (out.0 - r) * intensity; g += (out.1 - g) * intensity; b += (out.2 - b) * intensity
        }
    }

    @inline(__always) private static func linear(_ t: UnsafePointer<Float>, _ n: Int, _ p: Float, _ c: Int) -> Float {
        let i = min(Int(p), n - 2), f = p - Float(i)
        let a = t[3 * i + c], b = t[3 * (i + 1) + c]
        return a + (b - a) * f
    }

    /// Tetrahedral interpolation in the cell of (r, g, b) (table positions, 0…n−1).
    @inline(__always) private static func tetrahedral(_ t: UnsafePointer<Float>, _ n: Int, _ r: Float, _ g: Float, _ b: Float) -> SIMD3<Float> {
        let ir = min(Int(r), n - 2), ig = min(Int(g), n - 2), ib = min(Int(b), n - 2)
        let fr = r - Float(ir), fg = g - Float(ig), fb = b - Float(ib)
        let sr = 3, sg = 3 * n, sb = 3 * n * n
        let p = t + (ib * sb + ig * sg + ir * sr)
        @inline(__always) func at(_ o: Int) -> SIMD3<Float> { SIMD3(p[o], p[o + 1], p[o + 2]) }
        let c000 = at(0), c111 = at(sr + sg + sb)
        // The tetrahedron holding the point: walk the axes in order of decreasing fraction.
        if fr > fg {
            if fg > fb {        // r > g > b
                return c000 * (1 - fr) + at(sr) * (fr - fg) + at(sr + sg) * (fg - fb) + c111 * fb
            } else if fr > fb { // r > b ≥ g
                return c000 * (1 - fr) + at(sr) * (fr - fb) + at(sr + sb) * (fb - fg) + c111 * fg
            } else {            // b ≥ r > g
                return c000 * (1 - fb) + at(sb) * (fb - fr) + at(sr + sb) * (fr - fg) + c111 * fg
            }
        } else {
            if fb > fg {        // b > g ≥ r
                return c000 * (1 - fb) + at(sb) * (fb - fg) + at(sg + sb) * (fg - fr) + c111 * fr
            } else if fb > fr { // g ≥ b > r
                return c000 * (1 - fg) + at(sg) * (fg - fb) + at(sg + sb) * (fb - fr) + c111 * fr
            } else {            // g ≥ r ≥ b
                return c000 * (1 - fg) + at(sg) * (fg - fr) + at(sr + sg) * (fr - fb) + c111 * fb
            }
        }
    }
}
