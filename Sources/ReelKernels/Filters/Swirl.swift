import Foundation

/// `swirl`, as GPUImage's: a pixel at distance `d < radius` from `center` shows the picture
/// at its position rotated about the centre by `θ = ((radius − d)/radius)²·angle·8` radians;
/// pixels farther away are unchanged. Unlike GPUImage, whose texture coordinates make the
/// swirl an ellipse on a non-square picture, `radius` and distances are in pixels (render
/// pixels in the composition, scaled to the picture), so the swirl is round; `center` is in
/// 0…1 of the picture's width and height.
///
/// A geometric warp: each plane (chroma at its own sites, alpha too) is resampled
/// bilinearly, with the picture's edge pixels repeated beyond it.
enum Swirl {
    static func apply(to image: YUVImage, centerX: Double, centerY: Double, radius: Double, angle: Double, scratch: inout [UInt8]) {
        guard radius > 0, angle != 0 else { return }
        let cx = centerX * Double(image.width), cy = centerY * Double(image.height)
        for (plane, scale) in [(image.y, 1.0), (image.u, 0.5), (image.v, 0.5)] + (image.a.map { [($0, 1.0)] } ?? []) {
            warp(plane, scale: scale, cx: cx, cy: cy, radius: radius, angle: angle, scratch: &scratch)
        }
    }

    /// Resamples `plane` (whose pixels are `1/scale` luma pixels wide) through the swirl.
    private static func warp(_ plane: Plane, scale: Double, cx: Double, cy: Double, radius: Double, angle: Double, scratch: inout [UInt8]) {
        let w = plane.width, h = plane.height
        if scratch.count < w * h { scratch = [UInt8](repeating: 0, count: w * h) }
        scratch.withUnsafeMutableBufferPointer { copy in
            let src = copy.baseAddress!
            for y in 0..<h { (src + y * w).update(from: plane.row(y), count: w) }
            // Only rows and columns the swirl's circle reaches change.
            let y0 = max(0, Int(((cy - radius) * scale).rounded(.down)) - 1), y1 = min(h - 1, Int(((cy + radius) * scale).rounded(.up)) + 1)
            let x0 = max(0, Int(((cx - radius) * scale).rounded(.down)) - 1), x1 = min(w - 1, Int(((cx + radius) * scale).rounded(.up)) + 1)
            guard y0 <= y1, x0 <= x1 else { return }
            for y in y0...y1 {
                let row = plane.row(y)
                let py = (Double(y) + 0.5) / scale - cy
                for x in x0...x1 {
                    let px = (Double(x) + 0.5) / scale - cx
                    let d = (px * px + py * py).squareRoot()
                    guard d < radius else { continue }
                    let percent = (radius - d) / radius
                    let theta = percent * percent * angle * 8
                    let c = cos(theta), s = sin(theta)
                    // Source position in this plane's pixel-index space (centres at i + 0.5).
                    let qx = (cx + c * px - s * py) * scale - 0.5
                    let qy = (cy + s * px + c * py) * scale - 0.5
                    row[x] = bilinear(src, w, h, qx, qy)
                }
            }
        }
    }

    @inline(__always) private static func bilinear(_ p: UnsafePointer<UInt8>, _ w: Int, _ h: Int, _ x: Double, _ y: Double) -> UInt8 {
        let xf = x.rounded(.down), yf = y.rounded(.down)
        let fx = x - xf, fy = y - yf
        let i0 = min(max(Int(xf), 0), w - 1), i1 = min(max(Int(xf) + 1, 0), w - 1)
        let j0 = min(max(Int(yf), 0), h - 1), j1 = min(max(Int(yf) + 1, 0), h - 1)
        let top = Double(p[j0 * w + i0]) * (1 - fx) + Double(p[j0 * w + i1]) * fx
        let bottom = Double(p[j1 * w + i0]) * (1 - fx) + Double(p[j1 * w + i1]) * fx
        return UInt8(truncatingIfNeeded: Int(top * (1 - fy) + bottom * fy + 0.5))
    }
}
