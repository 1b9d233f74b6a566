import Testing
@testable import ReelCore
import ReelThreadTesting

/// `--set name=value`: split at the first `=`, then read by the variable's declared type.
@Suite("Variable assignments (--set)", .blocking)
struct VariableAssignmentTests {
    @Test(arguments: [
        ("name=Ada", "name", "Ada"),
        ("title=a=b", "title", "a=b"),
        ("flag=", "flag", ""),
        ("caption=Hello, world!", "caption", "Hello, world!"),
    ])
    func nameAndValueSplitAtTheFirstEquals(_ text: String, _ name: String, _ value: String) {
        #expect(VariableAssignment(parsing: text) == VariableAssignment(name: name, value: value))
        #expect(VariableAssignment(parsing: text)?.description == text)
    }

    @Test(arguments: ["name", "=Ada", ""])
    func withoutANameThereIsNoAssignment(_ text: String) {
        #expect(VariableAssignment(parsing: text) == nil)
    }

    static func read(_ type: VariableType, _ text: String, values: [String]? = nil) -> Result<JSONValue, VariableTextError> {
        VariableDeclaration(name: "v", type: type, values: values).value(fromText: text, currentDirectory: "/home/me/work")
    }

    @Test(arguments: [
        (VariableType.text, "Ada Lovelace", JSONValue.string("Ada Lovelace")),
        (.text, "42", .string("42")),
        (.number, "42", .number("42")),
        (.number, "-2.5", .number("-2.5")),
        (.number, "1e3", .number("1e3")),
        (.boolean, "true", .bool(true)),
        (.boolean, "false", .bool(false)),
        (.color, "#FF8800", .string("#FF8800")),
        (.duration, "2.5", .number("2.5")),
        (.duration, "7", .number("7")),
        (.duration, "1001/30000", .string("1001/30000")),
        (.asset, "ada.jpg", .string("/home/me/work/ada.jpg")),
        (.asset, "./photos/ada.jpg", .string("/home/me/work/photos/ada.jpg")),
        (.asset, "../ada.jpg", .string("/home/me/work/../ada.jpg")),
        (.asset, "/srv/media/ada.jpg", .string("/srv/media/ada.jpg")),
        (.asset, "https://example.com/ada.jpg", .string("https://example.com/ada.jpg")),
        (.asset, "file:///srv/ada.jpg", .string("file:///srv/ada.jpg")),
        (.enum, "fr", .string("fr")),
    ])
    func valuesAreReadByTheirDeclaredType(_ type: VariableType, _ text: String, _ expected: JSONValue) throws {
        #expect(try Self.read(type, text).get() == expected)
    }

    @Test(arguments: [
        (VariableType.number, "ten", #"must be a number, like 42 or -2.5, not "ten""#),
        (.number, ".5", #"must be a number, like 42 or -2.5, not ".5""#),
        (.number, "1,5", #"must be a number, like 42 or -2.5, not "1,5""#),
        (.number, "", #"must be a number, like 42 or -2.5, not """#),
        (.boolean, "yes", #"must be true or false, not "yes""#),
        (.boolean, "True", #"must be true or false, not "True""#),
        (.duration, "2s", #"must be a time in seconds, like 2.5 or 1001/30000, not "2s""#),
        (.asset, "", "must not be empty: give a media file's path or URL"),
    ])
    func unreadableValuesSayWhatToWrite(_ type: VariableType, _ text: String, _ message: String) {
        #expect(Self.read(type, text) == .failure(VariableTextError(message)))
    }

    /// What reads as the right type still meets the type's rules and the declaration's
    /// constraints (the same checks as a default in the file).
    @Test(arguments: [
        (VariableDeclaration(name: "v", type: .color), "#F80", ##"must be a colour "#RRGGBB" or "#RRGGBBAA", like "#FF8800", not "#F80""##),
        (VariableDeclaration(name: "v", type: .color), "red", ##"must be a colour "#RRGGBB" or "#RRGGBBAA", like "#FF8800", not "red""##),
        (VariableDeclaration(name: "v", type: .duration), "1/0", #"time "1/0" has a zero denominator"#),
        (VariableDeclaration(name: "v", type: .duration), "1e-3", #"write times without an exponent: a decimal number of seconds or "N/D""#),
        (VariableDeclaration(name: "v", type: .number), "2e9", "number 2e9 is out of range (at most ±1000000000)"),
        (VariableDeclaration(name: "v", type: .enum, values: ["en", "fr"]), "EN", #"must be one of "en", "fr", not "EN""#),
        (VariableDeclaration(name: "v", type: .duration, min: .time(Rational(1, 2))), "1/4",
         "0.25 s is below the minimum 0.5 s (min): give at least 0.5 s"),
        (VariableDeclaration(name: "v", type: .text, pattern: "[a-z]+"), "abc1",
         #""abc1" does not match the pattern [a-z]+: give a value that matches it as a whole"#),
        (VariableDeclaration(name: "v", type: .text, maxLength: 2), "日本語", "is 3 characters long; at most 2 are allowed (maxLength): shorten it"),
    ])
    func readValuesAreCheckedLikeDefaults(_ declaration: VariableDeclaration, _ text: String, _ message: String) throws {
        let value = try declaration.value(fromText: text, currentDirectory: "/").get()
        #expect(declaration.problems(of: value) == [message])
    }

    @Test func goodValuesHaveNoProblems() throws {
        let checks: [(VariableDeclaration, String)] = [
            (VariableDeclaration(name: "v", type: .text, maxLength: 3, pattern: "[a-z]+"), "abc"),
            (VariableDeclaration(name: "v", type: .number, min: .number(0), max: .number(10)), "10"),
            (VariableDeclaration(name: "v", type: .duration, min: .time(.zero), max: .time(Rational(5))), "1001/30000"),
            (VariableDeclaration(name: "v", type: .color), "#ff880080"),
        ]
        for (declaration, text) in checks {
            let value = try declaration.value(fromText: text, currentDirectory: "/").get()
            #expect(declaration.problems(of: value).isEmpty, "\(declaration.type) \(text)")
        }
    }
}
