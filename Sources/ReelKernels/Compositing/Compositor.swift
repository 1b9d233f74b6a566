#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif
import ReelCore

/// Draws `YUVImage`s onto `YUVImage`s: the per-frame work of the renderer.
///
/// Conventions: pixel `(i, j)` covers `[i, i+1) × [j, j+1)` and is sampled at its centre;
/// transforms map source pixel coordinates to dest pixel coordinates (CGAffineTransform
/// semantics). Colour is blended in Y'CbCr directly (no round trip through RGB), 8-bit,
/// source-over with straight alpha.
///
/// A dest with an alpha plane (a frame whose output keeps alpha) holds its colour
/// premultiplied over black — the colour the frame has composited over a black backdrop — and
/// its coverage in the alpha plane: source-over (Porter-Duff over) is then the same blend on the
/// colour as on an opaque dest, plus `αd' = αs + αd·(1 − αs)` on the alpha plane, which is the
/// colour formula applied to a source of value 255. `unpremultiply` turns such a frame into
/// straight alpha for the encoder. A dest without an alpha plane is opaque: its pixels are
/// exactly what they were before alpha existed.
///
/// Single-threaded and allocation-free per pixel; parallelism belongs to the caller (one frame
/// per thread). Not thread-safe for the same `dest`.
public enum Compositor {
    /// Fills `dest` with `color` over black (`conversion` of the RGB colour multiplied by its
    /// alpha, which is the colour itself when it is opaque); an alpha plane, if present, takes
    /// the colour's alpha. Without an alpha plane a transparent colour is thus drawn over black.
    public static func fill(_ dest: YUVImage, color: RGBAColor, conversion: ColorConversion) {
        let a = Int(color.a)
        func times(_ v: UInt8) -> UInt8 { UInt8(truncatingIfNeeded: BlendKernels.div255(Int(v) * a)) }
        let c = conversion.yuv(RGBAColor(r: times(color.r), g: times(color.g), b: times(color.b)))
        dest.fill(y: c.y, u: c.u, v: c.v, alpha: color.a)
    }

    /// Turns a frame composited with an alpha plane (colour premultiplied over black, see the
    /// type's notes) into straight alpha in place: `C = black + (C − black)·255/α`, rounded and
    /// clamped, with chroma divided by the mean alpha of its 2×2 block. Where α is 0 the colour
    /// becomes black. A frame without an alpha plane is left as it is.
    public static func unpremultiply(_ image: YUVImage) {
        guard let a = image.a else { return }
        // reciprocal[α] = 255·65536/α (16.16 fixed point); index 0 unused.
        let reciprocal = (0...255).map { $0 == 0 ? 0 : (255 << 16 + $0 / 2) / $0 }
        @inline(__always) func straight(_ c: UInt8, _ black: Int, _ alpha: Int) -> UInt8 {
            if alpha >= 255 { return c }
            if alpha == 0 { return UInt8(truncatingIfNeeded: black) }
            let v = black + ((Int(c) - black) * reciprocal[alpha] + 32768) >> 16
            return UInt8(truncatingIfNeeded: min(max(v, 0), 255))
        }
        for y in 0..<image.height {
            let yr = image.y.row(y), ar = a.row(y)
            for x in 0..<image.width { yr[x] = straight(yr[x], 16, Int(ar[x])) }
        }
        for y in 0..<image.u.height {
            let r0 = a.row(2 * y), r1 = 2 * y + 1 < a.height ? a.row(2 * y + 1) : r0
            let ur = image.u.row(y), vr = image.v.row(y)
            for x in 0..<image.u.width {
                let x1 = min(2 * x + 1, a.width - 1)
                let mean = (Int(r0[2 * x]) + Int(r0[x1]) + Int(r1[2 * x]) + Int(r1[x1]) + 2) >> 2
                ur[x] = straight(ur[x], 128, mean)
                vr[x] = straight(vr[x], 128, mean)
            }
        }
    }

    /// Source-over draws `source` onto `dest`.
    ///
    /// - Parameters:
    ///   - transform: maps SOURCE pixel coordinates (origin top-left) to DEST pixel coordinates.
    ///   - opacity: 0…1, multiplies the source alpha; ≤ 0 (or NaN) draws nothing.
    ///   - crop: the part of the source to draw, in source pixel coordinates; nil = all of it.
    ///   - dest: modified in place; pixels the drawn rectangle does not touch stay unchanged.
    ///   - coverage: false leaves `dest`'s alpha plane alone (for a caller that writes it itself).
    ///
    /// Sampling is bilinear with taps clamped to the crop. The crop rectangle's edges are
    /// antialiased: coverage ramps from 1 to 0 over one DEST pixel centred on the edge (so an
    /// integer-aligned identity draw covers exactly its pixels, and scaled edges stay sharp).
    /// Chroma is resampled on the 4:2:0 grid with the transform adapted to half resolution;
    /// its alpha is the source alpha averaged over each 2×2 block.
    ///
    /// Fast paths: integer translations blend rows directly (or copy them at full opacity);
    /// axis-aligned scales and 90°/180°/270° rotations use row kernels with fixed rows or
    /// columns; anything else steps 16.16 fixed-point source coordinates per pixel.
    public static func draw(_ source: YUVImage, transform: AffineTransform, opacity: Double, crop: Rect?, onto dest: YUVImage,
                            coverage writesCoverage: Bool = true) {
        guard opacity > 0, let inverse = transform.inverted else { return }
        let op = Int((min(opacity, 1) * 255).rounded())
        guard op > 0 else { return }
        let full = Rect(x: 0, y: 0, width: Double(source.width), height: Double(source.height))
        let region = intersection(crop ?? full, full)
        guard region.width > 0, region.height > 0 else { return }

        if let offset = integerOffset(transform), isIntegral(region) {
            // An alpha plane that is 255 everywhere blends as no alpha at all: rows are copied
            // (at full opacity) without reading it again. The check stops at the first
            // transparent span, so it costs little when the layer has any.
            let alpha = source.a.flatMap { BlendKernels.isOpaque($0) ? nil : $0 }
            drawTranslated(source, alpha: alpha, offset: offset, region: region, opacity: op, onto: dest)
            if writesCoverage, let coverage = dest.a { drawCoverageTranslated(source, offset: offset, region: region, opacity: op, onto: coverage) }
            return
        }
        guard let luma = PlaneMapping(inverse: inverse, planeScale: 1, crop: region, lumaWidth: source.width, lumaHeight: source.height,
                                      sourceWidth: source.y.width, sourceHeight: source.y.height) else { return }
        composite(source.y, alpha: source.a, onto: dest.y, mapping: luma, opacity: op)
        drawChroma(source, inverse: inverse, region: region, opacity: op, onto: dest)
        if writesCoverage, let coverage = dest.a {
            withOpaquePlane(width: source.y.width, height: source.y.height) { ones in
                composite(ones, alpha: source.a, onto: coverage, mapping: luma, opacity: op)
            }
        }
    }

    /// Source-over of `source`'s alpha (× `opacity`) onto a dest alpha plane, as an identity
    /// draw at full size would do it: what a blend-mode layer adds to the frame's coverage.
    public static func accumulateCoverage(of source: YUVImage, opacity: Double, onto dest: YUVImage) {
        guard let coverage = dest.a, opacity > 0 else { return }
        let op = Int((min(opacity, 1) * 255).rounded())
        guard op > 0 else { return }
        let region = Rect(x: 0, y: 0, width: Double(min(source.width, dest.width)), height: Double(min(source.height, dest.height)))
        drawCoverageTranslated(source, offset: (0, 0), region: region, opacity: op, onto: coverage)
    }

    // MARK: - Paths

    /// Identity linear part with an integer offset: every source pixel lands on one dest
    /// pixel, coverage is 0 or 1, no resampling.
    private static func drawTranslated(_ source: YUVImage, alpha sourceAlpha: Plane?, offset: (x: Int, y: Int), region: Rect,
                                       opacity op: Int, onto dest: YUVImage) {
        let sx0 = Int(region.x), sy0 = Int(region.y), sx1 = Int(region.maxX), sy1 = Int(region.maxY)
        let dx0 = max(0, sx0 + offset.x), dy0 = max(0, sy0 + offset.y)
        let dx1 = min(dest.width, sx1 + offset.x), dy1 = min(dest.height, sy1 + offset.y)
        guard dx1 > dx0, dy1 > dy0 else { return }
        for y in dy0..<dy1 {
            let s = UnsafePointer(source.y.row(y - offset.y) + (dx0 - offset.x))
            let d = dest.y.row(y) + dx0
            if let a = sourceAlpha {
                BlendKernels.blendRow(s, alpha: UnsafePointer(a.row(y - offset.y) + (dx0 - offset.x)), d, count: dx1 - dx0, opacity: op)
            } else {
                BlendKernels.blendRow(s, d, count: dx1 - dx0, alpha: op)
            }
        }
        // Chroma maps 1:1 only when everything sits on the 2×2 grid; otherwise resample it.
        let even = offset.x % 2 == 0 && offset.y % 2 == 0 && sx0 % 2 == 0 && sy0 % 2 == 0
            && (sx1 % 2 == 0 || sx1 == source.width) && (sy1 % 2 == 0 || sy1 == source.height)
            && source.width % 2 == 0 && source.height % 2 == 0
        guard even else {
            let inverse = AffineTransform.translation(-Double(offset.x), -Double(offset.y))
            drawChroma(source, inverse: inverse, region: region, opacity: op, onto: dest)
            return
        }
        let cdx0 = dx0 / 2, cdy0 = dy0 / 2, cdx1 = min(dest.u.width, (dx1 + 1) / 2), cdy1 = min(dest.u.height, (dy1 + 1) / 2)
        let cox = offset.x / 2, coy = offset.y / 2
        guard cdx1 > cdx0, cdy1 > cdy0 else { return }
        withChromaAlpha(sourceAlpha) { alpha in
            func blendRow(_ sp: Plane, _ dp: Plane, _ y: Int) {
                let s = UnsafePointer(sp.row(y - coy) + (cdx0 - cox)), d = dp.row(y) + cdx0
                if let alpha {
                    BlendKernels.blendRow(s, alpha: UnsafePointer(alpha.row(y - coy) + (cdx0 - cox)), d, count: cdx1 - cdx0, opacity: op)
                } else {
                    BlendKernels.blendRow(s, d, count: cdx1 - cdx0, alpha: op)
                }
            }
            for y in cdy0..<cdy1 {
                blendRow(source.u, dest.u, y)
                blendRow(source.v, dest.v, y)
            }
        }
    }

    private static func drawChroma(_ source: YUVImage, inverse: AffineTransform, region: Rect, opacity op: Int, onto dest: YUVImage) {
        guard let chroma = PlaneMapping(inverse: inverse, planeScale: 0.5, crop: region, lumaWidth: source.width, lumaHeight: source.height,
                                        sourceWidth: source.u.width, sourceHeight: source.u.height) else { return }
        withChromaAlpha(source.a) { alpha in
            composite(source.u, alpha: alpha, onto: dest.u, mapping: chroma, opacity: op)
            composite(source.v, alpha: alpha, onto: dest.v, mapping: chroma, opacity: op)
        }
    }

    /// Resamples one plane: per dest row, the outer span gets per-pixel edge treatment except
    /// for the inner span, which goes to the kernel matching the transform's shape.
    static func composite(_ src: Plane, alpha: Plane?, onto dst: Plane, mapping m: PlaneMapping, opacity op: Int) {
        let du = m.uStepX, dv = m.vStepX
        let outerU = (m.uOuter.lowerBound, m.uOuter.upperBound), outerV = (m.vOuter.lowerBound, m.vOuter.upperBound)
        for y in 0..<dst.height {
            let (oa, ob) = m.span(row: y, width: dst.width, u: outerU, v: outerV)
            if oa > ob { continue }
            var (ia, ib) = m.span(row: y, width: dst.width, u: m.uInner, v: m.vInner)
            ia = max(ia, oa); ib = min(ib, ob)
            let d = dst.row(y)
            let uRow = m.u0 + y * m.uStepY, vRow = m.v0 + y * m.vStepY
            if ia > ib { ia = ob + 1; ib = ob }
            var x = oa
            while x < ia {
                BlendKernels.edgePixel(src: src, alpha: alpha, dst: d + x, mapping: m, u: uRow + x * du, v: vRow + x * dv, opacity: op)
                x += 1
            }
            if ia <= ib {
                let u = uRow + ia * du, v = vRow + ia * dv
                if dv == 0 {
                    BlendKernels.axisAlignedRow(src: src, alpha: alpha, dst: d, from: ia, through: ib, u: u, du: du, v: v, opacity: op)
                } else if du == 0 {
                    BlendKernels.transposedRow(src: src, alpha: alpha, dst: d, from: ia, through: ib, u: u, v: v, dv: dv, opacity: op)
                } else {
                    BlendKernels.affineRow(src: src, alpha: alpha, dst: d, from: ia, through: ib, u: u, du: du, v: v, dv: dv, opacity: op)
                }
            }
            x = max(ib + 1, oa)
            while x <= ob {
                BlendKernels.edgePixel(src: src, alpha: alpha, dst: d + x, mapping: m, u: uRow + x * du, v: vRow + x * dv, opacity: op)
                x += 1
            }
        }
    }

    /// The alpha-plane half of `drawTranslated`: the colour formula with a source of 255.
    private static func drawCoverageTranslated(_ source: YUVImage, offset: (x: Int, y: Int), region: Rect, opacity op: Int, onto coverage: Plane) {
        let sx0 = Int(region.x), sy0 = Int(region.y), sx1 = Int(region.maxX), sy1 = Int(region.maxY)
        let dx0 = max(0, sx0 + offset.x), dy0 = max(0, sy0 + offset.y)
        let dx1 = min(coverage.width, sx1 + offset.x), dy1 = min(coverage.height, sy1 + offset.y)
        guard dx1 > dx0, dy1 > dy0 else { return }
        withOpaquePlane(width: dx1 - dx0, height: 1) { ones in
            let s = UnsafePointer(ones.base)
            for y in dy0..<dy1 {
                let d = coverage.row(y) + dx0
                if let a = source.a {
                    BlendKernels.blendRow(s, alpha: UnsafePointer(a.row(y - offset.y) + (dx0 - offset.x)), d, count: dx1 - dx0, opacity: op)
                } else {
                    BlendKernels.blendRow(s, d, count: dx1 - dx0, alpha: op)
                }
            }
        }
    }

    /// Runs `body` with a scratch plane of 255s (a source whose "colour" is full coverage).
    private static func withOpaquePlane(width: Int, height: Int, _ body: (Plane) -> Void) {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: width * height)
        defer { buffer.deallocate() }
        buffer.update(repeating: 255, count: width * height)
        body(Plane(base: buffer, width: width, height: height, stride: width))
    }

    // MARK: - Helpers

    /// Runs `body` with the source alpha at chroma resolution (2×2 mean), or nil for an opaque
    /// source. The scratch plane lives only for the call.
    private static func withChromaAlpha(_ alpha: Plane?, _ body: (Plane?) -> Void) {
        guard let a = alpha else { return body(nil) }
        let cw = (a.width + 1) / 2, ch = (a.height + 1) / 2
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: cw * ch)
        defer { buffer.deallocate() }
        for y in 0..<ch {
            let r0 = a.row(2 * y), r1 = 2 * y + 1 < a.height ? a.row(2 * y + 1) : r0
            let d = buffer + y * cw
            // 8 blocks at a time while both of each block's columns are inside the row.
            var x = 0
            #if arch(x86_64)
            let low = _mm_set1_epi16(0xFF), two = _mm_set1_epi16(2)
            while 2 * x + 16 <= a.width {
                let p = unsafeBitCast(UnsafeRawPointer(r0 + 2 * x).loadUnaligned(as: SIMD16<UInt8>.self), to: __m128i.self)
                let q = unsafeBitCast(UnsafeRawPointer(r1 + 2 * x).loadUnaligned(as: SIMD16<UInt8>.self), to: __m128i.self)
                // Each 16-bit lane holds a block's two columns: the even one low, the odd one high.
                let sum = _mm_add_epi16(_mm_add_epi16(_mm_and_si128(p, low), _mm_srli_epi16(p, 8)),
                                        _mm_add_epi16(_mm_and_si128(q, low), _mm_srli_epi16(q, 8)))
                let mean = _mm_srli_epi16(_mm_add_epi16(sum, two), 2)
                UnsafeMutableRawPointer(d + x).storeBytes(of: _mm_cvtsi128_si64(_mm_packus_epi16(mean, mean)), as: Int64.self)
                x += 8
            }
            #endif
            while x < cw {
                let x1 = min(2 * x + 1, a.width - 1)
                d[x] = UInt8(truncatingIfNeeded: (Int(r0[2 * x]) + Int(r0[x1]) + Int(r1[2 * x]) + Int(r1[x1]) + 2) >> 2)
                x += 1
            }
        }
        body(Plane(base: buffer, width: cw, height: ch, stride: cw))
    }

    private static func integerOffset(_ t: AffineTransform) -> (x: Int, y: Int)? {
        guard t.a == 1, t.b == 0, t.c == 0, t.d == 1, t.tx == t.tx.rounded(), t.ty == t.ty.rounded(),
              abs(t.tx) < 1e9, abs(t.ty) < 1e9 else { return nil }
        return (Int(t.tx), Int(t.ty))
    }

    private static func isIntegral(_ r: Rect) -> Bool {
        r.x == r.x.rounded() && r.y == r.y.rounded() && r.maxX == r.maxX.rounded() && r.maxY == r.maxY.rounded()
    }

    private static func intersection(_ r: Rect, _ s: Rect) -> Rect {
        guard r.width.isFinite, r.height.isFinite, r.x.isFinite, r.y.isFinite else { return Rect(x: 0, y: 0, width: 0, height: 0) }
        let x0 = max(r.x, s.x), y0 = max(r.y, s.y), x1 = min(r.maxX, s.maxX), y1 = min(r.maxY, s.maxY)
        return Rect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }
}
