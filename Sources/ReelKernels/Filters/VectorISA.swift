import CReelAVX2
import Foundation

/// Which vector instructions the kernels may use beyond the architecture's baseline (SSE2 on
/// x86-64). Kernels with versions for AVX2 or AVX-512BW (`CReelAVX2`) give the same bytes as
/// the Swift ones, so the choice is only one of speed, made once per process from what the
/// CPU and the OS support. `REEL_VECTOR_ISA=baseline` (or `avx2`) in the environment caps it,
/// to compare.
public enum VectorISA: String, CaseIterable, Comparable, Sendable {
    case baseline, avx2, avx512

    public static let detected: VectorISA = {
        let found: VectorISA = reel_cpu_has_avx512bw() != 0 ? .avx512 : reel_cpu_has_avx2() != 0 ? .avx2 : .baseline
        let cap = ProcessInfo.processInfo.environment["REEL_VECTOR_ISA"].flatMap(VectorISA.init(rawValue:)) ?? .avx512
        return min(found, cap)
    }()

    /// Whether the CPU has AVX2 (AVX-512BW's CPUs all do).
    var hasAVX2: Bool { self >= .avx2 }

    /// The columns of a row `width` pixels wide that the fixed-point kernels of this level
    /// (`CReelAVX2`: 32 pixels a step with AVX2, 64 with AVX-512BW) take; the Swift kernel
    /// does the rest, and all of it at the baseline.
    func vectorColumns(_ width: Int) -> Int {
        switch self {
        case .baseline: 0
        case .avx2: width & ~31
        case .avx512: width & ~63
        }
    }

    /// In the order of the cases: each level has every instruction of the ones before it.
    public static func < (a: VectorISA, b: VectorISA) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

extension RecursiveGaussian {
    /// Blurs `rows` in place with the AVX2 kernel when `isa` has it and the rows are an 8-bit
    /// plane (sharpened or not); false, with `rows` untouched, otherwise. `scratch` is working
    /// memory.
    func runAVX2<Rows: PlaneRows>(_ rows: Rows, scratch: FloatPlane, isa: VectorISA = .detected) -> Bool {
        guard isa.hasAVX2 else { return false }
        // Decided when `Rows` is specialised.
        if let r = rows as? BytePlaneRows {
            avx2(r.plane, bias: r.bias, amount: 0, original: nil, scratch: scratch)
        } else if let r = rows as? SharpenedRows<BytePlaneRows> {
            avx2(r.base.plane, bias: r.base.bias, amount: r.amount, original: r.original, scratch: scratch)
        } else {
            return false
        }
        return true
    }

    private func avx2(_ plane: Plane, bias: Float, amount: Float, original: UnsafeMutablePointer<Float>?, scratch: FloatPlane) {
        var g = reel_recursive_gaussian(b: b, a1: a1, a2: a2, a3: a3, tail: tail)
        scratch.resize(width: 1, height: reel_gaussian_avx2_working(&g, plane.width, plane.height))
        scratch.withSamples { working in
            reel_gaussian_avx2(&g, plane.base, plane.stride, plane.width, plane.height, bias, amount, original, working)
        }
    }
}
