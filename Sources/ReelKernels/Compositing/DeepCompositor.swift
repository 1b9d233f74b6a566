/// Source-over compositing of opaque layers onto an HDR render's 16-bit 4:2:0 frame.
///
/// A layer arrives already converted into the frame's colour space and scaled to the pixels it
/// covers (a `DeepYUVImage` placed at `x`, `y`), so drawing it is a mix with its opacity:
/// `frame + (layer − frame)·opacity` per sample, rounded, in 16-bit code values (what mixing
/// Y'CbCr does in the 8-bit compositor, with 256 times finer steps). Chroma takes the mean of
/// the 4:4:4 layer's chroma over the pixels of each 2×2 block it covers, with the opacity scaled by
/// the share of the block covered, so layer edges on odd pixels are neither shifted nor hard.
public enum DeepCompositor {
    /// Draws `layer` with its top-left pixel at (`x`, `y`) of `frame`, clipped to the frame. A
    /// 4:2:0 layer (at even `x` and `y`, so its chroma grid is the frame's) mixes its chroma
    /// sample by sample: nothing is resampled, which keeps a full-frame layer exactly the
    /// source's samples.
    public static func draw(_ layer: DeepYUVImage, x: Int, y: Int, opacity: Double, onto frame: DeepYUVImage) {
        precondition(frame.subsampled, "layers are drawn onto a 4:2:0 frame")
        precondition(!layer.subsampled || (x % 2 == 0 && y % 2 == 0), "a 4:2:0 layer at odd coordinates")
        // Opacity in 1/65536ths.
        let alpha = Int((min(max(opacity, 0), 1) * 65536).rounded())
        guard alpha > 0 else { return }
        let x0 = max(x, 0), y0 = max(y, 0)
        let x1 = min(x + layer.width, frame.width), y1 = min(y + layer.height, frame.height)
        guard x0 < x1, y0 < y1 else { return }
        @inline(__always) func mix(_ below: UInt16, _ above: Int, _ a: Int) -> UInt16 {
            let b = Int(below)
            return UInt16(truncatingIfNeeded: b + (((above - b) * a + 32768) >> 16))
        }
        for row in y0..<y1 {
            let dst = frame.y.row(row), src = layer.y.row(row - y) - x
            if alpha == 65536 {
                (dst + x0).update(from: src + x0, count: x1 - x0)
            } else {
                for col in x0..<x1 { dst[col] = mix(dst[col], Int(src[col]), alpha) }
            }
        }
        if layer.subsampled {
            for (framePlane, layerPlane) in [(frame.u, layer.u), (frame.v, layer.v)] {
                for cy in (y0 / 2)...((y1 - 1) / 2) {
                    let dst = framePlane.row(cy), src = layerPlane.row(cy - y / 2) - x / 2
                    for cx in (x0 / 2)...((x1 - 1) / 2) {
                        dst[cx] = alpha == 65536 ? src[cx] : mix(dst[cx], Int(src[cx]), alpha)
                    }
                }
            }
            return
        }
        for (framePlane, layerPlane) in [(frame.u, layer.u), (frame.v, layer.v)] {
            for cy in (y0 / 2)...((y1 - 1) / 2) {
                let dst = framePlane.row(cy)
                for cx in (x0 / 2)...((x1 - 1) / 2) {
                    var sum = 0, count = 0
                    for py in (2 * cy)...(2 * cy + 1) where py >= y0 && py < y1 {
                        let src = layerPlane.row(py - y) - x
                        for px in (2 * cx)...(2 * cx + 1) where px >= x0 && px < x1 {
                            sum += Int(src[px]); count += 1
                        }
                    }
                    // The block's pixels within the frame (its last row or column may be outside).
                    let pixels = (min(2 * cx + 2, frame.width) - 2 * cx) * (min(2 * cy + 2, frame.height) - 2 * cy)
                    let mean = (sum + count / 2) / count
                    let a = count == pixels ? alpha : (alpha * count + pixels / 2) / pixels
                    dst[cx] = a == 65536 ? UInt16(mean) : mix(dst[cx], mean, a)
                }
            }
        }
    }
}
