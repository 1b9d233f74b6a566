/// A colour look-up table read from a `.cube` file (Adobe's Cube LUT Specification 1.0):
/// a 1D table of `size` RGB entries, or a 3D table of `size³` entries with red varying
/// fastest, then green, then blue.
///
/// An input channel value `x` is clamped to `[domainMin, domainMax]` and maps to table
/// position `(x − domainMin) / (domainMax − domainMin) · (size − 1)`, interpolated linearly
/// between entries (1D) or tetrahedrally between the eight corners of its cell (3D).
///
/// Pure parsing: the caller reads the file. Invariants: `table.count == 3·size` (1D) or
/// `3·size³` (3D); every domain has `domainMax > domainMin`; every entry is finite.
public struct CubeLUT: Sendable, Hashable {
    public var title: String?
    public var isThreeDimensional: Bool
    public var size: Int
    public var domainMin: [Double]
    public var domainMax: [Double]
    /// Output RGB triples, red fastest (3D).
    public var table: [Float]

    /// Sizes accepted: the specification's 2…65536 entries for 1D; 2…129 a side for 3D (the
    /// specification allows 256, but a 256³ table weighs 200 MB; grading tools write 17, 33 or 65).
    public static let oneDimensionalSizes = 2...65_536
    public static let threeDimensionalSizes = 2...129

    public init(title: String? = nil, isThreeDimensional: Bool, size: Int, domainMin: [Double] = [0, 0, 0], domainMax: [Double] = [1, 1, 1], table: [Float]) {
        self.title = title; self.isThreeDimensional = isThreeDimensional; self.size = size
        self.domainMin = domainMin; self.domainMax = domainMax; self.table = table
    }

    /// What a file that is not a usable `.cube` LUT says is wrong, with its line.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        public var line: Int?
        public var message: String
        public var description: String { line.map { "line \($0): \(message)" } ?? message }
    }

    /// Parses the text of a `.cube` file.
    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> CubeLUT {
        var title: String?
        var size1D: Int?, size3D: Int?
        var domainMin = [0.0, 0.0, 0.0], domainMax = [1.0, 1.0, 1.0]
        var table: [Float] = []
        var expected = 0
        var lineNumber = 0

        func fail(_ message: String) -> ParseError { ParseError(line: lineNumber, message: message) }
        func triple(_ fields: ArraySlice<Substring>) throws(ParseError) -> [Double] {
            guard fields.count == 3 else { throw fail("expected three numbers, found \(fields.count)") }
            var values: [Double] = []
            for field in fields {
                guard let v = Double(field), v.isFinite else { throw fail("\"\(field)\" is not a number") }
                values.append(v)
            }
            return values
        }

        for rawLine in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(decoding: rawLine, as: UTF8.self)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            guard let keyword = fields.first else { continue }
            if let first = keyword.unicodeScalars.first, first.properties.isAlphabetic {
                guard table.isEmpty else { throw fail("keyword \(keyword) after the table data; keywords must come first") }
                switch keyword {
                case "TITLE":
                    guard let open = line.firstIndex(of: "\""), let close = line.lastIndex(of: "\""), open < close else {
                        throw fail("TITLE needs a quoted text")
                    }
                    title = String(line[line.index(after: open)..<close])
                case "LUT_1D_SIZE", "LUT_3D_SIZE":
                    guard fields.count == 2, let n = Int(fields[1]) else { throw fail("\(keyword) needs one integer") }
                    if keyword == "LUT_1D_SIZE" {
                        guard oneDimensionalSizes.contains(n) else { throw fail("LUT_1D_SIZE \(n) is outside \(oneDimensionalSizes.lowerBound)…\(oneDimensionalSizes.upperBound)") }
                        size1D = n
                    } else {
                        guard threeDimensionalSizes.contains(n) else { throw fail("LUT_3D_SIZE \(n) is outside \(threeDimensionalSizes.lowerBound)…\(threeDimensionalSizes.upperBound)") }
                        size3D = n
                    }
                case "DOMAIN_MIN": domainMin = try triple(fields.dropFirst())
                case "DOMAIN_MAX": domainMax = try triple(fields.dropFirst())
                case "LUT_1D_INPUT_RANGE", "LUT_3D_INPUT_RANGE":
                    // Resolve's form of the domain: one minimum and one maximum for all channels.
                    guard fields.count == 3, let lo = Double(fields[1]), let hi = Double(fields[2]), lo.isFinite, hi.isFinite else {
                        throw fail("\(keyword) needs two numbers")
                    }
                    domainMin = [lo, lo, lo]; domainMax = [hi, hi, hi]
                default:
                    throw fail("unknown keyword \(keyword)")
                }
                continue
            }
            if expected == 0 {
                switch (size1D, size3D) {
                case (nil, nil): throw fail("table data before LUT_1D_SIZE or LUT_3D_SIZE")
                case (.some, .some): throw fail("both LUT_1D_SIZE and LUT_3D_SIZE are given")
                case (let n?, nil): expected = n
                case (nil, let n?): expected = n * n * n
                }
                table.reserveCapacity(3 * expected)
            }
            guard table.count < 3 * expected else { throw fail("more table entries than the size declares (\(expected))") }
            for v in try triple(fields[...]) { table.append(Float(v)) }
        }
        lineNumber = 0
        guard size1D != nil || size3D != nil else { throw ParseError(line: nil, message: "no LUT_1D_SIZE or LUT_3D_SIZE: not a .cube LUT") }
        if size1D != nil && size3D != nil { throw ParseError(line: nil, message: "both LUT_1D_SIZE and LUT_3D_SIZE are given") }
        let count = size3D.map { $0 * $0 * $0 } ?? size1D!
        guard table.count == 3 * count else {
            throw ParseError(line: nil, message: "the table has \(table.count / 3) entries; the size declares \(count)")
        }
        for c in 0..<3 where !(domainMax[c] > domainMin[c]) {
            throw ParseError(line: nil, message: "DOMAIN_MAX must be greater than DOMAIN_MIN in every channel")
        }
        return CubeLUT(title: title, isThreeDimensional: size3D != nil, size: size3D ?? size1D!, domainMin: domainMin, domainMax: domainMax, table: table)
    }

    /// The table applied to one colour (channels in 0…1 or beyond), in Double: the
    /// definition the renderer's kernel follows.
    public func apply(_ rgb: (Double, Double, Double)) -> (Double, Double, Double) {
        let input = [rgb.0, rgb.1, rgb.2]
        let scale = Double(size - 1)
        let position = (0..<3).map { c -> Double in
            let x = min(max(input[c], domainMin[c]), domainMax[c])
            return (x - domainMin[c]) / (domainMax[c] - domainMin[c]) * scale
        }
        if !isThreeDimensional {
            let out = (0..<3).map { c -> Double in
                let i = min(Int(position[c]), size - 2), f = position[c] - Double(i)
                return Double(table[3 * i + c]) * (1 - f) + Double(table[3 * (i + 1) + c]) * f
            }
            return (out[0], out[1], out[2])
        }
        let i = position.map { min(Int($0), size - 2) }
        let f = (0..<3).map { position[$0] - Double(i[$0]) }
        func entry(_ dr: Int, _ dg: Int, _ db: Int) -> [Double] {
            let n = ((i[2] + db) * size + (i[1] + dg)) * size + (i[0] + dr)
            return [Double(table[3 * n]), Double(table[3 * n + 1]), Double(table[3 * n + 2])]
        }
        // Tetrahedral: walk from the cell's (0,0,0) corner to (1,1,1) along the axes in order
        // of decreasing fraction.
        let order = [0, 1, 2].sorted { f[$0] > f[$1] }
        var corner = [0, 0, 0]
        var out = entry(0, 0, 0).map { $0 * (1 - f[order[0]]) }
        for (k, axis) in order.enumerated() {
            corner[axis] = 1
            let next = entry(corner[0], corner[1], corner[2])
            let weight = f[axis] - (k + 1 < 3 ? f[order[k + 1]] : 0)
            for c in 0..<3 { out[c] += next[c] * weight }
        }
        return (out[0], out[1], out[2])
    }
}
