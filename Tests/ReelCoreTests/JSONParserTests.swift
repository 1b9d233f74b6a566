import Testing
@testable import ReelCore
import ReelThreadTesting

@Suite("JSON parser", .blocking)
struct JSONParserTests {
    private func syntaxError(_ text: String) -> JSONSyntaxError? {
        do { _ = try JSONParser.parse(text); return nil } catch { return error }
    }

    @Test func keepsKeyOrderAndNumberText() throws {
        let value = try JSONParser.parse(#"{"z": 1.50, "a": [true, false, null], "m": -0.000001, "e": 1E+3}"#)
        guard case .object(let o) = value else { Issue.record("not an object"); return }
        #expect(o.keys == ["z", "a", "m", "e"])
        #expect(o["z"] == .number("1.50"))
        #expect(o["m"] == .number("-0.000001"))
        #expect(o["e"] == .number("1E+3"))
        #expect(o["a"] == .array([.bool(true), .bool(false), .null]))
        #expect(o["missing"] == nil)
    }

    @Test func decodesEscapes() throws {
        let value = try JSONParser.parse(#""q\" b\\ s\/ \b\f\n\r\t é=\u00e9 水=\u6c34 😀=\ud83d\ude00 \u0000""#)
        #expect(value == .string("q\" b\\ s/ \u{08}\u{0C}\n\r\t é=é 水=水 😀=😀 \u{0}"))
    }

    @Test func rawUTF8PassesThrough() throws {
        #expect(try JSONParser.parse("\"加点水印\"") == .string("加点水印"))
    }

    @Test func skipsByteOrderMark() throws {
        #expect(try JSONParser.parse([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)) == .array([.number("1")]))
    }

    @Test(arguments: [
        // input, line, column, message
        ("{\n  \"a\": 1,\n}", 3, 1, "unexpected '}', expected a string key"),
        (#"{"a":1,"a":2}"#, 1, 8, #"duplicate key "a""#),
        ("[1, 2", 1, 6, "unexpected end of input, expected ',' or ']'"),
        ("[01]", 1, 3, "leading zeros are not allowed in numbers"),
        ("[1.]", 1, 4, "expected a digit after '.'"),
        ("[-]", 1, 3, "expected a digit"),
        ("[1e]", 1, 4, "expected a digit in the exponent"),
        ("\"a\tb\"", 1, 3, "control character U+0009 must be escaped in a string"),
        (#""\ud83d""#, 1, 2, #"unpaired high surrogate \uD83D"#),
        (#""\ude00""#, 1, 2, #"unpaired low surrogate \uDE00"#),
        (#""\ud83d\u0041""#, 1, 2, #"high surrogate \uD83D not followed by a low surrogate"#),
        (#""\x""#, 1, 2, #"invalid escape sequence '\x'"#),
        (#""\u12G4""#, 1, 6, #"expected 4 hex digits after \u"#),
        ("\"abc", 1, 5, "unterminated string"),
        ("{\"a\" 1}", 1, 6, "unexpected '1', expected ':'"),
        ("[1] x", 1, 5, "unexpected 'x' after the document"),
        ("", 1, 1, "unexpected end of input, expected a value"),
        ("tru", 1, 1, "unexpected 't', expected a value"),
        ("// c\n{}", 1, 1, "unexpected '/', expected a value"),
        ("[1,]", 1, 4, "unexpected ']', expected a value"),
        ("{\"水\": 1 2}", 1, 9, "unexpected '2', expected ',' or '}'"),
    ])
    func reportsErrorsWithPosition(_ input: String, _ line: Int, _ column: Int, _ message: String) {
        let error = syntaxError(input)
        #expect(error == JSONSyntaxError(line: line, column: column, message: message))
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONSyntaxError(line: 1, column: 3, message: "invalid UTF-8 in string")) {
            try JSONParser.parse([0x22, 0x61, 0xFF, 0x22])
        }
    }

    @Test func limitsNesting() {
        let deep = String(repeating: "[", count: JSONParser.maximumDepth + 1) + String(repeating: "]", count: JSONParser.maximumDepth + 1)
        #expect(syntaxError(deep)?.message == "nesting deeper than \(JSONParser.maximumDepth) levels")
        let ok = String(repeating: "[", count: JSONParser.maximumDepth) + String(repeating: "]", count: JSONParser.maximumDepth)
        #expect(syntaxError(ok) == nil)
    }

    @Test func describesAsLineColon() {
        #expect(JSONSyntaxError(line: 3, column: 7, message: "m").description == "3:7: m")
    }
}
