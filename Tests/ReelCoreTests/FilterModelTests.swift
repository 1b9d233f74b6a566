import Testing
@testable import ReelCore
import ReelThreadTesting

/// Filters and blend modes in the model: parsing, validation (with JSON paths), evaluation,
/// and the chunk content key.
@Suite("Filters and blend modes", .blocking)
struct FilterModelTests {
    static let assets = Fixtures.ruleAssets.merging(Fixtures.described([
        "grade": AssetDescription(kind: .lut, duration: nil, video: nil, audio: nil, lut: LUTDescription(dimensions: 3, size: 33)),
    ])) { $1 }
    static let assetsJSON = #""assets": {"a": {"url": "a.mp4"}, "s": {"url": "s.png"}, "m": {"url": "m.m4a"}, "n": {"url": "n.mp4"}, "grade": {"url": "g.cube"}}"#

    /// Track 1 (`a`, 10 s) with `layer` as its layer instruction's extra keys, and `picture` as
    /// `videoComposition.filters`.
    static func composition(layer: String = "", picture: String? = nil) -> String {
        let layerKeys = layer.isEmpty ? "" : ", " + layer
        let pictureKeys = picture.map { #""filters": \#($0), "# } ?? ""
        return Fixtures.composition(assets: assetsJSON, tracks: #"[{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}]"#,
                                    extra: #""videoComposition": {\#(pictureKeys)"instructions": [{"timeRange": {"start": 0, "duration": 10}, "layerInstructions": [{"track": 1\#(layerKeys)}]}]}"#)
    }

    @Test func everyFilterTypeParsesWithItsDefaults() throws {
        let all = FilterType.allCases.map { type -> String in
            switch type {
            case .colorMatrix: return #"{"type": "colorMatrix", "matrix": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]}"#
            case .lut: return #"{"type": "lut", "asset": "grade"}"#
            default: return #"{"type": "\#(type.rawValue)"}"#
            }
        }
        let plan = try Fixtures.plan(Self.composition(layer: #""filters": [\#(all.joined(separator: ", "))], "blendMode": "screen""#), assets: Self.assets)
        let layer = try #require(plan.instructions.first?.layers.first)
        #expect(layer.filters.map(\.type) == FilterType.allCases)
        #expect(layer.blendMode == .screen)
        #expect(layer.filters[1] == .contrast(.constant(1)))
        #expect(layer.filters.first { $0.type == .vignette } == .vignette(centerX: .constant(0.5), centerY: .constant(0.5), color: .black,
                                                                           start: .constant(0.3), end: .constant(0.75)))
        #expect(layer.filters.first { $0.type == .chromaKey } == .chromaKey(color: RGBAColor(r: 0, g: 255, b: 0), similarity: .constant(0.4),
                                                                             smoothness: .constant(0.1), spill: .constant(0.5)))
        #expect(plan.assets["grade"] != nil, "the LUT a filter uses is a planned asset (agents fetch it, the key hashes it)")
        // Evaluated for a frame: plain numbers.
        let frame = plan.frame(0)
        #expect(frame.layers.first?.filters.first == .brightness(0))
        #expect(frame.layers.first?.blendMode == .screen)
    }

    @Test func writtenParametersAndPictureFiltersAreKept() throws {
        let plan = try Fixtures.plan(Self.composition(
            layer: #""filters": [{"type": "sharpen", "amount": 2.5, "sigma": 3}, {"type": "swirl", "center": {"x": 0.25, "y": 0.75}, "radius": 80, "angle": -2}]"#,
            picture: #"[{"type": "sepia", "intensity": 0.25}, {"type": "colorMatrix", "matrix": [[0.5, 0.5, 0, 0.1], [0, 1, 0, 0], [0, 0, 1, -0.1]], "intensity": 0.5}]"#),
            assets: Self.assets)
        #expect(plan.instructions[0].layers[0].filters == [
            .sharpen(amount: .constant(2.5), sigma: .constant(3)),
            .swirl(centerX: .constant(0.25), centerY: .constant(0.75), radius: .constant(80), angle: .constant(-2)),
        ])
        #expect(plan.filters == [
            .sepia(intensity: .constant(0.25)),
            .colorMatrix(matrix: [0.5, 0.5, 0, 0.1, 0, 1, 0, 0, 0, 0, 1, -0.1].map(FilterParameter.constant), intensity: .constant(0.5)),
        ])
        #expect(plan.frame(3).filters == [.sepia(intensity: 0.25), .colorMatrix(matrix: [0.5, 0.5, 0, 0.1, 0, 1, 0, 0, 0, 0, 1, -0.1], intensity: 0.5)])
    }

    static let problemCases: [(String, String, [String])] = [
        ("unknown type", #""filters": [{"type": "blurr"}]"#,
         [#"videoComposition.instructions[0].layerInstructions[0].filters[0].type: must be one of "brightness", "contrast", "saturation", "gamma", "exposure", "hue", "grayscale", "invert", "sepia", "colorMatrix", "lut", "gaussianBlur", "sharpen", "pixellate", "vignette", "sobelEdge", "sketch", "toon", "swirl", "kuwahara", "chromaKey", not "blurr""#]),
        ("missing type", #""filters": [{"brightness": 1}]"#,
         ["videoComposition.instructions[0].layerInstructions[0].filters[0].type: is required (one of brightness, contrast, saturation, gamma, exposure, hue, grayscale, invert, sepia, colorMatrix, lut, gaussianBlur, sharpen, pixellate, vignette, sobelEdge, sketch, toon, swirl, kuwahara, chromaKey)"]),
        ("another type's key", #""filters": [{"type": "brightness", "contrast": 2}]"#,
         ["videoComposition.instructions[0].layerInstructions[0].filters[0].contrast: unknown key; expected one of: type, brightness"]),
        ("out of range", #""filters": [{"type": "contrast", "contrast": 5}, {"type": "gamma", "gamma": 0}]"#,
         ["videoComposition.instructions[0].layerInstructions[0].filters[0].contrast: must be between 0 and 4 for contrast, not 5",
          "videoComposition.instructions[0].layerInstructions[0].filters[1].gamma: must be between 0.1 and 3 for gamma, not 0"]),
        ("string for a number", #""filters": [{"type": "gaussianBlur", "sigma": "3"}]"#,
         [#"videoComposition.instructions[0].layerInstructions[0].filters[0].sigma: must be a number or an animation object ({"values": […], "duration": …} or {"from", "to", "duration"}), not a string"#]),
        ("animated out of range", #""filters": [{"type": "contrast", "contrast": {"values": [1, 5, 2], "duration": 2}}]"#,
         ["videoComposition.instructions[0].layerInstructions[0].filters[0].contrast.values[1]: must be between 0 and 4 for contrast, not 5"]),
        ("animation rules", #""filters": [{"type": "brightness", "brightness": {"from": 0, "to": 0.5, "duration": 0, "keyTimes": [0, 0.5]}}]"#,
         ["videoComposition.instructions[0].layerInstructions[0].filters[0].brightness.duration: must be > 0",
          "videoComposition.instructions[0].layerInstructions[0].filters[0].brightness.keyTimes: must start at 0 and end at 1 (fractions of the duration)"]),
        ("matrix shape", #""filters": [{"type": "colorMatrix", "matrix": [[1, 0, 0, 0], [0, 1, 0], [0, 0, 1, 0]]}]"#,
         ["videoComposition.instructions[0].layerInstructions[0].filters[0].matrix[1]: must be a row of 4 numbers [r, g, b, offset]"]),
        ("matrix entry", #""filters": [{"type": "colorMatrix", "matrix": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 2000]]}]"#,
         ["videoComposition.instructions[0].layerInstructions[0].filters[0].matrix[2][3]: must be between -1000 and 1000, not 2000"]),
        ("center not a point", #""filters": [{"type": "vignette", "center": 0.5}]"#,
         [#"videoComposition.instructions[0].layerInstructions[0].filters[0].center: must be a point {"x", "y"}, not a number"#]),
        ("center key", #""filters": [{"type": "swirl", "center": {"x": 0.5, "z": 1}}]"#,
         [#"videoComposition.instructions[0].layerInstructions[0].filters[0].center.z: unknown key; expected one of: x, y"#]),
        ("translucent colour", ##""filters": [{"type": "chromaKey", "color": "#00FF0080"}]"##,
         [##"videoComposition.instructions[0].layerInstructions[0].filters[0].color: must be an opaque colour "#RRGGBB" (its alpha is not used)"##]),
        ("lut without asset", #""filters": [{"type": "lut"}]"#,
         ["videoComposition.instructions[0].layerInstructions[0].filters[0].asset: is required"]),
        ("lut of a movie", #""filters": [{"type": "lut", "asset": "a"}]"#,
         [#"videoComposition.instructions[0].layerInstructions[0].filters[0].asset: asset "a" is not a .cube LUT"#]),
        ("lut of nothing", #""filters": [{"type": "lut", "asset": "nope"}]"#,
         [#"videoComposition.instructions[0].layerInstructions[0].filters[0].asset: unknown asset "nope""#]),
        ("blend mode", #""blendMode": "burn""#,
         [#"videoComposition.instructions[0].layerInstructions[0].blendMode: must be one of "normal", "multiply", "screen", "overlay", "darken", "lighten", "colorDodge", "colorBurn", "hardLight", "softLight", "difference", "exclusion", "add", not "burn""#]),
        ("filters not an array", #""filters": {"type": "invert"}"#,
         ["videoComposition.instructions[0].layerInstructions[0].filters: must be an array, not an object"]),
    ]

    @Test(arguments: problemCases.indices)
    func badFiltersAreReportedAtTheirPath(_ index: Int) {
        let (name, layer, expected) = Self.problemCases[index]
        #expect(Fixtures.problems(Self.composition(layer: layer), assets: Self.assets) == expected, "\(name)")
    }

    @Test func chromaKeyIsRefusedOnThePicture() {
        #expect(Fixtures.problems(Self.composition(picture: #"[{"type": "chromaKey"}]"#), assets: Self.assets) == [
            "videoComposition.filters[0].type: chromaKey works on a layer (what it makes transparent shows the layers below); move it to a layer instruction's filters",
        ])
    }

    @Test func evaluationClampsIntoTheRange() {
        let filter = LayerFilter.toon(threshold: .constant(0.3), levels: .constant(4))
        #expect(filter.evaluated(at: .zero) == .toon(threshold: 0.3, levels: 4))
        #expect(filter.parameters.map(\.path) == ["threshold", "levels"])
        #expect(LayerFilter.colorMatrix(matrix: (0..<12).map { .constant(Double($0)) }, intensity: .constant(1)).parameters.map(\.path)[7] == "matrix[1][3]")
    }

    // MARK: - Content key

    static let content = ["a": String(repeating: "a", count: 64), "grade": String(repeating: "c", count: 64)]

    static func key(_ json: String, content: [String: String] = content) throws -> String? {
        let plan = try Fixtures.plan(json, assets: assets)
        return ContentKey.videoChunk(plan, frames: FrameRange(start: 0, end: 10), encoderThreads: 4, assetContent: content)
    }

    @Test func everyFilterParameterIsInTheKey() throws {
        let base = try Self.key(Self.composition())
        let variants = [
            #""filters": [{"type": "brightness", "brightness": 0.1}]"#,
            #""filters": [{"type": "brightness", "brightness": 0.2}]"#,
            ##""filters": [{"type": "vignette", "color": "#102030"}]"##,
            ##""filters": [{"type": "vignette", "color": "#102031"}]"##,
            #""filters": [{"type": "colorMatrix", "matrix": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]}]"#,
            #""filters": [{"type": "colorMatrix", "matrix": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.01]]}]"#,
            #""filters": [{"type": "invert"}, {"type": "grayscale"}]"#,
            #""filters": [{"type": "grayscale"}, {"type": "invert"}]"#,
            #""blendMode": "multiply""#,
            #""blendMode": "screen""#,
            #""filters": [{"type": "lut", "asset": "grade"}]"#,
        ]
        var keys = [base]
        for v in variants { keys.append(try Self.key(Self.composition(layer: v))) }
        keys.append(try Self.key(Self.composition(picture: #"[{"type": "invert"}]"#)))
        #expect(keys.allSatisfy { $0 != nil })
        #expect(Set(keys).count == keys.count, "every variant has its own key")
    }

    @Test func theLUTIsKeyedByItsFilesContent() throws {
        let json = Self.composition(layer: #""filters": [{"type": "lut", "asset": "grade"}]"#)
        let one = try Self.key(json)
        var other = Self.content
        other["grade"] = String(repeating: "d", count: 64)
        #expect(try Self.key(json, content: other) != one)
        other["grade"] = nil
        #expect(try Self.key(json, content: other) == nil, "no key without the LUT's content hash")
    }

    @Test func writingTheDefaultsChangesNoKey() throws {
        // `normal` and no filters are what a layer had before these keys existed: same frames,
        // same key (the key writes effect fields only when present).
        let plan = try Fixtures.plan(Self.composition(layer: #""blendMode": "normal", "filters": []"#), assets: Self.assets)
        #expect(plan.frame(0).layers.allSatisfy { !$0.hasEffects })
        #expect(try Self.key(Self.composition(layer: #""blendMode": "normal", "filters": []"#)) == (try Self.key(Self.composition())))
    }
}

/// Adobe's Cube LUT format: what parses, what is refused, and how a table is applied.
@Suite("Cube LUTs", .blocking)
struct CubeLUTTests {
    static func parse(_ text: String) throws -> CubeLUT { try CubeLUT.parse(Array(text.utf8)) }

    /// The identity 3D table of size `n` (red fastest), with optional header lines.
    static func identity(_ n: Int, header: String = "") -> String {
        var lines = [header, "LUT_3D_SIZE \(n)"]
        for b in 0..<n { for g in 0..<n { for r in 0..<n {
            lines.append("\(Double(r) / Double(n - 1)) \(Double(g) / Double(n - 1)) \(Double(b) / Double(n - 1))")
        } } }
        return lines.joined(separator: "\n")
    }

    @Test func identityTableMapsEveryColourToItself() throws {
        let lut = try Self.parse(Self.identity(5, header: "# a comment\nTITLE \"identity\"\n"))
        #expect(lut.isThreeDimensional && lut.size == 5 && lut.title == "identity")
        for (r, g, b) in [(0.1, 0.7, 0.3), (1.0, 0.0, 0.5), (0.33, 0.33, 0.9)] {
            let out = lut.apply((r, g, b))
            #expect(abs(out.0 - r) < 1e-6 && abs(out.1 - g) < 1e-6 && abs(out.2 - b) < 1e-6)
        }
    }

    @Test func redVariesFastest() throws {
        // A 2³ table whose entries are their own index: entry n = (r + 2g + 4b).
        var text = "LUT_3D_SIZE 2\n"
        for n in 0..<8 { text += "\(n) 0 0\n" }
        let lut = try Self.parse(text)
        #expect(lut.apply((1, 0, 0)).0 == 1)
        #expect(lut.apply((0, 1, 0)).0 == 2)
        #expect(lut.apply((0, 0, 1)).0 == 4)
        // Tetrahedral: on the main diagonal only the (0,0,0) and (1,1,1) corners count.
        #expect(abs(lut.apply((0.5, 0.5, 0.5)).0 - 3.5) < 1e-9)
    }

    @Test func oneDimensionalTableAndDomain() throws {
        let lut = try Self.parse("LUT_1D_SIZE 3\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 2 2 2\n0 0 0\n0.5 0.25 1\n1 1 1\n")
        #expect(!lut.isThreeDimensional)
        let out = lut.apply((1, 0.5, 3))   // positions 1, 0.5 and (clamped) 2
        #expect(abs(out.0 - 0.5) < 1e-9 && abs(out.1 - 0.125) < 1e-9 && abs(out.2 - 1) < 1e-9)
    }

    @Test(arguments: [
        ("0 0 0\n", "line 1: table data before LUT_1D_SIZE or LUT_3D_SIZE"),
        ("LUT_3D_SIZE 2\n0 0 0\n", "the table has 1 entries; the size declares 8"),
        ("LUT_3D_SIZE 1\n", "line 1: LUT_3D_SIZE 1 is outside 2…129"),
        ("LUT_1D_SIZE 2\nLUT_3D_SIZE 2\n", "both LUT_1D_SIZE and LUT_3D_SIZE are given"),
        ("LUT_1D_SIZE 2\n0 0\n1 1 1\n", "line 2: expected three numbers, found 2"),
        ("LUT_1D_SIZE 2\n0 0 x\n1 1 1\n", "line 2: \"x\" is not a number"),
        ("LUT_1D_SIZE 2\nDOMAIN_MAX 0 1 1\n0 0 0\n1 1 1\n", "DOMAIN_MAX must be greater than DOMAIN_MIN in every channel"),
        ("LUT_1D_SIZE 2\n0 0 0\nTITLE \"late\"\n1 1 1\n", "line 3: keyword TITLE after the table data; keywords must come first"),
        ("LUT_1D_SIZE 2\nFOO 1\n", "line 2: unknown keyword FOO"),
        ("", "no LUT_1D_SIZE or LUT_3D_SIZE: not a .cube LUT"),
    ])
    func malformedFilesAreRefusedWithTheirLine(_ text: String, _ message: String) {
        #expect(throws: CubeLUT.ParseError.self) { try Self.parse(text) }
        do { _ = try Self.parse(text) } catch let error as CubeLUT.ParseError { #expect(error.description == message) } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
