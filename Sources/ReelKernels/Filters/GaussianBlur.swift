import Foundation

/// A picture plane as `Float` samples, rows packed (`stride == width`), plus the separable
/// Gaussian blur the blur and sharpen filters use.
///
/// Below `GaussianBlur.recursiveFrom` the Gaussian is convolved directly: a kernel of radius
/// ⌈3σ⌉, normalised to sum 1, with edges clamped (the picture's border pixels repeat, as a GPU
/// texture clamped to its edge samples); both passes run 16 output samples at a time. From
/// there on, where direct convolution's cost (one multiply per tap pair) outgrows it, the
/// blur is `RecursiveGaussian`, whose cost does not depend on σ.
final class FloatPlane {
    private(set) var width = 0, height = 0
    private(set) var samples: [Float] = []

    /// Makes the plane `width` × `height` (contents undefined), keeping its memory when it shrinks.
    func resize(width: Int, height: Int) {
        self.width = width; self.height = height
        if samples.count < width * height { samples = [Float](repeating: 0, count: width * height) }
    }

    /// Copies `plane` in, as `value − bias`.
    func load(_ plane: Plane, bias: Float = 0) {
        resize(width: plane.width, height: plane.height)
        withRows { rows in
            let bytes = BytePlaneRows(plane: plane, bias: bias)
            for y in 0..<height { bytes.read(row: y, into: rows.samples + y * width) }
        }
    }

    /// Writes the samples, `+ bias`, rounded and clamped to 0…255, into `plane`.
    func store(_ plane: Plane, bias: Float = 0) {
        withRows { rows in
            let bytes = BytePlaneRows(plane: plane, bias: bias)
            for y in 0..<height { bytes.write(row: y, from: rows.samples + y * width) }
        }
    }

    @inline(__always) func withSamples<R>(_ body: (UnsafeMutablePointer<Float>) -> R) -> R {
        samples.withUnsafeMutableBufferPointer { body($0.baseAddress!) }
    }

    /// The samples as `PlaneRows`, for the blurs.
    @inline(__always) func withRows<R>(_ body: (FloatPlaneRows) -> R) -> R {
        withSamples { body(FloatPlaneRows(samples: $0, width: width, height: height)) }
    }
}

enum GaussianBlur {
    /// Normalised weights `w[0…2r]` of a Gaussian of standard deviation `sigma`, radius ⌈3σ⌉.
    static func kernel(sigma: Double) -> [Float] {
        let r = max(1, Int((3 * sigma).rounded(.up)))
        let raw = (-r...r).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = raw.reduce(0, +)
        return raw.map { Float($0 / total) }
    }

    /// The σ (in a plane's pixels) from which the blur is recursive. Below it Young and van
    /// Vliet's approximation strays too far from the Gaussian on noisy pictures (36.5 dB PSNR at
    /// σ 2 against the exact blur on sharp stripes with per-pixel noise, 42–66 dB from 2.5 on:
    /// `RecursiveGaussianTests`), and direct convolution is cheap (radius ⌈3σ⌉ ≤ 8 taps a side).
    static let recursiveFrom = 2.5

    /// Blurs `plane` in place with `sigma` (in the plane's pixels); `temp` and `row` are
    /// scratch. `sigma` below 0.05 leaves it unchanged.
    static func blur(_ plane: FloatPlane, sigma: Double, temp: FloatPlane, row: FloatPlane) {
        plane.withRows { blur($0, sigma: sigma, ring: temp, scratch: row) }
    }

    /// Blurs `rows` in place with `sigma` (in the plane's pixels): recursively from
    /// `recursiveFrom`, by direct convolution below. `ring` and `scratch` are working memory.
    static func blur<Rows: PlaneRows>(_ rows: Rows, sigma: Double, ring: FloatPlane, scratch: FloatPlane) {
        guard sigma >= 0.05 else { return }
        if sigma >= recursiveFrom {
            let g = RecursiveGaussian(sigma: sigma)
            if !g.runAVX2(rows, scratch: scratch) { g.run(rows, ring: ring, scratch: scratch) }
        } else {
            convolve(rows, sigma: sigma, ring: ring, pad: scratch)
        }
    }

    /// Blurs `plane` in place by direct convolution with `sigma`; `temp` and `row` are scratch.
    static func convolve(_ plane: FloatPlane, sigma: Double, temp: FloatPlane, row: FloatPlane) {
        plane.withRows { convolve($0, sigma: sigma, ring: temp, pad: row) }
    }

    /// Direct convolution of `rows` in place, a row at a time: each source row's horizontal
    /// pass goes into a ring of the 2r + 1 rows the vertical pass needs, and each output row
    /// is written as soon as the rows under its taps are in the ring (they are read before
    /// anything near them is written). So the picture is read once and written once, and the
    /// ring stays in cache.
    static func convolve<Rows: PlaneRows>(_ rows: Rows, sigma: Double, ring: FloatPlane, pad: FloatPlane) {
        let k = kernel(sigma: sigma)
        let r = k.count / 2, n = 2 * r + 1
        let w = rows.width, h = rows.height
        ring.resize(width: w, height: n + 1)
        pad.resize(width: w + 2 * r + 16, height: 1)
        // The kernel is symmetric (w[r − i] = w[r + i], bit for bit): each pair of taps is added
        // first and multiplied once, so a pass costs r + 1 multiplies per sample, not 2r + 1.
        // Both passes work out 16 samples a step, in two sums, so that the adds of one sum do
        // not all wait on each other.
        k.withUnsafeBufferPointer { kp in
            let kw = kp.baseAddress!
            @inline(__always) func lanes(_ p: UnsafePointer<Float>) -> Lanes8 { UnsafeRawPointer(p).loadUnaligned(as: Lanes8.self) }
            ring.withSamples { slots in
                pad.withSamples { pad in
                    let out = slots + n * w
                    // Horizontal: source row j, padded with its edge samples, into slot j mod n.
                    func horizontal(_ j: Int) {
                        rows.read(row: j, into: pad + r)
                        let first = pad[r], last = pad[r + w - 1]
                        for i in 0..<r { pad[i] = first; pad[r + w + i] = last }
                        for i in 0..<16 { pad[2 * r + w + i] = last }
                        let d = slots + (j % n) * w
                        var x = 0
                        while x + 16 <= w {
                            let p = UnsafePointer(pad + x)
                            var acc0 = lanes(p + r) * kw[r], acc1 = lanes(p + r + 8) * kw[r]
                            for i in 0..<r {
                                acc0 += (lanes(p + i) + lanes(p + 2 * r - i)) * kw[i]
                                acc1 += (lanes(p + i + 8) + lanes(p + 2 * r - i + 8)) * kw[i]
                            }
                            UnsafeMutableRawPointer(d + x).storeBytes(of: acc0, as: Lanes8.self)
                            UnsafeMutableRawPointer(d + x + 8).storeBytes(of: acc1, as: Lanes8.self)
                            x += 16
                        }
                        while x < w {
                            let p = UnsafePointer(pad + x)
                            var acc = lanes(p + r) * kw[r]
                            for i in 0..<r { acc += (lanes(p + i) + lanes(p + 2 * r - i)) * kw[i] }
                            if x + 8 <= w {
                                UnsafeMutableRawPointer(d + x).storeBytes(of: acc, as: Lanes8.self)
                            } else {
                                for i in 0..<(w - x) { d[x + i] = acc[i] }
                            }
                            x += 8
                        }
                    }
                    // Vertical: rows clamped at the top and bottom, looked up once per output row.
                    let taps = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: n)
                    defer { taps.deallocate() }
                    var next = 0
                    for y in 0..<h {
                        while next <= min(y + r, h - 1) { horizontal(next); next += 1 }
                        for i in 0..<n { taps[i] = UnsafePointer(slots + (min(max(y + i - r, 0), h - 1) % n) * w) }
                        var x = 0
                        while x + 16 <= w {
                            var acc0 = lanes(taps[r] + x) * kw[r], acc1 = lanes(taps[r] + x + 8) * kw[r]
                            for i in 0..<r {
                                let a = taps[i] + x, b = taps[2 * r - i] + x
                                acc0 += (lanes(a) + lanes(b)) * kw[i]
                                acc1 += (lanes(a + 8) + lanes(b + 8)) * kw[i]
                            }
                            UnsafeMutableRawPointer(out + x).storeBytes(of: acc0, as: Lanes8.self)
                            UnsafeMutableRawPointer(out + x + 8).storeBytes(of: acc1, as: Lanes8.self)
                            x += 16
                        }
                        while x + 8 <= w {
                            var acc = lanes(taps[r] + x) * kw[r]
                            for i in 0..<r { acc += (lanes(taps[i] + x) + lanes(taps[2 * r - i] + x)) * kw[i] }
                            UnsafeMutableRawPointer(out + x).storeBytes(of: acc, as: Lanes8.self)
                            x += 8
                        }
                        while x < w {
                            var acc = taps[r][x] * kw[r]
                            for i in 0..<r { acc += (taps[i][x] + taps[2 * r - i][x]) * kw[i] }
                            out[x] = acc
                            x += 1
                        }
                        rows.write(row: y, from: UnsafePointer(out))
                    }
                }
            }
        }
    }
}
