import ReelCore

/// `vignette`, as GPUImage's: each pixel's colour mixes towards `color` by
/// `smoothstep(start, end, d)`, where `d` is the distance of the pixel's centre from `center`
/// in texture coordinates (x and y each 0…1 across the picture, so the falloff is an ellipse
/// on a non-square picture).
///
/// A mix with a fixed colour is affine in RGB, hence in Y'CbCr: luma mixes per pixel and each
/// chroma sample mixes by the mean weight of its four pixels, which is the 4:2:0 subsampling
/// of the per-pixel RGB result.
enum Vignette {
    static func apply(to image: YUVImage, centerX: Double, centerY: Double, color: RGBAColor, start: Double, end: Double,
                      colour: KernelYCbCr = .bt601) {
        let (cy0, cu0, cv0) = colour.yuv(r: Float(color.r) / 255, g: Float(color.g) / 255, b: Float(color.b) / 255)
        let w = image.width, h = image.height
        let e0 = Float(start), e1 = Float(end)
        let cx = Float(centerX), cyc = Float(centerY)
        let offsets = Lanes8(0, 1, 2, 3, 4, 5, 6, 7)
        let invW = 1 / Float(w), invH = 1 / Float(h)
        RGBGroup.forEach(width: w, height: h) { x, cy, count in
            let px = ((Lanes8(repeating: Float(x)) + offsets + 0.5) * invW) - cx
            var weights: (Lanes8, Lanes8) = (Lanes8(), Lanes8())
            for k in 0..<2 {
                let py = (Float(2 * cy + k) + 0.5) * invH - cyc
                let d = (px * px + py * py).squareRoot()
                let t = smoothstep(e0, e1, d)
                let row = image.y.row(2 * cy + k) + x
                let luma = PixelLanes.load(row, count: count)
                PixelLanes.store(luma + (cy0 - luma) * t, row, count: count)
                if k == 0 { weights.0 = t } else { weights.1 = t }
            }
            let m = PixelLanes.pairSums(weights.0 + weights.1) * 0.25
            let c = x / 2, n = count / 2
            let u = PixelLanes.load4(image.u.row(cy) + c, count: n), v = PixelLanes.load4(image.v.row(cy) + c, count: n)
            PixelLanes.store4(u + (cu0 - u) * m, image.u.row(cy) + c, count: n)
            PixelLanes.store4(v + (cv0 - v) * m, image.v.row(cy) + c, count: n)
        }
    }

    /// GLSL's smoothstep per lane; a step at `e0` when the edges meet.
    @inline(__always) static func smoothstep(_ e0: Float, _ e1: Float, _ x: Lanes8) -> Lanes8 {
        guard e1 > e0 else { return Lanes8(repeating: 0).replacing(with: 1, where: x .>= e0) }
        let t = PixelLanes.clamp((x - e0) / (e1 - e0), 0, 1)
        return t * t * (3 - 2 * t)
    }
}
