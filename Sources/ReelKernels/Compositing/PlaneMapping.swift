import ReelCore

/// How one dest plane samples one source plane: the inverse transform in 16.16 fixed point and
/// the source crop, plus the precomputed bounds that split each dest row into an outer span
/// (any coverage), handled pixel by pixel, and an inner span (full coverage, every bilinear tap
/// inside the crop), handled by the bounds-check-free kernels.
///
/// Coordinates: `U = sx − 0.5`, `V = sy − 0.5`, where `(sx, sy)` is the source position of a
/// dest pixel's centre, so `U >> 16` is the left bilinear tap and bits 8…15 its weight. A bias
/// of half a weight step is folded into `u0`/`v0` so truncation rounds the weight.
struct PlaneMapping {
    static let one = 65536
    static let bias = 128

    /// `U(x, y) = u0 + x·uStepX + y·uStepY` (fixed point, biased).
    let u0: Int, uStepX: Int, uStepY: Int
    let v0: Int, vStepX: Int, vStepY: Int
    /// The crop in source plane coordinates, clamped to the plane.
    let cropX0: Double, cropX1: Double, cropY0: Double, cropY1: Double
    /// Inclusive limits of the pixels a bilinear tap may read.
    let iMin: Int, iMax: Int, jMin: Int, jMax: Int
    /// Source distance covered by one dest pixel across a vertical / horizontal crop edge:
    /// the antialiased border is one *dest* pixel wide whatever the scale.
    let falloffX: Double, falloffY: Double
    /// Fixed-point bounds on U and V: outer = any coverage (generous), inner = full coverage
    /// and both taps inside the crop (conservative).
    let uOuter: ClosedRange<Int>, vOuter: ClosedRange<Int>
    let uInner: (Int, Int), vInner: (Int, Int)

    /// - Parameters:
    ///   - inverse: dest → source in luma pixel coordinates.
    ///   - planeScale: 1 for luma/alpha, 0.5 for 4:2:0 chroma (centre-aligned: chroma pixel `i`
    ///     has its centre at luma `(i + 0.5)·2`).
    ///   - crop: in source luma coordinates, already clamped to the image (`lumaWidth × lumaHeight`).
    ///   - sourceWidth, sourceHeight: the source plane's size.
    init?(inverse t: AffineTransform, planeScale s: Double, crop: Rect, lumaWidth: Int, lumaHeight: Int,
          sourceWidth: Int, sourceHeight: Int) {
        // A near-singular layer transform has an enormous inverse: such a layer covers no
        // pixel worth sampling, and its fixed-point terms would not fit in an Int.
        guard [t.a, t.b, t.c, t.d, t.tx, t.ty].allSatisfy({ $0.isFinite && $0.magnitude < 1e12 }) else { return nil }
        // In plane coordinates p = luma·s on both sides the linear part is unchanged.
        let tx = t.tx * s, ty = t.ty * s
        // A crop reaching the image's right/bottom edge reaches the plane's edge too: an odd
        // luma size leaves a last chroma sample that is half outside `crop * s` but is the
        // image's own edge sample, not something to fade out.
        cropX0 = max(0, crop.x * s)
        cropX1 = crop.maxX >= Double(lumaWidth) ? Double(sourceWidth) : min(Double(sourceWidth), crop.maxX * s)
        cropY0 = max(0, crop.y * s)
        cropY1 = crop.maxY >= Double(lumaHeight) ? Double(sourceHeight) : min(Double(sourceHeight), crop.maxY * s)
        guard cropX1 > cropX0, cropY1 > cropY0 else { return nil }
        iMin = Int(cropX0.rounded(.down)); iMax = min(sourceWidth - 1, Int(cropX1.rounded(.up)) - 1)
        jMin = Int(cropY0.rounded(.down)); jMax = min(sourceHeight - 1, Int(cropY1.rounded(.up)) - 1)
        falloffX = max((t.a * t.a + t.c * t.c).squareRoot(), 1e-9)
        falloffY = max((t.b * t.b + t.d * t.d).squareRoot(), 1e-9)

        let f = Double(Self.one)
        func fixed(_ v: Double) -> Int { Int((v * f).rounded()) }
        u0 = fixed(t.a * 0.5 + t.c * 0.5 + tx - 0.5) + Self.bias
        v0 = fixed(t.b * 0.5 + t.d * 0.5 + ty - 0.5) + Self.bias
        uStepX = fixed(t.a); uStepY = fixed(t.c)
        vStepX = fixed(t.b); vStepY = fixed(t.d)
        guard abs(u0) < 1 << 46, abs(v0) < 1 << 46, abs(uStepX) + abs(uStepY) < 1 << 40,
              abs(vStepX) + abs(vStepY) < 1 << 40 else { return nil }

        let b = Self.bias
        uOuter = (fixed(cropX0 - falloffX / 2 - 0.5) + b - 2)...(fixed(cropX1 + falloffX / 2 - 0.5) + b + 2)
        vOuter = (fixed(cropY0 - falloffY / 2 - 0.5) + b - 2)...(fixed(cropY1 + falloffY / 2 - 0.5) + b + 2)
        uInner = (max(iMin << 16, Int(((cropX0 + falloffX / 2 - 0.5) * f).rounded(.up)) + b),
                  min((iMax << 16) - 1, Int(((cropX1 - falloffX / 2 - 0.5) * f).rounded(.down)) + b))
        vInner = (max(jMin << 16, Int(((cropY0 + falloffY / 2 - 0.5) * f).rounded(.up)) + b),
                  min((jMax << 16) - 1, Int(((cropY1 - falloffY / 2 - 0.5) * f).rounded(.down)) + b))
    }

    /// Coverage of the pixel whose (biased) coordinates are `u`, `v`: the product of the
    /// per-axis ramps, each 1 one half dest pixel inside the crop edge, 0 one half outside.
    @inline(__always) func coverage(u: Int, v: Int) -> Double {
        let sx = Double(u - Self.bias) / Double(Self.one) + 0.5
        let sy = Double(v - Self.bias) / Double(Self.one) + 0.5
        let cx = min(1, max(0, min(sx - cropX0, cropX1 - sx) / falloffX + 0.5))
        let cy = min(1, max(0, min(sy - cropY0, cropY1 - sy) / falloffY + 0.5))
        return cx * cy
    }

    /// The dest x range (inclusive, possibly empty: lower > upper) of row `y` where
    /// `U ∈ uLimits` and `V ∈ vLimits`, intersected with `0...width-1`. Exact integer math, so
    /// the inner kernels' reads are in bounds by construction.
    @inline(__always) func span(row y: Int, width: Int, u uLimits: (Int, Int), v vLimits: (Int, Int)) -> (Int, Int) {
        let (ua, ub) = Self.solve(u0 + y * uStepY, uStepX, uLimits.0, uLimits.1)
        let (va, vb) = Self.solve(v0 + y * vStepY, vStepX, vLimits.0, vLimits.1)
        return (max(0, ua, va), min(width - 1, ub, vb))
    }

    /// Integer x with `lo <= s0 + x·ds <= hi`.
    @inline(__always) static func solve(_ s0: Int, _ ds: Int, _ lo: Int, _ hi: Int) -> (Int, Int) {
        if ds == 0 { return lo <= s0 && s0 <= hi ? (Int.min / 4, Int.max / 4) : (1, 0) }
        if ds > 0 { return (ceilDiv(lo - s0, ds), floorDiv(hi - s0, ds)) }
        return (ceilDiv(hi - s0, ds), floorDiv(lo - s0, ds))
    }

    @inline(__always) static func floorDiv(_ a: Int, _ b: Int) -> Int {
        let q = a / b
        return (a % b != 0) && ((a < 0) != (b < 0)) ? q - 1 : q
    }
    @inline(__always) static func ceilDiv(_ a: Int, _ b: Int) -> Int { -floorDiv(-a, b) }
}
