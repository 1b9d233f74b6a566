/// Checks of `filters` arrays (docs/composition.md, "Filters"): every numeric parameter within
/// its type's range, colours opaque, a `lut` filter's asset a `.cube` LUT.
extension ValidationRun {
    /// Largest magnitude of a `colorMatrix` entry: far beyond any useful grade, small enough
    /// that no sum the kernel forms leaves Float's exact range for 8-bit inputs.
    static let maximumColorMatrixEntry = 1000.0

    /// Reports every problem of `filters` (at `path`, the array's JSON path) and returns them
    /// all when there is none, else nil. `onLayer` is false for `videoComposition.filters`,
    /// where nothing lies below to show through a chroma key.
    func checkFilters(_ filters: [LayerFilter], at path: String, onLayer: Bool = true) -> [LayerFilter]? {
        let before = problems.count
        for (i, filter) in filters.enumerated() {
            let filterPath = "\(path)[\(i)]"
            let specs = filter.type.numericParameters
            for (key, parameter) in filter.parameters {
                let parameterPath = "\(filterPath).\(key)"
                // An animated parameter: its own rules first, then each keyframe value's range.
                for problem in parameter.problems(at: parameterPath) { report(problem.path, problem.message) }
                if let spec = specs.first(where: { $0.key == key }) {
                    for (valuePath, value) in parameter.keyValues(at: parameterPath) where !spec.range.contains(value) {
                        report(valuePath, "must be between \(Self.format(spec.range.lowerBound)) and \(Self.format(spec.range.upperBound)) for \(filter.type.rawValue), not \(Self.format(value))")
                    }
                } else {
                    // colorMatrix entries.
                    for (valuePath, value) in parameter.keyValues(at: parameterPath) where value.magnitude > Self.maximumColorMatrixEntry {
                        report(valuePath, "must be between -\(Int(Self.maximumColorMatrixEntry)) and \(Int(Self.maximumColorMatrixEntry)), not \(Self.format(value))")
                    }
                }
            }
            if case .chromaKey = filter, !onLayer {
                report("\(filterPath).type", "chromaKey works on a layer (what it makes transparent shows the layers below); move it to a layer instruction's filters")
            }
            switch filter {
            case .vignette(_, _, let color, _, _), .chromaKey(let color, _, _, _):
                if color.a != 255 { report("\(filterPath).color", "must be an opaque colour \"#RRGGBB\" (its alpha is not used)") }
            case .lut(let asset, _):
                if composition.assets[asset] == nil {
                    report("\(filterPath).asset", "unknown asset \"\(asset)\"")
                } else if let description = described[asset]?.description, description.kind != .lut {
                    report("\(filterPath).asset", "asset \"\(asset)\" is not a .cube LUT")
                }
            default:
                break
            }
        }
        return problems.count == before ? filters : nil
    }

    /// A number as a person writes it: `2`, `0.5`, `-10`.
    static func format(_ value: Double) -> String {
        value == value.rounded() && value.magnitude < 1e15 ? String(Int(value)) : String(value)
    }
}
