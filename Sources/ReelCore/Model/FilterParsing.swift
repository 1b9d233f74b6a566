/// Reading `filters` arrays (layer instructions and `videoComposition`): one object per filter,
/// `{"type": …, parameters}`, whose allowed keys depend on its type. Ranges are checked by
/// validation (`FilterValidation`), not here.
extension CompositionDecoding {
    func filter(_ value: JSONValue, at path: String) -> LayerFilter? {
        let r = reader
        guard case .object(let probe) = value else {
            r.report(path, "must be a filter object {\"type\": …}, not \(value.typeName)")
            return nil
        }
        guard let typeValue = probe["type"] else {
            r.report(JSONFieldReader.child(path, "type"), "is required (one of \(FilterType.allCases.map(\.rawValue).joined(separator: ", ")))")
            return nil
        }
        guard let type = r.choice(typeValue, at: JSONFieldReader.child(path, "type"), FilterType.self),
              let o = r.object(value, at: path, keys: ["type"] + type.keys) else { return nil }

        /// The numeric parameter `key` (a spec key such as `sigma` or `center.x`), or its default.
        func number(_ key: String) -> FilterParameter? {
            let spec = type.numericParameters.first { $0.key == key }!
            let parts = key.split(separator: ".").map(String.init)
            if parts.count == 2 {
                guard let outer = o[parts[0]] else { return .constant(spec.defaultValue) }
                let outerPath = JSONFieldReader.child(path, parts[0])
                guard case .object(let inner) = outer else {
                    // Reported once, for the first coordinate.
                    if parts[1] == "x" { r.report(outerPath, "must be a point {\"x\", \"y\"}, not \(outer.typeName)") }
                    return nil
                }
                if parts[1] == "x" { _ = r.object(outer, at: outerPath, keys: ["x", "y"]) }
                return r.optional(inner, parts[1], at: outerPath, filterParameter) ?? .constant(spec.defaultValue)
            }
            guard let v = o[key] else { return .constant(spec.defaultValue) }
            return filterParameter(v, at: JSONFieldReader.child(path, key))
        }
        func color(_ fallback: RGBAColor) -> RGBAColor? {
            guard let v = o["color"] else { return fallback }
            return r.color(v, at: JSONFieldReader.child(path, "color"))
        }

        switch type {
        case .brightness: return number("brightness").map(LayerFilter.brightness)
        case .contrast: return number("contrast").map(LayerFilter.contrast)
        case .saturation: return number("saturation").map(LayerFilter.saturation)
        case .gamma: return number("gamma").map(LayerFilter.gamma)
        case .exposure: return number("exposure").map(LayerFilter.exposure)
        case .hue: return number("degrees").map { .hue(degrees: $0) }
        case .grayscale: return .grayscale
        case .invert: return .invert
        case .sepia: return number("intensity").map { .sepia(intensity: $0) }
        case .colorMatrix:
            let matrix = r.required(o, "matrix", at: path, colorMatrix)
            let intensity = number("intensity")
            guard let matrix, let intensity else { return nil }
            return .colorMatrix(matrix: matrix, intensity: intensity)
        case .lut:
            let asset = r.required(o, "asset", at: path, r.string)
            let intensity = number("intensity")
            guard let asset, let intensity else { return nil }
            return .lut(asset: asset, intensity: intensity)
        case .gaussianBlur: return number("sigma").map { .gaussianBlur(sigma: $0) }
        case .sharpen:
            guard let amount = number("amount"), let sigma = number("sigma") else { return nil }
            return .sharpen(amount: amount, sigma: sigma)
        case .pixellate: return number("size").map { .pixellate(size: $0) }
        case .vignette:
            let x = number("center.x"), y = number("center.y"), c = color(.black), s = number("start"), e = number("end")
            guard let x, let y, let c, let s, let e else { return nil }
            return .vignette(centerX: x, centerY: y, color: c, start: s, end: e)
        case .sobelEdge: return number("edgeStrength").map { .sobelEdge(edgeStrength: $0) }
        case .sketch: return number("edgeStrength").map { .sketch(edgeStrength: $0) }
        case .toon:
            guard let t = number("threshold"), let l = number("levels") else { return nil }
            return .toon(threshold: t, levels: l)
        case .swirl:
            let x = number("center.x"), y = number("center.y"), radius = number("radius"), angle = number("angle")
            guard let x, let y, let radius, let angle else { return nil }
            return .swirl(centerX: x, centerY: y, radius: radius, angle: angle)
        case .kuwahara: return number("radius").map { .kuwahara(radius: $0) }
        case .chromaKey:
            let c = color(RGBAColor(r: 0, g: 255, b: 0)), s = number("similarity"), m = number("smoothness"), p = number("spill")
            guard let c, let s, let m, let p else { return nil }
            return .chromaKey(color: c, similarity: s, smoothness: m, spill: p)
        }
    }

    /// A numeric filter parameter. The one place that decides what may be written where a
    /// filter takes a number.
    func filterParameter(_ value: JSONValue, at path: String) -> FilterParameter? {
        reader.animatedNumber(value, at: path)
    }

    /// `[[r, g, b, offset], [r, g, b, offset], [r, g, b, offset]]`, row-major.
    func colorMatrix(_ value: JSONValue, at path: String) -> [FilterParameter]? {
        let message = "must be 3 rows of 4 numbers [[r, g, b, offset], [r, g, b, offset], [r, g, b, offset]]"
        guard case .array(let rows) = value, rows.count == 3 else {
            reader.report(path, message)
            return nil
        }
        var entries: [FilterParameter] = []
        var ok = true
        for (i, row) in rows.enumerated() {
            let rowPath = JSONFieldReader.element(path, i)
            guard case .array(let cells) = row, cells.count == 4 else {
                reader.report(rowPath, "must be a row of 4 numbers [r, g, b, offset]")
                ok = false
                continue
            }
            for (j, cell) in cells.enumerated() {
                if let p = filterParameter(cell, at: JSONFieldReader.element(rowPath, j)) { entries.append(p) } else { ok = false }
            }
        }
        return ok ? entries : nil
    }
}
