#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// GPUImage's Sobel family, on 0…1 RGB per the 4:2:0 convention of `PixelLanes`, with the
/// picture's edge pixels repeated beyond it (a texture clamped to its edge):
///
/// - `sobelEdge`: the magnitude `length(h, v)·edgeStrength` of the 3×3 Sobel gradient of the
///   luminance `0.2125 R + 0.7154 G + 0.0721 B`, as grey;
/// - `sketch`: `1 − that magnitude`, as grey;
/// - `toon`: the gradient of the *red* channel (GPUImage's toon shader samples `.r`); where its
///   magnitude is below `threshold` the colour posterised to `levels` steps per channel
///   (`floor(c·levels + 0.5)/levels`), elsewhere black.
///
/// GPUImage writes an opaque alpha; a Reel layer keeps its own, so the picture around a
/// layer that does not cover the frame stays transparent.
enum EdgeFilters {
    /// The filters that grey the picture by the magnitude of its luminance's gradient; `toon`
    /// has a function of its own.
    enum Kind { case sobel(strength: Float), sketch(strength: Float) }

    static func apply(_ kind: Kind, to image: YUVImage, colour: KernelYCbCr = .bt601, source: FloatPlane, magnitude: FloatPlane) {
        let w = image.width, h = image.height
        source.resize(width: w, height: h)
        // The sampled channel: luminance.
        let weights: (Float, Float, Float) = (0.2125, 0.7154, 0.0721)
        source.withSamples { s in
            RGBGroup.forEach(width: w, height: h) { x, cy, count in
                var g = RGBGroup.load(image, x: x, cy: cy, count: count, colour)
                g.clamp()
                let l0 = g.r0 * weights.0 + g.g0 * weights.1 + g.b0 * weights.2
                let l1 = g.r1 * weights.0 + g.g1 * weights.1 + g.b1 * weights.2
                let d0 = s + 2 * cy * w + x, d1 = d0 + w
                if count == 8 {
                    UnsafeMutableRawPointer(d0).storeBytes(of: l0, as: Lanes8.self)
                    UnsafeMutableRawPointer(d1).storeBytes(of: l1, as: Lanes8.self)
                } else {
                    for i in 0..<count { d0[i] = l0[i]; d1[i] = l1[i] }
                }
            }
        }
        sobel(source, into: magnitude)
        magnitude.withSamples { m in
            switch kind {
            case .sobel(let strength), .sketch(let strength):
                let invert: Bool
                if case .sketch = kind { invert = true } else { invert = false }
                for y in 0..<h {
                    let row = image.y.row(y)
                    for x in 0..<w {
                        var v = min(max(m[y * w + x] * strength, 0), 1)
                        if invert { v = 1 - v }
                        row[x] = UInt8(truncatingIfNeeded: Int(16 + 219 * v + 0.5))
                    }
                }
                for cy in 0..<image.u.height {
                    image.u.row(cy).update(repeating: 128, count: image.u.width)
                    image.v.row(cy).update(repeating: 128, count: image.v.width)
                }
            }
        }
    }

    /// `toon` in two passes: the clamped red channel into `red`, padded by one sample on every
    /// side with its edge samples (so every 3×3 neighbourhood is in the plane; 16 more on the
    /// right, so that a 16-pixel group cut by the right edge reads whole lanes too), then one
    /// pass over the pixel groups that works out each pixel's Sobel magnitude in registers
    /// and posterises its colour (`posterize`), without a magnitude plane between them.
    static func toon(_ image: YUVImage, colour: KernelYCbCr = .bt601, threshold: Float, levels: Float, red: FloatPlane) {
        let w = image.width, h = image.height, pw = w + 18
        red.resize(width: pw, height: h + 2)
        red.withSamples { r in
            // Red of each pixel from its luma and its block's Cr, clamped to 0…1, as
            // `RGBGroup.load` and `clamp` compute it.
            for y in 0..<h {
                let ry = image.y.row(y), rv = image.v.row(y / 2), out = r + (y + 1) * pw + 1
                var x = 0
                while x < w {
                    let count = min(8, w - x)
                    let v = PixelLanes.widen(PixelLanes.load4(rv + x / 2, count: (count + 1) / 2) - 128)
                    let l = (PixelLanes.load(ry + x, count: count) - 16) * colour.kY
                    let value = PixelLanes.clamp(l + v * colour.kRV, 0, 1)
                    if count == 8 {
                        UnsafeMutableRawPointer(out + x).storeBytes(of: value, as: Lanes8.self)
                    } else {
                        for i in 0..<count { out[x + i] = value[i] }
                    }
                    x += 8
                }
                out[-1] = out[0]
                (out + w).update(repeating: out[w - 1], count: 17)
            }
            (r).update(from: r + pw, count: pw)
            (r + (h + 1) * pw).update(from: r + h * pw, count: pw)
        }
        red.withSamples { r in
            posterize(image, colour: colour, red: UnsafePointer(r), stride: pw, threshold: threshold, levels: levels)
        }
    }

    /// Toon's second pass: each pixel's Sobel magnitude (from the padded red plane `red`,
    /// `stride` samples a row) against `threshold`, and its colour posterised to `levels`
    /// steps (or black). On x86-64 in 16-pixel groups of `Q13` RGB (the fixed-point read and
    /// write of the affine filters and blends), with the posterising step in `Float`.
    private static func posterize(_ image: YUVImage, colour: KernelYCbCr, red r: UnsafePointer<Float>, stride pw: Int, threshold: Float,
                                  levels: Float) {
        /// Sobel magnitudes of picture row `y`, columns `x…x + 7` (padded row `y + 1`).
        @inline(__always) func magnitude(_ y: Int, _ x: Int) -> Lanes8 {
            let up = r + y * pw + x
            return sobel8(up, up + pw, up + 2 * pw)
        }
        #if arch(x86_64)
        let read = FixedAffine.identity(colour)!
        let scale = Lanes4(repeating: levels / Float(Q13.one)), step = Lanes4(repeating: Float(Q13.one) / levels)
        let limit = Lanes4(repeating: threshold)
        /// 16-bit lanes set where the magnitude is below the threshold, for 8 pixels.
        @inline(__always) func keep(_ y: Int, _ x: Int) -> __m128i {
            let m = magnitude(y, x)
            return _mm_packs_epi32(_mm_castps_si128(_mm_cmplt_ps(m.lowHalf, limit)), _mm_castps_si128(_mm_cmplt_ps(m.highHalf, limit)))
        }
        /// floor(c·levels + 0.5)/levels, clamped to 1, where `keep`; else 0.
        @inline(__always) func poster(_ c: __m128i, _ keep: __m128i) -> __m128i {
            let zero = _mm_setzero_si128()
            @inline(__always) func half(_ c: __m128i) -> __m128i {
                // v ≥ 0.5, so truncation is floor.
                let k = _mm_cvttps_epi32(_mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(c), scale), Lanes4(repeating: 0.5)))
                return _mm_cvtps_epi32(_mm_mul_ps(_mm_cvtepi32_ps(k), step))
            }
            let p = _mm_packs_epi32(half(_mm_unpacklo_epi16(c, zero)), half(_mm_unpackhi_epi16(c, zero)))
            return _mm_and_si128(_mm_min_epi16(p, Q13.full), keep)
        }
        GroupScratch.forEachGroup(of: image) { rows, y, x in
            let g = read.load(rows)
            let k0l = keep(y, x), k0r = keep(y, x + 8), k1l = keep(y + 1, x), k1r = keep(y + 1, x + 8)
            @inline(__always) func channel(_ c: Q13Channel) -> Q13Channel {
                Q13Channel(poster(c.l0, k0l), poster(c.r0, k0r), poster(c.l1, k1l), poster(c.r1, k1r))
            }
            Q13Group(r: channel(g.r), g: channel(g.g), b: channel(g.b)).store(rows, read.weights)
        }
        #else
        let one = Lanes8(repeating: 1), zero = Lanes8(repeating: 0)
        // floor(c·levels + 0.5) without `rounded(.down)`: round to the nearest integer by
        // adding and subtracting 1.5·2²³ (exact for 0 ≤ v < 2²²; c is clamped to 0…1), then
        // step down where that rounded up.
        @inline(__always) func posterize(_ c: Lanes8, _ keep: Lanes8) -> Lanes8 {
            let v = c * levels + 0.5
            var t = (v + 12_582_912) - 12_582_912
            t.replace(with: t - 1, where: t .> v)
            return t / levels * keep
        }
        RGBGroup.forEach(width: image.width, height: image.height) { x, cy, count in
            var g = RGBGroup.load(image, x: x, cy: cy, count: count, colour)
            g.clamp()
            let keep0 = zero.replacing(with: one, where: magnitude(2 * cy, x) .< threshold)
            let keep1 = zero.replacing(with: one, where: magnitude(2 * cy + 1, x) .< threshold)
            g.r0 = posterize(g.r0, keep0); g.g0 = posterize(g.g0, keep0); g.b0 = posterize(g.b0, keep0)
            g.r1 = posterize(g.r1, keep1); g.g1 = posterize(g.g1, keep1); g.b1 = posterize(g.b1, keep1)
            g.clamp()
            g.store(image, x: x, cy: cy, count: count, colour)
        }
        #endif
    }

    /// `length(h, v)` of the 3×3 Sobel operator at every pixel of `plane`, edges repeated.
    static func sobel(_ plane: FloatPlane, into out: FloatPlane) {
        let w = plane.width, h = plane.height
        out.resize(width: w, height: h)
        plane.withSamples { s in
            out.withSamples { d in
                for y in 0..<h {
                    let up = s + max(y - 1, 0) * w, mid = s + y * w, down = s + min(y + 1, h - 1) * w
                    let row = d + y * w
                    @inline(__always) func at(_ x: Int) -> Float {
                        let l = max(x - 1, 0), r = min(x + 1, w - 1)
                        let gx = (up[r] + 2 * mid[r] + down[r]) - (up[l] + 2 * mid[l] + down[l])
                        let gy = (down[l] + 2 * down[x] + down[r]) - (up[l] + 2 * up[x] + up[r])
                        return (gx * gx + gy * gy).squareRoot()
                    }
                    row[0] = at(0)
                    var x = 1
                    // Interior, 8 at a time: every tap is inside the row.
                    while x + 9 <= w {
                        let value = sobel8(UnsafePointer(up + x - 1), UnsafePointer(mid + x - 1), UnsafePointer(down + x - 1))
                        UnsafeMutableRawPointer(row + x).storeBytes(of: value, as: Lanes8.self)
                        x += 8
                    }
                    while x < w { row[x] = at(x); x += 1 }
                }
            }
        }
    }

    /// `length(h, v)` of the 3×3 Sobel operator at 8 pixels of a row: `up`, `mid` and `down`
    /// point at the sample left of the first pixel in the rows above, at and below it.
    @inline(__always) static func sobel8(_ up: UnsafePointer<Float>, _ mid: UnsafePointer<Float>, _ down: UnsafePointer<Float>) -> Lanes8 {
        @inline(__always) func lanes(_ p: UnsafePointer<Float>) -> Lanes8 { UnsafeRawPointer(p).loadUnaligned(as: Lanes8.self) }
        let ul = lanes(up), uc = lanes(up + 1), ur = lanes(up + 2)
        let ml = lanes(mid), mr = lanes(mid + 2)
        let dl = lanes(down), dc = lanes(down + 1), dr = lanes(down + 2)
        let gx = (ur + 2 * mr + dr) - (ul + 2 * ml + dl)
        let gy = (dl + 2 * dc + dr) - (ul + 2 * uc + ur)
        return (gx * gx + gy * gy).squareRoot()
    }
}
