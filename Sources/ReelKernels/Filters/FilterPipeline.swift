import ReelCore

/// Runs a list of evaluated filters over a picture in place: consecutive pointwise filters as
/// one `PointwiseProgram` pass, every other filter with its kernel.
///
/// Sizes in the filters are in render pixels; `scale` (output pixels per render pixel) turns
/// them into pixels of the picture being filtered. Owns the scratch memory the kernels need,
/// reused from frame to frame; one per renderer, used from one thread. Public for tools and
/// benchmarks that filter pictures outside a render.
public final class FilterPipeline {
    let scale: Double
    /// The pictures' Y'CbCr matrix: the kernels compute on its R'G'B'.
    let matrix: YCbCrMatrix
    private let colour: KernelYCbCr
    private let luts: (String) throws -> LUTKernel
    private var programs: [[FilterDraw]: PointwiseProgram] = [:]
    private var chromaScratch: [Float] = []
    private var blockScratch: [Int] = []
    private var byteScratch: [UInt8] = []
    private lazy var linear = LinearFilters()
    private lazy var kuwahara = Kuwahara()
    private lazy var planes = (FloatPlane(), FloatPlane())

    /// A pipeline at `scale` for pictures in `matrix` whose `lut` filters get their tables
    /// from `luts` by asset id (errors it throws pass through `apply`).
    public init(scale: Double, matrix: YCbCrMatrix = .smpte170M, luts: @escaping (String) throws -> LUTKernel) {
        self.scale = scale
        self.matrix = matrix
        colour = KernelYCbCr(matrix)
        self.luts = luts
    }

    /// A pipeline for pictures in `matrix` whose `lut` filters find their tables in `luts` by
    /// asset id.
    public convenience init(scale: Double = 1, matrix: YCbCrMatrix = .smpte170M, luts: [String: CubeLUT] = [:]) {
        let kernels = luts.mapValues(LUTKernel.init)
        self.init(scale: scale, matrix: matrix) { id in
            guard let kernel = kernels[id] else { throw FilterPipelineError("no LUT \(id)") }
            return kernel
        }
    }

    /// Applies `filters` in order to `image` (even width and height) in place.
    public func apply(_ filters: [FilterDraw], to image: YUVImage) throws {
        var i = 0
        while i < filters.count {
            if filters[i].type.isPointwise {
                var j = i
                while j < filters.count, filters[j].type.isPointwise { j += 1 }
                try program(Array(filters[i..<j])).apply(to: image)
                i = j
                continue
            }
            try run(filters[i], on: image)
            i += 1
        }
    }

    /// The compiled run, kept while the same parameters repeat (constant filters compile once).
    private func program(_ run: [FilterDraw]) throws -> PointwiseProgram {
        if let p = programs[run] { return p }
        let p = try PointwiseProgram(run, colour: colour, luts: luts)
        if programs.count >= 16 { programs.removeAll(keepingCapacity: true) }
        programs[run] = p
        return p
    }

    private func run(_ filter: FilterDraw, on image: YUVImage) throws {
        switch filter {
        case .chromaKey(let color, let similarity, let smoothness, let spill):
            ChromaKeyKernel.apply(to: image, color: color, similarity: similarity, smoothness: smoothness, spill: spill, matrix: matrix,
                                  scratch: &chromaScratch)
        case .gaussianBlur(let sigma):
            linear.blur(image, sigma: sigma * scale)
        case .sharpen(let amount, let sigma):
            linear.sharpen(image, amount: amount, sigma: sigma * scale)
        case .pixellate(let size):
            Pixellate.apply(to: image, size: pixels(size), scratch: &blockScratch)
        case .vignette(let x, let y, let color, let start, let end):
            Vignette.apply(to: image, centerX: x, centerY: y, color: color, start: start, end: end, colour: colour)
        case .sobelEdge(let strength):
            EdgeFilters.apply(.sobel(strength: Float(strength)), to: image, colour: colour, source: planes.0, magnitude: planes.1)
        case .sketch(let strength):
            EdgeFilters.apply(.sketch(strength: Float(strength)), to: image, colour: colour, source: planes.0, magnitude: planes.1)
        case .toon(let threshold, let levels):
            EdgeFilters.toon(image, colour: colour, threshold: Float(threshold), levels: Float(levels), red: planes.0)
        case .swirl(let x, let y, let radius, let angle):
            Swirl.apply(to: image, centerX: x, centerY: y, radius: radius * scale, angle: angle, scratch: &byteScratch)
        case .kuwahara(let radius):
            kuwahara.apply(to: image, radius: pixels(radius), colour: colour)
        case .brightness, .contrast, .saturation, .gamma, .exposure, .hue, .grayscale, .invert, .sepia, .colorMatrix, .lut:
            throw FilterPipelineError("pointwise filter \(filter.type.rawValue) outside a pointwise run")
        }
    }

    /// A size in render pixels as a whole number of the picture's pixels, at least 1.
    private func pixels(_ size: Double) -> Int { max(1, Int((size * scale).rounded())) }
}

/// A filter list the pipeline cannot run: a programming error upstream (validation guarantees
/// every LUT and parameter), reported rather than trapped.
public struct FilterPipelineError: Error, CustomStringConvertible {
    public var description: String
    init(_ message: String) { description = "internal error: \(message)" }
}
