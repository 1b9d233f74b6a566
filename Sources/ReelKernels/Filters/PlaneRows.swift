/// A picture plane as the blurs read and write it, a row at a time, as `Float` samples: an
/// 8-bit plane (read and written straight, no `Float` copy of the picture in between), a
/// `FloatPlane`, or either with an unsharp mask applied as rows are written.
protocol PlaneRows {
    var width: Int { get }
    var height: Int { get }
    /// Samples `x…x + 3` of row `y`.
    func four(_ y: Int, _ x: Int) -> Lanes4
    func sample(_ y: Int, _ x: Int) -> Float
    /// Row `y`'s `width` samples into `samples`.
    func read(row y: Int, into samples: UnsafeMutablePointer<Float>)
    /// Replaces row `y` with the `width` samples at `samples`.
    func write(row y: Int, from samples: UnsafePointer<Float>)
}

/// An 8-bit plane read as code value − `bias`, written back rounded to nearest (ties to
/// even) and clamped to 0…255, as `FloatPlane.store` does.
struct BytePlaneRows: PlaneRows {
    let plane: Plane, bias: Float
    var width: Int { plane.width }
    var height: Int { plane.height }
    @inline(__always) func four(_ y: Int, _ x: Int) -> Lanes4 { PixelLanes.load4(plane.row(y) + x) - bias }
    @inline(__always) func sample(_ y: Int, _ x: Int) -> Float { Float(plane.row(y)[x]) - bias }
    @inline(__always) func read(row y: Int, into samples: UnsafeMutablePointer<Float>) {
        let src = UnsafePointer(plane.row(y)), w = plane.width
        var x = 0
        while x + 8 <= w {
            UnsafeMutableRawPointer(samples + x).storeBytes(of: PixelLanes.load(src + x) - bias, as: Lanes8.self)
            x += 8
        }
        while x < w { samples[x] = Float(src[x]) - bias; x += 1 }
    }
    @inline(__always) func write(row y: Int, from samples: UnsafePointer<Float>) {
        let dst = plane.row(y), w = plane.width
        var x = 0
        while x + 8 <= w {
            PixelLanes.store(UnsafeRawPointer(samples + x).loadUnaligned(as: Lanes8.self) + bias, dst + x)
            x += 8
        }
        while x < w { dst[x] = UInt8(truncatingIfNeeded: Int(min(max(samples[x] + bias, 0), 255) + 0.5)); x += 1 }
    }
}

/// A `FloatPlane`'s samples, in place.
struct FloatPlaneRows: PlaneRows {
    let samples: UnsafeMutablePointer<Float>, width: Int, height: Int
    @inline(__always) func four(_ y: Int, _ x: Int) -> Lanes4 { UnsafeRawPointer(samples + y * width + x).loadUnaligned(as: Lanes4.self) }
    @inline(__always) func sample(_ y: Int, _ x: Int) -> Float { samples[y * width + x] }
    @inline(__always) func read(row y: Int, into out: UnsafeMutablePointer<Float>) {
        out.update(from: samples + y * width, count: width)
    }
    @inline(__always) func write(row y: Int, from source: UnsafePointer<Float>) {
        (samples + y * width).update(from: source, count: width)
    }
}

/// `base` with the unsharp mask `x + amount·(x − blurred)` applied as each blurred row is
/// written: the row's original samples are still in `base` then (the blurs write a row only
/// after every read that needs it), read into `original` (`width` samples of scratch).
struct SharpenedRows<Base: PlaneRows>: PlaneRows {
    let base: Base, amount: Float, original: UnsafeMutablePointer<Float>
    var width: Int { base.width }
    var height: Int { base.height }
    @inline(__always) func four(_ y: Int, _ x: Int) -> Lanes4 { base.four(y, x) }
    @inline(__always) func sample(_ y: Int, _ x: Int) -> Float { base.sample(y, x) }
    @inline(__always) func read(row y: Int, into samples: UnsafeMutablePointer<Float>) { base.read(row: y, into: samples) }
    @inline(__always) func write(row y: Int, from blurred: UnsafePointer<Float>) {
        base.read(row: y, into: original)
        let a = amount
        for i in 0..<width { original[i] = original[i] + a * (original[i] - blurred[i]) }
        base.write(row: y, from: original)
    }
}
