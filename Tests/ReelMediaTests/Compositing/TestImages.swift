import Foundation
import ReelCore
@testable import ReelKernels
@testable import ReelMedia

/// Deterministic pseudo-random bytes (SplitMix64) so failures reproduce.
extension SplitMix64 {
    mutating func byte(_ range: ClosedRange<UInt8> = 0...255) -> UInt8 {
        range.lowerBound + UInt8(truncatingIfNeeded: next() % UInt64(Int(range.upperBound) - Int(range.lowerBound) + 1))
    }
}

enum TestImages {
    /// Random content in legal limited-range values; a smooth component keeps bilinear
    /// resampling meaningful while the noise catches misaligned taps.
    static func random(width: Int, height: Int, seed: UInt64, alpha: Bool = false) -> YUVImage {
        var rng = SplitMix64(seed: seed)
        let image = YUVImage(width: width, height: height, hasAlpha: alpha)
        for plane in [image.y, image.u, image.v] + (image.a.map { [$0] } ?? []) {
            for r in 0..<plane.height {
                let row = plane.row(r)
                for x in 0..<plane.width { row[x] = rng.byte(16...235) }
            }
        }
        return image
    }

    static func bytes(_ p: Plane) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(p.width * p.height)
        for r in 0..<p.height { out.append(contentsOf: UnsafeBufferPointer(start: p.row(r), count: p.width)) }
        return out
    }

    static func planes(_ image: YUVImage) -> [[UInt8]] { [bytes(image.y), bytes(image.u), bytes(image.v)] }

    static func copy(_ image: YUVImage) -> YUVImage {
        let out = YUVImage(width: image.width, height: image.height, hasAlpha: image.hasAlpha)
        for (s, d) in zip([image.y, image.u, image.v] + (image.a.map { [$0] } ?? []),
                          [out.y, out.u, out.v] + (out.a.map { [$0] } ?? [])) {
            for r in 0..<s.height { d.row(r).update(from: s.row(r), count: s.width) }
        }
        return out
    }

    /// Peak signal-to-noise ratio in dB (infinity when identical).
    static func psnr(_ a: [UInt8], _ b: [UInt8]) -> Double {
        precondition(a.count == b.count)
        var se = 0.0
        for k in a.indices { let d = Double(a[k]) - Double(b[k]); se += d * d }
        if se == 0 { return .infinity }
        let mse = se / Double(a.count)
        return 10 * log10(255 * 255 / mse)
    }
}
