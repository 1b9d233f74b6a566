import Testing
@testable import ReelCore
import ReelThreadTesting

/// What `{{name}}` placeholders become: typed values for whole strings, text inside longer
/// ones, at any depth of the composition, with defaults and `--set` values.
@Suite("Template substitution", .blocking)
struct TemplateSubstitutionTests {
    static let template = #"""
    {
      "formatVersion": 1,
      "variables": {
        "name": {"type": "text", "default": "Ada", "maxLength": 40},
        "age": {"type": "number", "default": 36, "min": 0},
        "size": {"type": "number", "default": 48},
        "ink": {"type": "color", "default": "#FF8800"},
        "photo": {"type": "asset", "default": "photos/ada.jpg"},
        "hold": {"type": "duration", "default": 3},
        "fast": {"type": "boolean", "default": true},
        "lang": {"type": "enum", "values": ["en", "fr"], "default": "en"}
      },
      "assets": {"clip": {"url": "clips/intro-{{lang}}.mp4"}, "photo": {"url": "{{photo}}"}},
      "tracks": [
        {"id": 1, "mediaType": "video", "segments": [
          {"asset": "clip", "at": 0},
          {"asset": "photo", "at": 10, "duration": "{{hold}}"}
        ]}
      ],
      "videoComposition": {
        "overlays": [
          {"text": "{{ name }}", "fontSize": "{{size}}", "color": "{{ink}}", "frame": {"x": 0, "y": 0, "width": 600, "height": 60}},
          {"text": "Hello, {{name}}! You are {{age}}, {{lang}}: {{fast}}.", "frame": {"x": 0, "y": 60, "width": 600, "height": 60}}
        ]
      },
      "export": {"optimizeForNetworkUse": "{{fast}}"}
    }
    """#

    static func resolve(_ sets: [String] = [], currentDirectory: String = "/home/me") throws -> ResolvedTemplate {
        let template = try #require(Template.parse(Self.template))
        return try template.resolve(sets.compactMap(VariableAssignment.init(parsing:)), currentDirectory: currentDirectory).get()
    }

    static func overlayText(_ c: Composition, _ i: Int) -> OverlayText? {
        guard case .text(let text)? = c.videoComposition?.overlays[i].content else { return nil }
        return text
    }

    @Test func defaultsFillEveryPlaceholderWithItsTypedValue() throws {
        let resolved = try Self.resolve()
        let c = resolved.composition
        #expect(c.assets["clip"] == AssetReference(url: "clips/intro-en.mp4"))
        // A default path stays as written: relative to the template, like every asset URL.
        #expect(c.assets["photo"] == AssetReference(url: "photos/ada.jpg"))
        #expect(c.tracks[0].segments[1] == .media(MediaSegment(asset: "photo", at: Rational(10), duration: Rational(3))))
        #expect(Self.overlayText(c, 0) == OverlayText(text: "Ada", font: "sans-serif", fontSize: 48, color: RGBAColor(r: 255, g: 136, b: 0)))
        #expect(Self.overlayText(c, 1)?.text == "Hello, Ada! You are 36, en: true.")
        #expect(c.export.optimizeForNetworkUse == true)
        #expect(resolved.values["age"] == .number("36"))
    }

    @Test func setValuesReplaceDefaultsAndKeepTheirType() throws {
        let resolved = try Self.resolve(["name=Grace Hopper", "age=85.5", "size=30", "ink=#0000FF80", "photo=grace.jpg",
                                         "hold=1001/30000", "fast=false", "lang=fr"])
        let c = resolved.composition
        #expect(c.assets["clip"] == AssetReference(url: "clips/intro-fr.mp4"))
        #expect(c.assets["photo"] == AssetReference(url: "/home/me/grace.jpg"))
        #expect(c.tracks[0].segments[1] == .media(MediaSegment(asset: "photo", at: Rational(10), duration: Rational(1001, 30000))))
        #expect(Self.overlayText(c, 0) == OverlayText(text: "Grace Hopper", font: "sans-serif", fontSize: 30, color: RGBAColor(r: 0, g: 0, b: 255, a: 128)))
        #expect(Self.overlayText(c, 1)?.text == "Hello, Grace Hopper! You are 85.5, fr: false.")
        #expect(c.export.optimizeForNetworkUse == false)
    }

    /// A whole-string placeholder becomes a JSON number, boolean or string in the JSON itself,
    /// not only in the decoded composition: the text a farm is sent has no quotes around them.
    @Test func wholePlaceholdersAreTypedInTheJSON() throws {
        let resolved = try Self.resolve(["size=30", "hold=2.5"])
        guard case .object(let root) = resolved.json, case .object(let vc)? = root["videoComposition"],
              case .array(let overlays)? = vc["overlays"], case .object(let first)? = overlays.first,
              case .object(let export)? = root["export"], case .array(let tracks)? = root["tracks"],
              case .object(let track)? = tracks.first, case .array(let segments)? = track["segments"],
              case .object(let still)? = segments.last else {
            Issue.record("unexpected shape: \(resolved.text)")
            return
        }
        #expect(first["fontSize"] == .number("30"))
        #expect(first["color"] == .string("#FF8800"))
        #expect(still["duration"] == .number("2.5"))
        #expect(export["optimizeForNetworkUse"] == .bool(true))
        #expect(root["variables"] == nil)
        // The text reads back to the same composition.
        #expect(try Composition.parse(resolved.text) == resolved.composition)
    }

    @Test func problemsAreTracedToTheVariablesOfTheirString() throws {
        let resolved = try Self.resolve()
        #expect(resolved.origins == [
            "assets.clip.url": ["lang"],
            "assets.photo.url": ["photo"],
            "tracks[0].segments[1].duration": ["hold"],
            "videoComposition.overlays[0].text": ["name"],
            "videoComposition.overlays[0].fontSize": ["size"],
            "videoComposition.overlays[0].color": ["ink"],
            "videoComposition.overlays[1].text": ["name", "age", "lang", "fast"],
            "export.optimizeForNetworkUse": ["fast"],
        ])
        #expect(resolved.relabel(Problem(path: "assets.photo.url", message: "no such file")).description
                == "assets.photo.url: no such file (from {{photo}})")
        #expect(resolved.relabel(Problem(path: "tracks[0].id", message: "must be > 0")).description == "tracks[0].id: must be > 0")
    }

    /// Strings in arrays and nested objects are substituted; object keys never are.
    @Test func substitutionReachesArraysAndNestedObjectsButNotKeys() throws {
        let number = VariableDeclaration(name: "n", type: .number, defaultValue: .number("7"))
        var substitution = TemplateSubstitution(declarations: ["n": number], names: ["n"], values: ["n": .number("7")])
        let input = try JSONParser.parse(#"{"list": ["{{n}}", "n={{n}}", 3, true, null, [{"deep": "{{n}}"}]], "{{n}}": "key"}"#)
        let output = substitution.substitute(input, at: "")
        #expect(output == (try JSONParser.parse(#"{"list": [7, "n=7", 3, true, null, [{"deep": 7}]], "{{n}}": "key"}"#)))
        #expect(substitution.problems.isEmpty)
        #expect(substitution.used == ["n"])
        #expect(Set(substitution.origins.keys) == ["list[0]", "list[1]", "list[5][0].deep"])
    }

    @Test(arguments: [
        ("plain", [PlaceholderText.Piece.text("plain")]),
        ("", [.text("")]),
        ("{{a}}", [.placeholder("a")]),
        ("{{ a_b-2 }}", [.placeholder("a_b-2")]),
        ("x{{a}}y{{b}}", [.text("x"), .placeholder("a"), .text("y"), .placeholder("b")]),
        ("{ {a} }", [.text("{ {a} }")]),
        ("名前: {{名前}}", [.text("名前: "), .placeholder("名前")]),
    ])
    func placeholdersAreFoundInText(_ text: String, _ pieces: [PlaceholderText.Piece]) throws {
        #expect(try PlaceholderText.pieces(of: text).get() == pieces)
    }

    @Test(arguments: ["{{}}", "{{1a}}", "{{a b}}", "{{a", "a}}{{"])
    func malformedPlaceholdersAreProblems(_ text: String) {
        #expect(throws: VariableTextError.self) { try PlaceholderText.pieces(of: text).get() }
    }

    /// Remotion's `calculateMetadata` case: a segment without `duration` whose asset is a
    /// variable takes the asset's own length, and so does the composition.
    @Test(arguments: [Rational(7), Rational(9, 2)])
    func aVariableAssetWithoutDurationTakesItsNaturalLength(_ voiceLength: Rational) throws {
        let json = #"""
        {"formatVersion": 1,
         "variables": {"voice": {"type": "asset"}, "bg": {"type": "color", "default": "#000000"}},
         "assets": {"photo": {"url": "photo.png"}, "voice": {"url": "{{voice}}"}},
         "tracks": [
           {"id": 1, "mediaType": "video", "segments": [{"asset": "photo", "at": 0, "duration": 2}]},
           {"id": 2, "mediaType": "audio", "segments": [{"asset": "voice", "at": 1}]}
         ],
         "videoComposition": {"renderSize": {"width": 640, "height": 360}, "frameDuration": "1/25",
                              "overlays": [{"text": "{{bg}}", "frame": {"x": 0, "y": 0, "width": 10, "height": 10}}]}}
        """#
        let template = try #require(Template.parse(json))
        let resolved = try template.resolve([VariableAssignment(name: "voice", value: "voices/take1.m4a")], currentDirectory: "/srv").get()
        #expect(resolved.composition.assets["voice"] == AssetReference(url: "/srv/voices/take1.m4a"))
        let plan = try CompositionValidator.validate(resolved.composition, assets: Fixtures.described([
            "photo": Fixtures.still(640, 360), "voice": Fixtures.sound(duration: voiceLength),
        ])).get()
        #expect(plan.duration == Rational(1) + voiceLength)
        #expect(plan.audioTracks.first?.segments.first?.duration == voiceLength)
    }
}
