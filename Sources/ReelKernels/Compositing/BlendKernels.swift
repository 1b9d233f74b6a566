#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// The compositor's per-row loops. Every function here trusts its caller: the x range has
/// been clipped analytically (`PlaneMapping.span`) so that all reads are inside the source
/// crop and all writes inside the dest row — no bounds checks, no allocation, integer math.
///
/// Blending is 8-bit source-over on straight alpha, `d = (s·a + d·(255−a)) / 255` rounded
/// (exactly, via the `(t + 128 + (t + 128) >> 8) >> 8` identity). Bilinear weights are 8-bit.
enum BlendKernels {
    /// `round(t / 255)` for `0 <= t <= 255·255`.
    @inline(__always) static func div255(_ t: Int) -> Int {
        let r = t + 128
        return (r + (r >> 8)) >> 8
    }

    @inline(__always) static func blend(_ s: Int, _ d: UInt8, _ a: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: div255(s * a + Int(d) * (255 - a)))
    }

    /// Bilinear tap at `p` (top-left) with 8-bit weights `fx`, `fy`.
    @inline(__always) static func bilinear(_ p: UnsafePointer<UInt8>, _ stride: Int, _ fx: Int, _ fy: Int) -> Int {
        let top = Int(p[0]) &* (256 - fx) &+ Int(p[1]) &* fx
        let bottom = Int(p[stride]) &* (256 - fx) &+ Int(p[stride + 1]) &* fx
        return (top &* (256 - fy) &+ bottom &* fy &+ 32768) >> 16
    }

    // MARK: Straight copy / blend (identity transform, integer offset)

    /// `dst[x] = src[x]` blended at constant alpha `a` (0…255) over `count` pixels.
    /// Written with 32-bit lanes so the optimiser vectorises it.
    @inline(__always) static func blendRow(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, count: Int, alpha a: Int) {
        if a >= 255 { dst.update(from: src, count: count); return }
        let sa = UInt32(a), da = UInt32(255 - a)
        for x in 0..<count {
            let t = UInt32(src[x]) &* sa &+ UInt32(dst[x]) &* da &+ 128
            dst[x] = UInt8(truncatingIfNeeded: (t &+ (t >> 8)) >> 8)
        }
    }

    /// Straight blend with a per-pixel source alpha plane, scaled by `opacity` (0…255).
    ///
    /// Sixteen pixels at a time, spans whose alpha is all 0 are left as they are and, at full
    /// opacity, spans whose alpha is all 255 are copied: what the blend gives there exactly, at
    /// the cost of a compare (opaque layers and the clear surroundings of small ones are the
    /// common cases).
    @inline(__always) static func blendRow(_ src: UnsafePointer<UInt8>, alpha: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, count: Int, opacity: Int) {
        let op = UInt32(opacity)
        @inline(__always) func blend(_ from: Int, _ to: Int) {
            for x in from..<to {
                var a = UInt32(alpha[x]) &* op &+ 128
                a = (a &+ (a >> 8)) >> 8
                let t = UInt32(src[x]) &* a &+ UInt32(dst[x]) &* (255 &- a) &+ 128
                dst[x] = UInt8(truncatingIfNeeded: (t &+ (t >> 8)) >> 8)
            }
        }
        var x = 0
        while x + 16 <= count {
            switch uniformAlpha(alpha + x) {
            case 0: break
            case 255 where opacity >= 255: (dst + x).update(from: src + x, count: 16)
            default: blend(x, x + 16)
            }
            x += 16
        }
        blend(x, count)
    }

    /// True when every value of `alpha` is 255 (16 at a time; false at the first that is not).
    static func isOpaque(_ alpha: Plane) -> Bool {
        for y in 0..<alpha.height {
            let r = alpha.row(y)
            var x = 0
            while x + 16 <= alpha.width {
                if uniformAlpha(r + x) != 255 { return false }
                x += 16
            }
            while x < alpha.width { if r[x] != 255 { return false }; x += 1 }
        }
        return true
    }

    /// 0 or 255 when the 16 alpha values at `p` are all that, else -1.
    @inline(__always) static func uniformAlpha(_ p: UnsafePointer<UInt8>) -> Int {
        let v = UnsafeRawPointer(p).loadUnaligned(as: SIMD16<UInt8>.self)
        #if arch(x86_64)
        let m = unsafeBitCast(v, to: __m128i.self)
        if _mm_movemask_epi8(_mm_cmpeq_epi8(m, _mm_set1_epi8(-1))) == 0xFFFF { return 255 }
        if _mm_movemask_epi8(_mm_cmpeq_epi8(m, _mm_setzero_si128())) == 0xFFFF { return 0 }
        return -1
        #else
        if v == SIMD16<UInt8>(repeating: 0) { return 0 }
        if v == SIMD16<UInt8>(repeating: 255) { return 255 }
        return -1
        #endif
    }

    // MARK: Resampling rows (inner spans)

    /// Axis-aligned case (`V` constant along the row: scale, flips, 180°): the two source rows
    /// and the vertical weight are fixed for the whole row.
    @inline(__always) static func axisAlignedRow(src: Plane, alpha: Plane?, dst: UnsafeMutablePointer<UInt8>,
                                                 from x0: Int, through x1: Int, u: Int, du: Int, v: Int, opacity op: Int) {
        let j = v >> 16, fy = (v >> 8) & 255
        let r0 = UnsafePointer(src.row(j))
        var u = u
        if let alpha {
            let a0 = UnsafePointer(alpha.row(j)), ast = alpha.stride
            for x in x0...x1 {
                let i = u >> 16, fx = (u >> 8) & 255
                let c = bilinear(r0 + i, src.stride, fx, fy)
                let a = div255(bilinear(a0 + i, ast, fx, fy) &* op)
                dst[x] = blend(c, dst[x], a)
                u &+= du
            }
        } else if fy == 0 {
            // Common when rows line up (horizontal-only resampling): one row, half the taps.
            for x in x0...x1 {
                let i = u >> 16, fx = (u >> 8) & 255
                let c = (Int(r0[i]) &* (256 - fx) &+ Int(r0[i + 1]) &* fx &+ 128) >> 8
                dst[x] = op == 255 ? UInt8(truncatingIfNeeded: c) : blend(c, dst[x], op)
                u &+= du
            }
        } else {
            for x in x0...x1 {
                let i = u >> 16, fx = (u >> 8) & 255
                let c = bilinear(r0 + i, src.stride, fx, fy)
                dst[x] = op == 255 ? UInt8(truncatingIfNeeded: c) : blend(c, dst[x], op)
                u &+= du
            }
        }
    }

    /// Transposed case (`U` constant along the row: 90° / 270° rotations with scale): the
    /// source column and horizontal weight are fixed, the row steps.
    @inline(__always) static func transposedRow(src: Plane, alpha: Plane?, dst: UnsafeMutablePointer<UInt8>,
                                                from x0: Int, through x1: Int, u: Int, v: Int, dv: Int, opacity op: Int) {
        let i = u >> 16, fx = (u >> 8) & 255
        let c0 = UnsafePointer(src.base + i), st = src.stride
        var v = v
        if let alpha {
            let a0 = UnsafePointer(alpha.base + i), ast = alpha.stride
            for x in x0...x1 {
                let j = v >> 16, fy = (v >> 8) & 255
                let c = bilinear(c0 + j &* st, st, fx, fy)
                let a = div255(bilinear(a0 + j &* ast, ast, fx, fy) &* op)
                dst[x] = blend(c, dst[x], a)
                v &+= dv
            }
        } else {
            for x in x0...x1 {
                let j = v >> 16, fy = (v >> 8) & 255
                let c = bilinear(c0 + j &* st, st, fx, fy)
                dst[x] = op == 255 ? UInt8(truncatingIfNeeded: c) : blend(c, dst[x], op)
                v &+= dv
            }
        }
    }

    /// Any affine map: both coordinates step along the row.
    @inline(__always) static func affineRow(src: Plane, alpha: Plane?, dst: UnsafeMutablePointer<UInt8>,
                                            from x0: Int, through x1: Int, u: Int, du: Int, v: Int, dv: Int, opacity op: Int) {
        let s = UnsafePointer(src.base), st = src.stride
        var u = u, v = v
        if let alpha {
            let ab = UnsafePointer(alpha.base), ast = alpha.stride
            for x in x0...x1 {
                let i = u >> 16, fx = (u >> 8) & 255, j = v >> 16, fy = (v >> 8) & 255
                let c = bilinear(s + (j &* st &+ i), st, fx, fy)
                let a = div255(bilinear(ab + (j &* ast &+ i), ast, fx, fy) &* op)
                dst[x] = blend(c, dst[x], a)
                u &+= du; v &+= dv
            }
        } else {
            for x in x0...x1 {
                let i = u >> 16, fx = (u >> 8) & 255, j = v >> 16, fy = (v >> 8) & 255
                let c = bilinear(s + (j &* st &+ i), st, fx, fy)
                dst[x] = op == 255 ? UInt8(truncatingIfNeeded: c) : blend(c, dst[x], op)
                u &+= du; v &+= dv
            }
        }
    }

    // MARK: Border pixels (outer span minus inner span)

    /// One pixel near the crop edge: fractional coverage, taps clamped into the crop. Only
    /// O(perimeter) pixels come here, so it may use Double for the coverage ramp.
    @inline(__always) static func edgePixel(src: Plane, alpha: Plane?, dst: UnsafeMutablePointer<UInt8>,
                                            mapping m: PlaneMapping, u: Int, v: Int, opacity op: Int) {
        let cov = m.coverage(u: u, v: v)
        let cov8 = Int(cov * 255 + 0.5)
        if cov8 <= 0 { return }
        let i = u >> 16, fx = (u >> 8) & 255, j = v >> 16, fy = (v >> 8) & 255
        let i0 = min(max(i, m.iMin), m.iMax), i1 = min(max(i + 1, m.iMin), m.iMax)
        let j0 = min(max(j, m.jMin), m.jMax), j1 = min(max(j + 1, m.jMin), m.jMax)
        @inline(__always) func tap(_ p: Plane) -> Int {
            let r0 = p.row(j0), r1 = p.row(j1)
            let top = Int(r0[i0]) * (256 - fx) + Int(r0[i1]) * fx
            let bottom = Int(r1[i0]) * (256 - fx) + Int(r1[i1]) * fx
            return (top * (256 - fy) + bottom * fy + 32768) >> 16
        }
        let c = tap(src)
        var a = alpha.map { div255(tap($0) * op) } ?? op
        a = div255(a * cov8)
        dst.pointee = blend(c, dst.pointee, a)
    }
}
