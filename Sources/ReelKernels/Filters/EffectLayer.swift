import ReelCore

/// The effect path of a layer (filters, chroma key, a blend mode other than `normal`): the
/// layer is drawn into a frame-sized buffer of its own with straight colour and an alpha
/// plane (its coverage × its source alpha), filtered there, then blended onto the frame.
///
/// Drawing reuses `Compositor.draw`, so a layer looks the same on both paths: the colour is
/// drawn at opacity 1 over zero (which leaves it premultiplied by its weight), a mask whose
/// luma is the source alpha and whose chroma is the 2×2-mean alpha is drawn the same way to
/// get those weights, and the colour is divided by them (exact where the weight is 255, within
/// half a code value after the final blend elsewhere). A layer that is opaque and covers the
/// whole frame skips the mask: every weight is 255.
///
/// Owns its scratch buffers; one per renderer, used from one thread.
public final class EffectLayer {
    public let width: Int, height: Int
    /// The layer as drawn: straight colour, alpha = coverage × source alpha.
    public let buffer: YUVImage
    private let weights: YUVImage
    private var opaqueMasks: [PixelSize: YUVImage] = [:]
    /// The mask of the last source with alpha, rewritten for each frame of that size.
    private var alphaMask: YUVImage?

    public init(width: Int, height: Int) {
        self.width = width; self.height = height
        buffer = YUVImage(width: width, height: height, hasAlpha: true)
        weights = YUVImage(width: width, height: height)
    }

    /// Draws `source` as the layer `draw` says (transform and crop; not opacity) into `buffer`.
    public func render(_ source: YUVImage, transform: AffineTransform, crop: Rect?) {
        if source.a == nil, Self.covers(width: width, height: height, source: source, transform: transform, crop: crop) {
            Compositor.draw(source, transform: transform, opacity: 1, crop: crop, onto: buffer, coverage: false)
            let a = buffer.a!
            for y in 0..<height { a.row(y).update(repeating: 255, count: width) }
            return
        }
        buffer.fill(y: 0, u: 0, v: 0, alpha: 0)
        Compositor.draw(source, transform: transform, opacity: 1, crop: crop, onto: buffer, coverage: false)
        weights.fill(y: 0, u: 0, v: 0)
        Compositor.draw(mask(of: source), transform: transform, opacity: 1, crop: crop, onto: weights)
        unpremultiply()
    }

    /// A picture whose luma is `source`'s alpha and whose chroma is the 2×2 mean of it (the
    /// weights the compositor gives `source`'s planes), without an alpha plane.
    private func mask(of source: YUVImage) -> YUVImage {
        guard let alpha = source.a else {
            let size = PixelSize(width: source.width, height: source.height)
            if let mask = opaqueMasks[size] { return mask }
            let mask = YUVImage(width: source.width, height: source.height)
            mask.fill(y: 255, u: 255, v: 255)
            opaqueMasks[size] = mask
            return mask
        }
        let mask: YUVImage
        if let reused = alphaMask, reused.width == source.width, reused.height == source.height {
            mask = reused
        } else {
            mask = YUVImage(width: source.width, height: source.height)
            alphaMask = mask
        }
        for y in 0..<source.height { mask.y.row(y).update(from: alpha.row(y), count: source.width) }
        for cy in 0..<mask.u.height {
            let r0 = alpha.row(2 * cy), r1 = 2 * cy + 1 < alpha.height ? alpha.row(2 * cy + 1) : r0
            let u = mask.u.row(cy), v = mask.v.row(cy)
            for cx in 0..<mask.u.width {
                let x1 = min(2 * cx + 1, alpha.width - 1)
                let m = UInt8(truncatingIfNeeded: (Int(r0[2 * cx]) + Int(r0[x1]) + Int(r1[2 * cx]) + Int(r1[x1]) + 2) >> 2)
                u[cx] = m; v[cx] = m
            }
        }
        return mask
    }

    /// `buffer` colour ÷ `weights`; the luma weight becomes the alpha. Colour with no weight
    /// becomes neutral grey (it is never seen: its alpha is 0).
    private func unpremultiply() {
        let a = buffer.a!
        for y in 0..<height {
            let w = weights.y.row(y), d = buffer.y.row(y), da = a.row(y)
            for x in 0..<width {
                let weight = Int(w[x])
                da[x] = w[x]
                d[x] = Self.divide(d[x], weight, empty: 16)
            }
        }
        for cy in 0..<buffer.u.height {
            let w = weights.u.row(cy), u = buffer.u.row(cy), v = buffer.v.row(cy)
            for cx in 0..<buffer.u.width {
                let weight = Int(w[cx])
                u[cx] = Self.divide(u[cx], weight, empty: 128)
                v[cx] = Self.divide(v[cx], weight, empty: 128)
            }
        }
    }

    @inline(__always) private static func divide(_ value: UInt8, _ weight: Int, empty: UInt8) -> UInt8 {
        if weight >= 255 { return value }
        if weight == 0 { return empty }
        return UInt8(truncatingIfNeeded: min(255, (Int(value) * 255 + weight / 2) / weight))
    }

    /// Whether an opaque source drawn with `transform` and `crop` covers every pixel of a
    /// `width` × `height` frame fully, luma and chroma (so no pixel is on an antialiased edge).
    /// Conservative: false sends the layer down the general path, which is always right.
    static func covers(width: Int, height: Int, source: YUVImage, transform t: AffineTransform, crop: Rect?) -> Bool {
        let full = Rect(x: 0, y: 0, width: Double(source.width), height: Double(source.height))
        let c = crop ?? full
        let x0 = max(c.x, 0), y0 = max(c.y, 0), x1 = min(c.maxX, full.maxX), y1 = min(c.maxY, full.maxY)
        let w = Double(width), h = Double(height)
        if t.a == 1, t.b == 0, t.c == 0, t.d == 1, t.tx == t.tx.rounded(), t.ty == t.ty.rounded(),
           [x0, y0, x1, y1].allSatisfy({ $0 == $0.rounded() }) {
            // Integer placement: coverage is 0 or 1 per pixel; chroma maps 1:1 when everything
            // sits on the 2×2 grid, else it is resampled and needs a margin.
            let left = x0 + t.tx, top = y0 + t.ty, right = x1 + t.tx, bottom = y1 + t.ty
            let even = [t.tx, t.ty, x0, y0].allSatisfy { Int($0) % 2 == 0 }
                && (Int(x1) % 2 == 0 || x1 == full.maxX) && (Int(y1) % 2 == 0 || y1 == full.maxY)
                && source.width % 2 == 0 && source.height % 2 == 0
            let margin = even ? 0.0 : 2.0
            return left <= -margin && top <= -margin && right >= w + margin && bottom >= h + margin
        }
        guard let inverse = t.inverted else { return false }
        // The corner pixel centres must map two dest pixels (in source units) plus one source
        // pixel inside the crop: beyond the one-dest-pixel antialiased border, for chroma too.
        let mx = 1 + 2 * (inverse.a * inverse.a + inverse.c * inverse.c).squareRoot()
        let my = 1 + 2 * (inverse.b * inverse.b + inverse.d * inverse.d).squareRoot()
        for (px, py) in [(0.5, 0.5), (w - 0.5, 0.5), (0.5, h - 0.5), (w - 0.5, h - 0.5)] {
            let sx = inverse.a * px + inverse.c * py + inverse.tx
            let sy = inverse.b * px + inverse.d * py + inverse.ty
            guard sx >= x0 + mx, sx <= x1 - mx, sy >= y0 + my, sy <= y1 - my else { return false }
        }
        return true
    }
}
