import Testing
@testable import ReelCore
import ReelThreadTesting

/// One template problem: a template, the `--set` values given, and exactly the problem lines
/// `reel validate` must print (JSON path, variable, what to fix).
struct TemplateRuleCase: Sendable, CustomTestStringConvertible {
    var name: String
    var json: String
    var sets: [String] = []
    var expected: [String]
    var testDescription: String { name }
}

/// A template over one movie `a` with `variables` and one overlay (a text overlay by default).
private func template(_ variables: String, overlay: String = #"{"text": "{{title}}", "frame": {"x": 0, "y": 0, "width": 100, "height": 50}}"#,
                      assets: String = #"{"a": {"url": "a.mp4"}}"#, extra: String = "") -> String {
    #"""
    {"formatVersion": 1, "variables": \#(variables), "assets": \#(assets),
     "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}],
     "videoComposition": {"overlays": [\#(overlay)]}\#(extra.isEmpty ? "" : ", " + extra)}
    """#
}

private func textOverlay(_ text: String, _ more: String = "") -> String {
    #"{"text": "\#(text)", "frame": {"x": 0, "y": 0, "width": 100, "height": 50}\#(more.isEmpty ? "" : ", " + more)}"#
}

private let title = #"{"title": {"type": "text", "default": "Hi"}}"#

private let templateRuleCases: [TemplateRuleCase] = [
    TemplateRuleCase(name: "valid", json: template(title), expected: []),
    // Placeholders
    TemplateRuleCase(name: "undeclared placeholder", json: template(title, overlay: textOverlay("Hello {{name}}")), expected: [
        #"videoComposition.overlays[0].text: {{name}} is not a declared variable: declare "name" under variables, or use a declared one (it declares title)"#,
        "variables.title: is declared but no string uses {{title}}: use it, or remove the declaration",
    ]),
    TemplateRuleCase(name: "placeholder that is not a name", json: template("{}", overlay: textOverlay("Hi {{ first name }}")), expected: [
        "videoComposition.overlays[0].text: {{first name}} is not a placeholder: write {{name}}, with the name of a declared variable (letters, digits, _ and -)",
    ]),
    TemplateRuleCase(name: "placeholder never closed", json: template("{}", overlay: textOverlay("Hi {{name")), expected: [
        #"videoComposition.overlays[0].text: a "{{" opens a placeholder that is never closed: write {{name}}, with the name of a declared variable"#,
    ]),
    TemplateRuleCase(name: "asset variable inside a longer string",
                     json: template(#"{"title": {"type": "text", "default": "Hi"}, "photo": {"type": "asset", "default": "p.png"}}"#,
                                    assets: #"{"a": {"url": "a.mp4"}, "s": {"url": "media/{{photo}}"}}"#),
                     expected: [
                         #"assets.s.url: {{photo}} is an asset variable, so it must be the whole string, "{{photo}}" (its path is resolved on its own): use a text variable for part of a path"#,
                     ]),
    TemplateRuleCase(name: "unused variable",
                     json: template(#"{"title": {"type": "text", "default": "Hi"}, "extra": {"type": "number", "default": 1}}"#),
                     expected: ["variables.extra: is declared but no string uses {{extra}}: use it, or remove the declaration"]),
    // Values
    TemplateRuleCase(name: "required variable without a value", json: template(#"{"title": {"type": "text"}}"#), expected: [
        "variables.title: has no default, so it needs a value: give one with --set title=…, or declare a default",
    ]),
    TemplateRuleCase(name: "default of the wrong type",
                     json: template(#"{"size": {"type": "number", "default": "ten"}}"#, overlay: textOverlay("x", #""fontSize": "{{size}}""#)),
                     expected: ["variables.size.default: must be a number, like 42 or -2.5, not a string"]),
    TemplateRuleCase(name: "colour default that is not a colour",
                     json: template(#"{"ink": {"type": "color", "default": "red"}}"#, overlay: textOverlay("x", #""color": "{{ink}}""#)),
                     expected: [##"variables.ink.default: must be a colour "#RRGGBB" or "#RRGGBBAA", like "#FF8800", not "red""##]),
    TemplateRuleCase(name: "--set of the wrong type",
                     json: template(#"{"size": {"type": "number", "default": 30}}"#, overlay: textOverlay("x", #""fontSize": "{{size}}""#)),
                     sets: ["size=big"], expected: [#"variables.size: --set size=big: must be a number, like 42 or -2.5, not "big""#]),
    TemplateRuleCase(name: "--set boolean that is not true or false",
                     json: template(#"{"title": {"type": "text", "default": "Hi"}, "fast": {"type": "boolean", "default": false}}"#,
                                    extra: #""export": {"optimizeForNetworkUse": "{{fast}}"}"#),
                     sets: ["fast=yes"], expected: [#"variables.fast: --set fast=yes: must be true or false, not "yes""#]),
    TemplateRuleCase(name: "number above max",
                     json: template(#"{"size": {"type": "number", "default": 30, "min": 8, "max": 200}}"#, overlay: textOverlay("x", #""fontSize": "{{size}}""#)),
                     sets: ["size=300"], expected: ["variables.size: --set size=300: 300 is above the maximum 200 (max): give at most 200"]),
    TemplateRuleCase(name: "number below min",
                     json: template(#"{"size": {"type": "number", "default": 30, "min": 8, "max": 200}}"#, overlay: textOverlay("x", #""fontSize": "{{size}}""#)),
                     sets: ["size=4.5"], expected: ["variables.size: --set size=4.5: 4.5 is below the minimum 8 (min): give at least 8"]),
    TemplateRuleCase(name: "duration above max",
                     json: template(#"{"len": {"type": "duration", "default": 2, "min": 1, "max": "5"}}"#,
                                    overlay: textOverlay("x", #""timeRange": {"start": 0, "duration": "{{len}}"}"#)),
                     sets: ["len=11/2"], expected: ["variables.len: --set len=11/2: 5.5 s is above the maximum 5 s (max): give at most 5 s"]),
    TemplateRuleCase(name: "duration with too many decimals",
                     json: template(#"{"len": {"type": "duration", "default": 2}}"#,
                                    overlay: textOverlay("x", #""timeRange": {"start": 0, "duration": "{{len}}"}"#)),
                     sets: ["len=0.0333333"],
                     expected: [#"variables.len: --set len=0.0333333: time 0.0333333 has more than 6 decimals; write it exactly as "N/D""#]),
    TemplateRuleCase(name: "text too long",
                     json: template(#"{"title": {"type": "text", "default": "Hi", "maxLength": 5}}"#),
                     sets: ["title=Wonderful"],
                     expected: ["variables.title: --set title=Wonderful: is 9 characters long; at most 5 are allowed (maxLength): shorten it"]),
    TemplateRuleCase(name: "text not matching the pattern",
                     json: template(#"{"title": {"type": "text", "default": "AB12", "pattern": "[A-Z]{2}[0-9]{2}"}}"#),
                     sets: ["title=AB123"],
                     expected: [#"variables.title: --set title=AB123: "AB123" does not match the pattern [A-Z]{2}[0-9]{2}: give a value that matches it as a whole"#]),
    TemplateRuleCase(name: "value not in values",
                     json: template(#"{"lang": {"type": "enum", "values": ["en", "fr"], "default": "en"}}"#, overlay: textOverlay("{{lang}}")),
                     sets: ["lang=de"], expected: [#"variables.lang: --set lang=de: must be one of "en", "fr", not "de""#]),
    TemplateRuleCase(name: "--set of an undeclared variable", json: template(title), sets: ["nmae=Ada"], expected: [
        #"variables: --set nmae=Ada: the template has no variable "nmae" (it declares title): check the name, or declare it"#,
    ]),
    TemplateRuleCase(name: "--set twice", json: template(title), sets: ["title=A", "title=B"], expected: [
        "variables.title: --set title is given more than once: give each variable one value",
    ]),
    // Declarations
    TemplateRuleCase(name: "variables not an object", json: template("[]", overlay: textOverlay("plain")), expected: [
        #"variables: must be an object mapping variable names to {"type": …}, not an array"#,
    ]),
    TemplateRuleCase(name: "unknown type", json: template(#"{"title": {"type": "string"}}"#), expected: [
        #"variables.title.type: must be one of "text", "number", "color", "asset", "duration", "boolean", "enum", not "string""#,
    ]),
    TemplateRuleCase(name: "unknown key in a declaration", json: template(#"{"title": {"type": "text", "default": "x", "maxlength": 3}}"#), expected: [
        "variables.title.maxlength: unknown key; expected one of: type, default, description, min, max, maxLength, pattern, values",
    ]),
    TemplateRuleCase(name: "name that cannot be a placeholder",
                     json: template(#"{"title": {"type": "text", "default": "x"}, "first name": {"type": "text", "default": "y"}}"#), expected: [
        #"variables.first name: "first name" cannot be a variable name: use letters, digits, _ and -, starting with a letter or _ (like first_name)"#,
    ]),
    TemplateRuleCase(name: "min on a text variable", json: template(#"{"title": {"type": "text", "default": "x", "min": 1}}"#), expected: [
        "variables.title.min: only number and duration variables have min; this one is text: remove it",
    ]),
    TemplateRuleCase(name: "maxLength on a number variable",
                     json: template(#"{"size": {"type": "number", "default": 30, "maxLength": 3}}"#, overlay: textOverlay("x", #""fontSize": "{{size}}""#)),
                     expected: ["variables.size.maxLength: only text variables have maxLength; this one is number: remove it"]),
    TemplateRuleCase(name: "values on a text variable", json: template(#"{"title": {"type": "text", "default": "x", "values": ["x"]}}"#), expected: [
        "variables.title.values: only enum variables have values; this one is text: remove it",
    ]),
    TemplateRuleCase(name: "enum without values", json: template(#"{"title": {"type": "enum", "default": "x"}}"#), expected: [
        #"variables.title.values: is required for an enum variable: list the allowed strings, like ["en", "fr"]"#,
    ]),
    TemplateRuleCase(name: "enum value listed twice", json: template(#"{"title": {"type": "enum", "values": ["a", "b", "a"], "default": "a"}}"#), expected: [
        #"variables.title.values[2]: "a" is listed twice: list each value once"#,
    ]),
    TemplateRuleCase(name: "max below min",
                     json: template(#"{"size": {"type": "number", "default": 30, "min": 10, "max": 5}}"#, overlay: textOverlay("x", #""fontSize": "{{size}}""#)),
                     expected: [
                         "variables.size.max: is below min (10): make max at least min",
                         "variables.size.default: 30 is above the maximum 5 (max): give at most 5",
                     ]),
    TemplateRuleCase(name: "maxLength below 1", json: template(#"{"title": {"type": "text", "default": "x", "maxLength": 0}}"#), expected: [
        "variables.title.maxLength: must be at least 1, not 0",
    ]),
    // The composition's own checks, naming the variable the value came from.
    TemplateRuleCase(name: "text value where a number belongs",
                     json: template(title, overlay: textOverlay("x", #""fontSize": "{{title}}""#)),
                     expected: ["videoComposition.overlays[0].fontSize: must be a number, not a string (from {{title}})"]),
    TemplateRuleCase(name: "interpolated text where a colour belongs",
                     json: template(title, overlay: textOverlay("x", ##""color": "#{{title}}""##)),
                     expected: [##"videoComposition.overlays[0].color: must be a colour "#RRGGBB" or "#RRGGBBAA", not "#Hi" (from {{title}})"##]),
]

@Suite("Template validation", .blocking)
struct TemplateValidationTests {
    static func problems(_ json: String, sets: [String] = []) throws -> [String] {
        let template = try #require(Template.parse(json), "not read as a template")
        let assignments = sets.compactMap(VariableAssignment.init(parsing:))
        switch template.resolve(assignments, currentDirectory: "/work") {
        case .success: return []
        case .failure(let error): return error.problems.map(\.description)
        }
    }

    @Test(arguments: templateRuleCases)
    func eachProblemIsNamedByVariableAndPath(_ rule: TemplateRuleCase) throws {
        #expect(try Self.problems(rule.json, sets: rule.sets) == rule.expected)
    }

    @Test func aPatternThatIsNotARegularExpressionIsReported() throws {
        let problems = try Self.problems(template(#"{"title": {"type": "text", "default": "x", "pattern": "([a-z"}}"#))
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("variables.title.pattern: is not a regular expression Reel can read (") == true, "\(problems)")
        #expect(problems.first?.hasSuffix("): fix its syntax") == true, "\(problems)")
    }

    @Test func everyProblemIsListedInOneRun() throws {
        let json = template(#"{"title": {"type": "text", "maxLength": 3}, "size": {"type": "number", "default": 40}, "spare": {"type": "boolean", "default": true}}"#,
                            overlay: textOverlay("{{title}} {{who}}", #""fontSize": "{{size}}", "opacity": "half""#))
        #expect(try Self.problems(json, sets: ["title=Long", "size=x"]) == [
            "variables.title: --set title=Long: is 4 characters long; at most 3 are allowed (maxLength): shorten it",
            #"variables.size: --set size=x: must be a number, like 42 or -2.5, not "x""#,
            #"videoComposition.overlays[0].text: {{who}} is not a declared variable: declare "who" under variables, or use a declared one (it declares title, size, spare)"#,
            "variables.spare: is declared but no string uses {{spare}}: use it, or remove the declaration",
            "videoComposition.overlays[0].opacity: must be a number, not a string",
        ])
    }

    /// Where only a plain composition can be read, a template is told apart from a typo.
    @Test func aTemplateReadAsACompositionIsNamedAsOne() {
        #expect(throws: CompositionError(problems: [
            Problem(path: "variables", message: "this file is a template (docs/templates.md): reel render, validate and thumbnail read it, "
                    + "with --set name=value for its variables; this command reads plain compositions only"),
            Problem(path: "exprot", message: "unknown key; expected one of: formatVersion, assets, tracks, audioMix, videoComposition, export"),
        ])) {
            try Composition.parse(template(title, extra: #""exprot": {}"#))
        }
    }

    /// A composition without `variables` is not a template: it is read as before, placeholders
    /// and all (a literal "{{" in a caption stays text).
    @Test func aCompositionWithoutVariablesIsNotATemplate() throws {
        let plain = #"{"formatVersion": 1, "assets": {"a": {"url": "a.mp4"}}, "tracks": [], "videoComposition": {"overlays": [\#(textOverlay("{{title}}"))]}}"#
        #expect(Template.parse(plain) == nil)
        #expect(Template.parse("{not json") == nil)
        #expect(Template.parse("[1]") == nil)
        let composition = try Composition.parse(plain)
        #expect(composition.videoComposition?.overlays.first?.content == .text(OverlayText(text: "{{title}}", font: "sans-serif", fontSize: 32, color: .white)))
    }
}
