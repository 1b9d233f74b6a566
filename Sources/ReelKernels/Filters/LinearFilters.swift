import ReelCore

/// The filters that are linear in the picture's colour — `gaussianBlur`, `sharpen` — run on
/// the Y'CbCr planes directly: RGB is an affine function of Y'CbCr, so blurring (a weighted
/// mean) each plane is blurring R, G and B. Luma is filtered at full resolution with `σ`,
/// chroma at half resolution with `σ/2`. Results are clamped to the 8-bit code range.
///
/// A layer that is partly transparent (an alpha below 255 anywhere) is filtered
/// premultiplied — colour times alpha, alpha filtered alongside — so transparent pixels do
/// not bleed their (meaningless) colour into the picture.
final class LinearFilters {
    private let planes = (0..<4).map { _ in FloatPlane() }
    private let temp = FloatPlane(), row = FloatPlane(), original = FloatPlane()

    func blur(_ image: YUVImage, sigma: Double) {
        if image.a.map(BlendKernels.isOpaque) ?? true {
            for (plane, bias, s) in Self.opaquePlanes(of: image) {
                GaussianBlur.blur(BytePlaneRows(plane: plane, bias: bias), sigma: sigma * s, ring: temp, scratch: row)
            }
            return
        }
        filter(image) { plane, s in GaussianBlur.blur(plane, sigma: sigma * s, temp: temp, row: row) }
    }

    /// Unsharp mask: `x + amount·(x − blur(x))`.
    func sharpen(_ image: YUVImage, amount: Double, sigma: Double) {
        let a = Float(amount)
        if image.a.map(BlendKernels.isOpaque) ?? true {
            original.resize(width: image.width, height: 1)
            original.withSamples { o in
                for (plane, bias, s) in Self.opaquePlanes(of: image) {
                    let rows = SharpenedRows(base: BytePlaneRows(plane: plane, bias: bias), amount: a, original: o)
                    GaussianBlur.blur(rows, sigma: sigma * s, ring: temp, scratch: row)
                }
            }
            return
        }
        filter(image) { plane, s in
            original.resize(width: plane.width, height: 1)
            plane.withRows { rows in
                original.withSamples { o in
                    GaussianBlur.blur(SharpenedRows(base: rows, amount: a, original: o), sigma: sigma * s, ring: temp, scratch: row)
                }
            }
        }
    }

    /// An opaque picture's planes, each with the code value the filters take as 0 and its
    /// scale (chroma is at half resolution): each is filtered straight from and back to its
    /// bytes, a row at a time.
    private static func opaquePlanes(of image: YUVImage) -> [(Plane, Float, Double)] {
        [(image.y, 16, 1), (image.u, 128, 0.5), (image.v, 128, 0.5)]
    }

    /// Runs `body(plane, scale)` over each plane as Float (luma scale 1, chroma 0.5), premultiplied
    /// when the picture has partial alpha, and writes the planes back.
    private func filter(_ image: YUVImage, _ body: (FloatPlane, Double) -> Void) {
        let (y, u, v, a) = (planes[0], planes[1], planes[2], planes[3])
        y.load(image.y, bias: 16); u.load(image.u, bias: 128); v.load(image.v, bias: 128)
        guard let alpha = image.a, !BlendKernels.isOpaque(alpha) else {
            body(y, 1); body(u, 0.5); body(v, 0.5)
            y.store(image.y, bias: 16); u.store(image.u, bias: 128); v.store(image.v, bias: 128)
            return
        }
        a.load(alpha)
        Self.multiply(y, u, v, by: a)
        body(y, 1); body(u, 0.5); body(v, 0.5); body(a, 1)
        Self.divide(y, u, v, by: a)
        y.store(image.y, bias: 16); u.store(image.u, bias: 128); v.store(image.v, bias: 128); a.store(alpha)
    }

    /// Luma samples × alpha/255; chroma samples × the 2×2 mean alpha/255.
    private static func multiply(_ y: FloatPlane, _ u: FloatPlane, _ v: FloatPlane, by a: FloatPlane) {
        scale(y, u, v, a) { value, weight in value * weight / 255 }
    }

    /// The inverse of `multiply` with the filtered alpha; no weight leaves neutral colour.
    private static func divide(_ y: FloatPlane, _ u: FloatPlane, _ v: FloatPlane, by a: FloatPlane) {
        scale(y, u, v, a) { value, weight in weight > 0.5 ? value * 255 / weight : 0 }
    }

    private static func scale(_ y: FloatPlane, _ u: FloatPlane, _ v: FloatPlane, _ a: FloatPlane, _ f: (Float, Float) -> Float) {
        let w = y.width, cw = u.width
        a.withSamples { ap in
            y.withSamples { yp in for i in 0..<(w * y.height) { yp[i] = f(yp[i], ap[i]) } }
            u.withSamples { up in
                v.withSamples { vp in
                    for cy in 0..<u.height {
                        for cx in 0..<cw {
                            let x0 = 2 * cx, x1 = min(2 * cx + 1, w - 1), y0 = 2 * cy, y1 = min(2 * cy + 1, y.height - 1)
                            let m = (ap[y0 * w + x0] + ap[y0 * w + x1] + ap[y1 * w + x0] + ap[y1 * w + x1]) / 4
                            up[cy * cw + cx] = f(up[cy * cw + cx], m)
                            vp[cy * cw + cx] = f(vp[cy * cw + cx], m)
                        }
                    }
                }
            }
        }
    }
}
