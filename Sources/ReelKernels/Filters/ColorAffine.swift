import Foundation
import ReelCore

/// An affine map of RGB: `out = M·rgb + offset`, rows (r, g, b, offset). The affine colour
/// filters are each one of these, and a run of them composes into one.
struct ColorAffine: Equatable {
    /// Row-major 3×4.
    var m: [Double]

    static let identity = ColorAffine(m: [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0])

    /// The Rec. 709 luma weights the `saturation` and `grayscale` filters use.
    static let luma: (Double, Double, Double) = (0.2126, 0.7152, 0.0722)
    /// The `sepia` filter's matrix.
    static let sepia = ColorAffine(m: [0.393, 0.769, 0.189, 0, 0.349, 0.686, 0.168, 0, 0.272, 0.534, 0.131, 0])

    subscript(row: Int, column: Int) -> Double { m[4 * row + column] }

    /// `self` first, then `next`.
    func then(_ next: ColorAffine) -> ColorAffine {
        var out = [Double](repeating: 0, count: 12)
        for i in 0..<3 {
            for j in 0..<4 {
                var s = j == 3 ? next[i, 3] : 0
                for k in 0..<3 { s += next[i, k] * self[k, j] }
                out[4 * i + j] = s
            }
        }
        return ColorAffine(m: out)
    }

    /// `(1 − t)·self + t·other`: a filter's `intensity`.
    func mixed(with other: ColorAffine, _ t: Double) -> ColorAffine {
        ColorAffine(m: zip(m, other.m).map { $0 + ($1 - $0) * t })
    }

    static func diagonal(_ s: Double, offset: Double) -> ColorAffine {
        ColorAffine(m: [s, 0, 0, offset, 0, s, 0, offset, 0, 0, s, offset])
    }

    /// Every row the luma weights: luma in r, g and b.
    static var grayscale: ColorAffine {
        let (r, g, b) = luma
        return ColorAffine(m: [r, g, b, 0, r, g, b, 0, r, g, b, 0])
    }

    /// Rotation by `degrees` about the grey axis (1, 1, 1): right-handed, so +120° takes red
    /// to green and green to blue, as hue angles increase.
    static func hueRotation(degrees: Double) -> ColorAffine {
        let t = degrees * .pi / 180
        let c = cos(t), s = sin(t), k = 1 / 3.0.squareRoot()
        // Rodrigues: c·I + s·[u]× + (1 − c)·u·uᵀ with u = (1, 1, 1)/√3.
        let d = c + (1 - c) / 3, p = (1 - c) / 3 + s * k, q = (1 - c) / 3 - s * k
        return ColorAffine(m: [d, q, p, 0, p, d, q, 0, q, p, d, 0])
    }

    /// The affine map of an affine filter, or nil for a filter that is not affine.
    static func of(_ filter: FilterDraw) -> ColorAffine? {
        switch filter {
        case .brightness(let b): return .diagonal(1, offset: b)
        case .contrast(let c): return .diagonal(c, offset: 0.5 * (1 - c))
        case .saturation(let s): return identity.mixed(with: grayscale, 1 - s)
        case .exposure(let e): return .diagonal(pow(2, e), offset: 0)
        case .hue(let degrees): return hueRotation(degrees: degrees)
        case .grayscale: return grayscale
        case .invert: return .diagonal(-1, offset: 1)
        case .sepia(let t): return identity.mixed(with: sepia, t)
        case .colorMatrix(let matrix, let t): return identity.mixed(with: ColorAffine(m: matrix), t)
        default: return nil
        }
    }
}
