import Testing
@testable import ReelCore
import ReelThreadTesting

/// The rows of a batch: CSV with a header, or JSON Lines; each row's number and line, its cells
/// as written, and what is wrong with a row or with the file.
@Suite("Batch rows", .blocking)
struct BatchRowsTests {
    static func csv(_ text: String) -> BatchRows { BatchRows.parse(Array(text.utf8), format: .csv) }
    static func jsonLines(_ text: String) -> BatchRows { BatchRows.parse(Array(text.utf8), format: .jsonLines) }

    @Test func theFormatIsTheExtensions() {
        #expect(BatchRows.Format(path: "data/rows.csv") == .csv)
        #expect(BatchRows.Format(path: "ROWS.CSV") == .csv)
        #expect(BatchRows.Format(path: "rows.jsonl") == .jsonLines)
        #expect(BatchRows.Format(path: "rows.ndjson") == .jsonLines)
        #expect(BatchRows.Format(path: "rows.json") == nil)
        #expect(BatchRows.Format(path: "rows") == nil)
        #expect(BatchRows.Format(path: "my.dir/rows") == nil)
    }

    @Test func csvRowsAreNumberedFromTheFirstAfterTheHeader() {
        let t = Self.csv(" name , ink\nAda,#FF0000\n\n\"Hopper, Grace\",#0000FF\n")
        #expect(t.fileProblems.isEmpty)
        #expect(t.columns == ["name", "ink"], "headings are trimmed")
        #expect(t.headerLine == 1)
        #expect(t.rows.map(\.number) == [1, 2] && t.rows.map(\.line) == [2, 4])
        #expect(t.rows[1].cell("name") == .text("Hopper, Grace") && t.rows[1].cell("ink") == .text("#0000FF"))
    }

    @Test func aCSVRowWithAnotherNumberOfFieldsIsThatRowsProblem() {
        let t = Self.csv("name,ink\nAda\nGrace,#000000,extra\nLin,#FFFFFF\n")
        #expect(t.fileProblems.isEmpty)
        #expect(t.rows[0].problem?.hasPrefix("has 1 field but the header has 2 columns") == true, "\(t.rows[0].problem ?? "")")
        #expect(t.rows[1].problem?.hasPrefix("has 3 fields but the header has 2 columns") == true)
        #expect(t.rows[2].problem == nil)
    }

    @Test func problemsOfTheCSVFileAsAWhole() {
        #expect(Self.csv("").fileProblems.map(\.message) == ["is empty: write a header row of variable names, then one row per render"])
        #expect(Self.csv("name,ink\n").fileProblems.map(\.message) == ["has a header but no rows: add one row per render below it"])
        let repeated = Self.csv("name,ink,name\na,b,c\n").fileProblems
        #expect(repeated == [BatchProblem(.rows, line: 1, column: "name", message: "is the heading of two columns: give each column its own")])
        #expect(Self.csv("name,,ink\na,b,c\n").fileProblems.first?.message.hasPrefix("the header's column 2 has no name") == true)
        let unclosed = Self.csv("name\n\"Ada\nGrace\n").fileProblems
        #expect(unclosed.count == 1 && unclosed[0].line == 2 && unclosed[0].message.hasPrefix("a quoted field opens here and is never closed"))
        #expect(BatchRows.parse([0x6E, 0xFF, 0x0A], format: .csv).fileProblems.first?.message.hasPrefix("is not UTF-8 text") == true)
    }

    @Test func jsonLinesKeepTypedValuesAndStringsAsText() {
        let t = Self.jsonLines("{\"name\": \"Ada\", \"size\": 72, \"bold\": true}\n\n{\"name\": \"Grace\", \"id\": \"g\"}\r\n")
        #expect(t.fileProblems.isEmpty)
        #expect(t.columns == ["name", "size", "bold", "id"])
        #expect(t.rows.map(\.number) == [1, 2] && t.rows.map(\.line) == [1, 3])
        #expect(t.rows[0].cell("name") == .text("Ada"))
        #expect(t.rows[0].cell("size") == .json(.number("72")) && t.rows[0].cell("size")?.text == "72")
        #expect(t.rows[0].cell("bold") == .json(.bool(true)) && t.rows[0].cell("bold")?.text == "true")
        #expect(t.rows[1].cell("size") == nil && t.rows[1].cell("id") == .text("g"))
    }

    @Test func aJSONLineThatIsNoObjectIsThatRowsProblem() {
        let t = Self.jsonLines("{\"name\": \"Ada\"}\n[1, 2]\n{\"name\": \"Grace\",}\n{\"name\": \"Lin\"}\n")
        #expect(t.rows.count == 4)
        #expect(t.rows[1].problem?.hasPrefix("is an array, not a JSON object") == true, "\(t.rows[1].problem ?? "")")
        #expect(t.rows[2].problem?.hasPrefix("is not a JSON object on one line (character ") == true, "\(t.rows[2].problem ?? "")")
        #expect(t.rows[3].problem == nil && t.rows[3].line == 4)
        #expect(Self.jsonLines("\n \n").fileProblems.map(\.message) == ["has no rows: write one JSON object per line, one line per render"])
    }
}
