import Testing
@testable import ReelCore
import ReelThreadTesting

/// Validation first: every row of a batch checked against the template and the output
/// pattern before anything renders, each problem placed by row, line and column.
@Suite("Batch validation", .blocking)
struct BatchPlanTests {
    /// A card: `name` (required text, at most 12 characters), `ink` (a colour), `size` (a number
    /// 24…120) used as the font size, `photo` (an asset).
    static let card = Template.parse(#"""
        {"formatVersion": 1,
         "variables": {
           "name": {"type": "text", "maxLength": 12},
           "ink": {"type": "color", "default": "#FFFFFF"},
           "size": {"type": "number", "default": 64, "min": 24, "max": 120},
           "photo": {"type": "asset", "default": "still.jpg"}
         },
         "assets": {"photo": {"url": "{{photo}}"}},
         "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "photo", "at": 0, "duration": 2}]}],
         "videoComposition": {"overlays": [{"text": "Hello {{name}}", "fontSize": "{{size}}", "color": "{{ink}}",
                                            "frame": {"x": 0, "y": 0, "width": 100, "height": 50}}]}}
        """#)!

    static func plan(csv: String, output: String = "out/{{name}}.mp4", template: Template = card) -> BatchPlan {
        BatchPlan.make(template: template, rows: BatchRows.parse(Array(csv.utf8), format: .csv), output: try! OutputPattern.parse(output).get(),
                       rowsDirectory: "/data", currentDirectory: "/work")
    }

    static func plan(jsonLines: String, output: String = "out/{{name}}.mp4") -> BatchPlan {
        BatchPlan.make(template: card, rows: BatchRows.parse(Array(jsonLines.utf8), format: .jsonLines), output: try! OutputPattern.parse(output).get(),
                       rowsDirectory: "/data", currentDirectory: "/work")
    }

    static func lines(_ problems: [BatchProblem]) -> [String] {
        problems.map { $0.text(template: "card.json", rows: "rows.csv", outputPattern: "out/{{name}}.mp4") }
    }

    static func valid(_ row: BatchPlan.Row) -> BatchPlan.ValidRow? {
        if case .valid(let v) = row.outcome { return v }
        return nil
    }

    @Test func validRowsGetTheirCompositionOutputAndHash() throws {
        let plan = Self.plan(csv: "name,ink,photo\nAda,#FF0000,ada.jpg\nGrace,#00FF00,/abs/grace.jpg\n")
        #expect(plan.batchProblems.isEmpty && plan.invalidRowCount == 0, "\(Self.lines(plan.batchProblems + plan.rowProblems))")
        #expect(plan.rows.map(\.output) == ["out/Ada.mp4", "out/Grace.mp4"])
        let ada = try #require(Self.valid(plan.rows[0]))
        #expect(ada.fileType == .mp4)
        #expect(ada.resolved.composition.assets["photo"]?.url == "/data/ada.jpg", "a relative asset path is the rows file's folder's")
        #expect(ada.resolved.composition.assets.count == 1)
        #expect(ada.resolved.values["size"] == .number("64"), "a variable without a column takes its default")
        #expect(try #require(Self.valid(plan.rows[1])).resolved.composition.assets["photo"]?.url == "/abs/grace.jpg")
        #expect(ada.valuesSHA256.count == 64 && ada.valuesSHA256 != Self.valid(plan.rows[1])?.valuesSHA256)
    }

    @Test func eachWrongValueIsPlacedByRowLineAndColumn() {
        let plan = Self.plan(csv: "name,ink,size\nAda,#FF0000,72\nGrace,gold,200\n\nAda Lovelace-Byron,#000000,30\nLin,#000000,big\n")
        #expect(plan.batchProblems.isEmpty)
        #expect(Self.lines(plan.rowProblems) == [
            ##"row 2 (rows.csv line 3), column ink: must be a colour "#RRGGBB" or "#RRGGBBAA", like "#FF8800", not "gold""##,
            "row 2 (rows.csv line 3), column size: 200 is above the maximum 120 (max): give at most 120",
            "row 3 (rows.csv line 5), column name: is 18 characters long; at most 12 are allowed (maxLength): shorten it",
            #"row 4 (rows.csv line 6), column size: must be a number, like 42 or -2.5, not "big""#,
        ])
        #expect(plan.invalidRowCount == 3)
        #expect(Self.valid(plan.rows[0]) != nil)
    }

    @Test func theColumnsMustBeVariablesOrUsedByTheOutputs() {
        let plan = Self.plan(csv: "id,nmae,ink\n1,Ada,#FF0000\n", output: "out/{{id}}.mp4")
        #expect(Self.lines(plan.batchProblems) == [
            "rows.csv line 1, column nmae: is not a variable of the template (it declares name, ink, size, photo) and -o does not use it: "
                + "check the name, or remove the column",
            "rows.csv line 1, column name: is missing: the variable name has no default, so every row needs a value: add the column, or declare a default",
        ])
        #expect(plan.rows.isEmpty, "no row is checked while the batch as a whole is wrong")
    }

    @Test func theOutputPatternMustNameColumnsOrVariablesAndAContainer() {
        let unknown = Self.plan(csv: "name\nAda\n", output: "out/{{id}}.mp4")
        #expect(Self.lines(unknown.batchProblems) == [
            "-o out/{{name}}.mp4: {{id}} is neither a column of the rows nor a variable of the template (it declares name, ink, size, photo), "
                + "nor {{row}}: use one of those",
        ])
        let mkv = Self.plan(csv: "name\nAda\n", output: "out/{{name}}.mkv")
        #expect(mkv.batchProblems.count == 1 && mkv.batchProblems[0].source == .outputPattern
                && mkv.batchProblems[0].message.hasPrefix("the output name ends in .mkv; Reel writes .mp4"), "\(mkv.batchProblems)")
        let hls = Self.plan(csv: "name\nAda\n", output: "out/{{name}}/master.m3u8")
        #expect(hls.batchProblems.first?.message.hasPrefix("names an HLS folder, but a batch writes one file per row") == true)
        // An extension that is a value is checked row by row.
        let byRow = Self.plan(csv: "name,ext\nAda,mp4\nGrace,avi\n", output: "out/{{name}}.{{ext}}")
        #expect(byRow.batchProblems.isEmpty && byRow.invalidRowCount == 1)
        #expect(byRow.rowProblems.first?.message.hasPrefix("its output out/Grace.avi: the output name Grace.avi ends in .avi") == true,
                "\(byRow.rowProblems)")
    }

    @Test func rowsThatWouldWriteTheSameFileAreEachInvalid() {
        let plan = Self.plan(csv: "name,ink\nAda,#FF0000\nGrace,#00FF00\nAda,#0000FF\nAda,#000000\n")
        #expect(plan.invalidRowCount == 3)
        #expect(Self.valid(plan.rows[1]) != nil)
        #expect(Self.lines(plan.rowProblems) == [
            "row 1 (rows.csv line 2): its output out/Ada.mp4 is also rows 3 and 4's: every row needs an output of its own; "
                + "put a column that tells them apart into -o, or {{row}}",
            "row 3 (rows.csv line 4): its output out/Ada.mp4 is also rows 1 and 4's: every row needs an output of its own; "
                + "put a column that tells them apart into -o, or {{row}}",
            "row 4 (rows.csv line 5): its output out/Ada.mp4 is also rows 1 and 3's: every row needs an output of its own; "
                + "put a column that tells them apart into -o, or {{row}}",
        ])
        let numbered = Self.plan(csv: "name,ink\nAda,#FF0000\nAda,#0000FF\n", output: "out/{{name}}-{{row}}.mp4")
        #expect(numbered.invalidRowCount == 0 && numbered.rows.map(\.output) == ["out/Ada-1.mp4", "out/Ada-2.mp4"])
    }

    @Test func aCompositionProblemAValueCausesIsPlacedAtItsColumn() {
        // `size` as text: "big" is read as text, then the font size is a string.
        let template = Template.parse(#"""
            {"formatVersion": 1, "variables": {"name": {"type": "text"}, "size": {"type": "text", "default": "64"}},
             "assets": {"a": {"url": "a.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}],
             "videoComposition": {"overlays": [{"text": "{{name}}", "fontSize": "{{size}}", "frame": {"x": 0, "y": 0, "width": 100, "height": 50}}]}}
            """#)!
        let plan = Self.plan(csv: "name,size\nAda,big\n", template: template)
        #expect(plan.rowProblems.count == 1)
        #expect(plan.rowProblems.first?.column == "size")
        #expect(plan.rowProblems.first.map { $0.message.hasPrefix("videoComposition.overlays[0].fontSize: ") && $0.message.hasSuffix("(from {{size}})") } == true,
                "\(plan.rowProblems)")
    }

    @Test func aBrokenTemplateIsOneProblemNotOnePerRow() {
        let template = Template.parse(#"""
            {"formatVersion": 1, "variables": {"name": {"type": "text"}, "spare": {"type": "text", "default": "x"}},
             "assets": {"a": {"url": "a.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0}]}],
             "videoComposition": {"overlays": [{"text": "{{name}} {{nmae}}", "frame": {"x": 0, "y": 0, "width": 100, "height": 50}}]}}
            """#)!
        let plan = Self.plan(csv: "name\nAda\nGrace\n", template: template)
        #expect(Self.lines(plan.batchProblems) == [
            "card.json: videoComposition.overlays[0].text: {{nmae}} is not a declared variable: declare \"nmae\" under variables, "
                + "or use a declared one (it declares name, spare)",
            "card.json: variables.spare: is declared but no string uses {{spare}}: use it, or remove the declaration",
        ])
    }

    @Test func jsonLinesRowsAreCheckedKeyByKey() {
        let plan = Self.plan(jsonLines: """
            {"name": "Ada", "size": 72}
            {"size": 30}
            {"name": "Lin", "nmae": "x", "size": "99"}
            {"name": "Kim", "size": null}
            {"name": "Sam", "size": true}
            """)
        #expect(plan.batchProblems.isEmpty)
        #expect(Self.valid(plan.rows[0])?.resolved.values["size"] == .number("72"))
        #expect(Self.lines(plan.rowProblems) == [
            "row 2 (rows.csv line 2), column name: is missing: the variable has no default, so every row needs a value",
            "row 2 (rows.csv line 2), column name: is missing, and -o out/{{name}}.mp4 uses {{name}}: give it a value",
            "row 3 (rows.csv line 3), column nmae: is not a variable of the template (it declares name, ink, size, photo) and -o does not use it: "
                + "check the name, or remove the column",
            "row 4 (rows.csv line 4), column size: is null: give a value, or leave the key out to take the variable's default",
            "row 5 (rows.csv line 5), column size: must be a number, like 42 or -2.5, not a boolean",
        ])
        #expect(Self.valid(plan.rows[2]) == nil)
    }

    @Test func valuesThatMeanTheSameHashTheSame() {
        let template = Template.parse(#"""
            {"formatVersion": 1, "variables": {"hold": {"type": "duration"}, "ink": {"type": "color"}, "size": {"type": "number"},
               "name": {"type": "text", "default": "x"}},
             "assets": {"a": {"url": "a.mp4"}},
             "tracks": [{"id": 1, "mediaType": "video", "segments": [{"asset": "a", "at": 0, "duration": "{{hold}}"}]}],
             "videoComposition": {"overlays": [{"text": "{{name}}", "color": "{{ink}}", "fontSize": "{{size}}",
               "frame": {"x": 0, "y": 0, "width": 100, "height": 50}}]}}
            """#)!
        let plan = Self.plan(csv: "hold,ink,size,name\n2.5,#ff0000,72,x\n5/2,#FF0000,72.0,x\n2.5,#FF0000,72,\"x\"\n2.5,#FF0000,72,y\n3,#FF0000,72,x\n",
                             output: "out/{{row}}.mp4", template: template)
        let hashes = plan.rows.map { Self.valid($0)?.valuesSHA256 }
        #expect(hashes.allSatisfy { $0 != nil }, "\(Self.lines(plan.rowProblems))")
        #expect(hashes[0] == hashes[1] && hashes[1] == hashes[2], "2.5 s is 5/2 s, #ff0000 is #FF0000, 72 is 72.0")
        #expect(hashes[3] != hashes[0] && hashes[4] != hashes[0] && hashes[3] != hashes[4])
        // A default counts as a value: the same row, the default left out.
        let defaulted = Self.plan(csv: "hold,ink,size\n2.5,#FF0000,72\n", output: "out/{{row}}.mp4", template: template)
        #expect(Self.valid(defaulted.rows[0])?.valuesSHA256 == hashes[0])
    }
}
