import Testing
@testable import ReelCore
import ReelThreadTesting

/// `-o 'out/{{id}}.mp4'`: a path per row, each value one name in it.
@Suite("Batch output pattern", .blocking)
struct OutputPatternTests {
    static func pattern(_ text: String) throws -> OutputPattern { try OutputPattern.parse(text).get() }

    @Test func placeholdersTakeTheRowsValues() throws {
        let p = try Self.pattern("out/{{lang}}/{{ id }}-{{row}}.mp4")
        #expect(p.names == ["lang", "id", "row"])
        let values = ["lang": "fr", "id": "ada", "row": "7"]
        #expect(p.path { values[$0] } == .path("out/fr/ada-7.mp4"))
    }

    @Test(arguments: [
        ("out/{{id}}.mp4", "out"), ("out/{{lang}}/{{id}}.mp4", "out"), ("{{id}}.mp4", "."), ("/srv/renders/{{id}}.mp4", "/srv/renders"),
        ("/{{id}}.mp4", "/"), ("renders/x-{{id}}/a.mp4", "renders"), ("out/fixed.mp4", "out"),
    ])
    func theManifestGoesInTheFolderBeforeTheFirstPlaceholder(_ text: String, _ directory: String) throws {
        #expect(try Self.pattern(text).fixedDirectory == directory)
    }

    @Test(arguments: [
        ("a/b", "\"a/b\" holds a /"), ("", "\"\" is empty"), ("..", "\"..\" names a folder"), (".", "\".\" names a folder"),
        ("a\nb", "\"a\\nb\" holds a control character"),
    ])
    func aValueThatIsNotOneNameIsItsColumnsProblem(_ value: String, _ start: String) throws {
        let result = try Self.pattern("out/{{id}}.mp4").path { $0 == "id" ? value : nil }
        guard case .problems(let problems) = result else { Issue.record("\(result)"); return }
        #expect(problems.count == 1 && problems[0].column == "id")
        #expect(problems[0].message == "\(start), so it cannot go into the output's path (-o out/{{id}}.mp4 uses {{id}}): change the value, or -o")
    }

    @Test func aMissingValueIsItsColumnsProblem() throws {
        let result = try Self.pattern("out/{{id}}.mp4").path { _ in nil }
        #expect(result == .problems([BatchProblem(.rows, column: "id", message: "is missing, and -o out/{{id}}.mp4 uses {{id}}: give it a value")]))
    }

    @Test func malformedPatternsAreRefused() {
        #expect(throws: BatchProblem.self) { try OutputPattern.parse("out/{{id.mp4").get() }
        #expect(throws: BatchProblem.self) { try OutputPattern.parse("out/{{a b}}.mp4").get() }
        #expect(throws: BatchProblem.self) { try OutputPattern.parse("").get() }
        guard case .failure(let problem) = OutputPattern.parse("out/{{}}.mp4") else { Issue.record("accepted"); return }
        #expect(problem.message.contains("with the name of a column or variable, or {{row}}"), "\(problem.message)")
    }

    @Test func plainPathsTellTheSameFileApart() {
        #expect(OutputPattern.plainPath("out/./a.mp4", currentDirectory: "/w") == "/w/out/a.mp4")
        #expect(OutputPattern.plainPath("out//x/../a.mp4", currentDirectory: "/w/") == "/w/out/a.mp4")
        #expect(OutputPattern.plainPath("/abs/a.mp4", currentDirectory: "/w") == "/abs/a.mp4")
        #expect(OutputPattern.plainPath("out/A.mp4", currentDirectory: "/w") != OutputPattern.plainPath("out/a.mp4", currentDirectory: "/w"))
    }
}
