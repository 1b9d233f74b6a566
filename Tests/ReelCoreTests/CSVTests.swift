import Testing
@testable import ReelCore
import ReelThreadTesting

/// RFC 4180 CSV as `reel batch` reads its rows and writes `manifest.csv`.
@Suite("CSV", .blocking)
struct CSVTests {
    static func records(_ text: String) throws -> [CSV.Record] { try CSV.records(text).get() }

    @Test func recordsAreSplitAtCommasAndLineBreaksWithTheirLines() throws {
        let r = try Self.records("id,name\n1,Ada\r\n2,Grace\n")
        #expect(r.map(\.fields) == [["id", "name"], ["1", "Ada"], ["2", "Grace"]])
        #expect(r.map(\.line) == [1, 2, 3])
        #expect(r.allSatisfy { $0.problem == nil })
    }

    @Test func quotedFieldsHoldCommasQuotesAndLineBreaks() throws {
        let r = try Self.records("a,b\n\"x, y\",\"say \"\"hi\"\"\"\n\"two\nlines\",z\nlast,\"\"\n")
        #expect(r.map(\.fields) == [["a", "b"], ["x, y", "say \"hi\""], ["two\nlines", "z"], ["last", ""]])
        // The record after a field spanning two lines starts on the line after them.
        #expect(r.map(\.line) == [1, 2, 3, 5])
    }

    @Test func emptyFieldsBlankLinesAndTheLastLineBreak() throws {
        let r = try Self.records("\u{FEFF}a,,c,\n\n  \nx,y,z,w")
        #expect(r.map(\.fields) == [["a", "", "c", ""], ["  "], ["x", "y", "z", "w"]])
        #expect(r.map(\.line) == [1, 3, 4], "the blank line 2 is no record; the byte-order mark is not in the first field")
        #expect(try Self.records("").isEmpty)
        #expect(try Self.records("\r\n\r\n").isEmpty)
        #expect(try Self.records("a\rb\r").map(\.fields) == [["a"], ["b"]], "a lone CR ends a record too")
    }

    @Test func aQuoteInsideAnUnquotedFieldIsTheRecordsProblemOnly() throws {
        let r = try Self.records("a,b\n1,5\"2\n3,4\n")
        #expect(r[1].fields == ["1", "5\"2"])
        #expect(r[1].problem?.hasPrefix("field 2 has a \" inside it but does not start with one") == true, "\(r[1].problem ?? "")")
        #expect(r[2].fields == ["3", "4"] && r[2].problem == nil, "the next record is read as usual")
    }

    @Test func textAfterAClosingQuoteIsTheRecordsProblemOnly() throws {
        let r = try Self.records("\"ab\"c,d\n1,2\n")
        #expect(r[0].fields == ["abc", "d"])
        #expect(r[0].problem?.hasPrefix("field 1 has text after its closing quote") == true, "\(r[0].problem ?? "")")
        #expect(r[1].fields == ["1", "2"] && r[1].problem == nil)
    }

    @Test func aQuoteThatNeverClosesEndsTheReadingAtItsLine() {
        let result = CSV.records("a,b\n1,2\n3,\"open\n4,5\n")
        #expect(throws: CSV.UnclosedQuote(line: 3)) { try result.get() }
        #expect(CSV.UnclosedQuote(line: 3).description.hasPrefix("line 3: a quoted field opens here and is never closed"))
    }

    @Test func writtenFieldsReadBackTheSame() throws {
        let nasty = ["plain", "", "a,b", "say \"hi\"", "two\nlines", "cr\r\nlf", " padded ", "\"", ",", "日本語 👍🏽", "=1+1"]
        let lines = [nasty, nasty.reversed(), ["x"]].map(CSV.line)
        let records = try Self.records(lines.joined(separator: "\r\n") + "\r\n")
        #expect(records.map(\.fields) == [nasty, nasty.reversed(), ["x"]])
        #expect(records.allSatisfy { $0.problem == nil })
        #expect(CSV.field("plain") == "plain" && CSV.field("a,b") == "\"a,b\"" && CSV.field("say \"hi\"") == "\"say \"\"hi\"\"\"")
    }
}
