/// A numeric filter parameter as written: a number, or a keyframe animation of numbers (the
/// animation object of docs/composition.md, "Animations", without `property`), evaluated per
/// frame at composition time.
///
/// Every numeric parameter of every filter goes through this one type, from parsing
/// (`CompositionDecoding.filterParameter`) to evaluation (`value(at:)`) and validation
/// (`keyValues(at:)`, `problems(at:)`, `writtenTimes(at:)`). Stored plans whose parameters are
/// all constants decode as before (`.constant` is encoded the same way).
public typealias FilterParameter = AnimatedNumber

/// The filter types of docs/composition.md, "Filters", by their JSON `type`.
public enum FilterType: String, CaseIterable, Hashable, Sendable, Codable {
    // Pointwise, in 0…1 RGB of the gamma-encoded picture, each result clamped to 0…1.
    case brightness, contrast, saturation, gamma, exposure, hue, grayscale, invert, sepia, colorMatrix, lut
    // Neighbourhoods, sizes in render pixels.
    case gaussianBlur, sharpen, pixellate, vignette, sobelEdge, sketch, toon, swirl, kuwahara
    // Alpha.
    case chromaKey

    /// The numeric parameters a filter of this type takes: key, default and accepted range.
    /// Keys with a dot or an index (`center.x`, `matrix`) are read from the nested value.
    public var numericParameters: [FilterParameterSpec] {
        switch self {
        case .brightness: return [.init("brightness", 0, -1...1)]
        case .contrast: return [.init("contrast", 1, 0...4)]
        case .saturation: return [.init("saturation", 1, 0...2)]
        case .gamma: return [.init("gamma", 1, 0.1...3)]
        case .exposure: return [.init("exposure", 0, -10...10)]
        case .hue: return [.init("degrees", 0, -3600...3600)]
        case .grayscale, .invert: return []
        case .sepia: return [.init("intensity", 1, 0...1)]
        case .colorMatrix: return [.init("intensity", 1, 0...1)]
        case .lut: return [.init("intensity", 1, 0...1)]
        case .gaussianBlur: return [.init("sigma", 2, 0...100)]
        case .sharpen: return [.init("amount", 1, 0...10), .init("sigma", 1, 0.1...100)]
        case .pixellate: return [.init("size", 16, 1...2048)]
        case .vignette: return [.init("center.x", 0.5, -10...10), .init("center.y", 0.5, -10...10),
                                .init("start", 0.3, 0...2), .init("end", 0.75, 0...2)]
        case .sobelEdge, .sketch: return [.init("edgeStrength", 1, 0...10)]
        case .toon: return [.init("threshold", 0.2, 0...10), .init("levels", 10, 1...256)]
        case .swirl: return [.init("center.x", 0.5, -10...10), .init("center.y", 0.5, -10...10),
                             .init("radius", 200, 0...16384), .init("angle", 1, -100...100)]
        case .kuwahara: return [.init("radius", 3, 1...20)]
        case .chromaKey: return [.init("similarity", 0.4, 0...1), .init("smoothness", 0.1, 0...1), .init("spill", 0.5, 0...1)]
        }
    }

    /// The JSON keys a filter object of this type may have besides `type`.
    public var keys: [String] {
        var keys: [String] = []
        for spec in numericParameters {
            let key = String(spec.key.prefix { $0 != "." })
            if !keys.contains(key) { keys.append(key) }
        }
        switch self {
        case .colorMatrix: keys.insert("matrix", at: 0)
        case .lut: keys.insert("asset", at: 0)
        case .vignette, .chromaKey: keys.append("color")
        default: break
        }
        return keys
    }

    /// Pointwise filters change each pixel from its own colour only; consecutive ones run as
    /// one pass.
    public var isPointwise: Bool {
        switch self {
        case .brightness, .contrast, .saturation, .gamma, .exposure, .hue, .grayscale, .invert, .sepia, .colorMatrix, .lut: return true
        default: return false
        }
    }
}

/// One numeric filter parameter's key (as in the JSON object), default and accepted range.
public struct FilterParameterSpec: Hashable, Sendable {
    public var key: String
    public var defaultValue: Double
    public var range: ClosedRange<Double>
    public init(_ key: String, _ defaultValue: Double, _ range: ClosedRange<Double>) {
        self.key = key; self.defaultValue = defaultValue; self.range = range
    }
}

/// A filter on a layer or on the whole picture, with its parameters of type `Value`:
/// `FilterParameter` as written (`LayerFilter`), `Double` as evaluated for one frame
/// (`FilterDraw`). The meaning of every case is docs/composition.md, "Filters".
public enum Filter<Value: Hashable & Sendable & Codable>: Hashable, Sendable, Codable {
    case brightness(Value)
    case contrast(Value)
    case saturation(Value)
    case gamma(Value)
    case exposure(Value)
    case hue(degrees: Value)
    case grayscale
    case invert
    case sepia(intensity: Value)
    /// `matrix`: 12 values, 3 rows of (r, g, b, offset).
    case colorMatrix(matrix: [Value], intensity: Value)
    /// `asset`: the id of a `.cube` asset.
    case lut(asset: String, intensity: Value)
    case gaussianBlur(sigma: Value)
    case sharpen(amount: Value, sigma: Value)
    case pixellate(size: Value)
    case vignette(centerX: Value, centerY: Value, color: RGBAColor, start: Value, end: Value)
    case sobelEdge(edgeStrength: Value)
    case sketch(edgeStrength: Value)
    case toon(threshold: Value, levels: Value)
    case swirl(centerX: Value, centerY: Value, radius: Value, angle: Value)
    case kuwahara(radius: Value)
    case chromaKey(color: RGBAColor, similarity: Value, smoothness: Value, spill: Value)

    public var type: FilterType {
        switch self {
        case .brightness: return .brightness
        case .contrast: return .contrast
        case .saturation: return .saturation
        case .gamma: return .gamma
        case .exposure: return .exposure
        case .hue: return .hue
        case .grayscale: return .grayscale
        case .invert: return .invert
        case .sepia: return .sepia
        case .colorMatrix: return .colorMatrix
        case .lut: return .lut
        case .gaussianBlur: return .gaussianBlur
        case .sharpen: return .sharpen
        case .pixellate: return .pixellate
        case .vignette: return .vignette
        case .sobelEdge: return .sobelEdge
        case .sketch: return .sketch
        case .toon: return .toon
        case .swirl: return .swirl
        case .kuwahara: return .kuwahara
        case .chromaKey: return .chromaKey
        }
    }

    /// Every numeric parameter with the JSON path below the filter object where it is
    /// written (`brightness`, `center.x`, `matrix[1][3]`), in a fixed order.
    public var parameters: [(path: String, value: Value)] {
        switch self {
        case .brightness(let v): return [("brightness", v)]
        case .contrast(let v): return [("contrast", v)]
        case .saturation(let v): return [("saturation", v)]
        case .gamma(let v): return [("gamma", v)]
        case .exposure(let v): return [("exposure", v)]
        case .hue(let v): return [("degrees", v)]
        case .grayscale, .invert: return []
        case .sepia(let v): return [("intensity", v)]
        case .colorMatrix(let m, let i):
            return m.enumerated().map { ("matrix[\($0.offset / 4)][\($0.offset % 4)]", $0.element) } + [("intensity", i)]
        case .lut(_, let i): return [("intensity", i)]
        case .gaussianBlur(let s): return [("sigma", s)]
        case .sharpen(let a, let s): return [("amount", a), ("sigma", s)]
        case .pixellate(let s): return [("size", s)]
        case .vignette(let x, let y, _, let s, let e): return [("center.x", x), ("center.y", y), ("start", s), ("end", e)]
        case .sobelEdge(let s), .sketch(let s): return [("edgeStrength", s)]
        case .toon(let t, let l): return [("threshold", t), ("levels", l)]
        case .swirl(let x, let y, let r, let a): return [("center.x", x), ("center.y", y), ("radius", r), ("angle", a)]
        case .kuwahara(let r): return [("radius", r)]
        case .chromaKey(_, let s, let m, let p): return [("similarity", s), ("smoothness", m), ("spill", p)]
        }
    }

    /// The same filter with every numeric parameter transformed by `f`.
    public func map<T>(_ f: (Value) -> T) -> Filter<T> {
        switch self {
        case .brightness(let v): return .brightness(f(v))
        case .contrast(let v): return .contrast(f(v))
        case .saturation(let v): return .saturation(f(v))
        case .gamma(let v): return .gamma(f(v))
        case .exposure(let v): return .exposure(f(v))
        case .hue(let v): return .hue(degrees: f(v))
        case .grayscale: return .grayscale
        case .invert: return .invert
        case .sepia(let v): return .sepia(intensity: f(v))
        case .colorMatrix(let m, let i): return .colorMatrix(matrix: m.map(f), intensity: f(i))
        case .lut(let a, let i): return .lut(asset: a, intensity: f(i))
        case .gaussianBlur(let s): return .gaussianBlur(sigma: f(s))
        case .sharpen(let a, let s): return .sharpen(amount: f(a), sigma: f(s))
        case .pixellate(let s): return .pixellate(size: f(s))
        case .vignette(let x, let y, let c, let s, let e): return .vignette(centerX: f(x), centerY: f(y), color: c, start: f(s), end: f(e))
        case .sobelEdge(let s): return .sobelEdge(edgeStrength: f(s))
        case .sketch(let s): return .sketch(edgeStrength: f(s))
        case .toon(let t, let l): return .toon(threshold: f(t), levels: f(l))
        case .swirl(let x, let y, let r, let a): return .swirl(centerX: f(x), centerY: f(y), radius: f(r), angle: f(a))
        case .kuwahara(let r): return .kuwahara(radius: f(r))
        case .chromaKey(let c, let s, let m, let p): return .chromaKey(color: c, similarity: f(s), smoothness: f(m), spill: f(p))
        }
    }

    /// The asset the filter reads (a LUT), if any.
    public var asset: String? {
        if case .lut(let asset, _) = self { return asset }
        return nil
    }
}

/// A filter as written in the composition.
public typealias LayerFilter = Filter<FilterParameter>
/// A filter with its parameters evaluated for one output frame.
public typealias FilterDraw = Filter<Double>

extension Filter where Value == FilterParameter {
    /// The filter's parameters at composition time `time`, each clamped into its accepted
    /// range (an animated value never leaves what validation allowed).
    public func evaluated(at time: Rational) -> FilterDraw {
        let specs = type.numericParameters
        var index = 0
        let names = parameters.map(\.path)
        return map { parameter -> Double in
            defer { index += 1 }
            let value = parameter.value(at: time)
            let key = names[index]
            guard let spec = specs.first(where: { $0.key == key }) else { return value }
            return min(max(value, spec.range.lowerBound), spec.range.upperBound)
        }
    }
}

/// How a layer combines with what is below it: the separable blend modes of W3C Compositing
/// and Blending Level 1 (plus `add`), in gamma-encoded RGB, then source-over.
public enum BlendMode: String, CaseIterable, Hashable, Sendable, Codable {
    case normal, multiply, screen, overlay, darken, lighten, colorDodge, colorBurn, hardLight, softLight, difference, exclusion, add
}
