import Foundation
import ReelThreadTesting
import Testing

/// The rules that keep the test process's shared resources free for the tests that need them:
/// every suite with a synchronous test is `@Suite(.blocking)` (see `BlockingSuite`), and every
/// suite whose tests use the test PostgreSQL is `@Suite(.database)` (see `DatabaseSuite`).
///
/// Why it is a test: Swift Testing starts every test of the run at once, and runs synchronous
/// test bodies on the cooperative pool, which has as many threads as the machine has cores
/// (two on CI). In CI runs, pure synchronous tests that take a second or more in a debug build
/// (content keys, chunk-planner properties, exact-time sums, the true-peak limiter) held both
/// threads for the run's first 30–40 s, one after another, and every async test waited behind
/// them: the protocol's loopback tests, whose server answered on time on its own event loop,
/// saw nothing for 20 s and failed. Moving those suites off the pool fixed it; this keeps a
/// new synchronous suite from bringing it back.
///
/// The check reads the test sources line by line: each `@Test` belongs to the type declared
/// last at column 0 above it (an `extension` to the type it extends), and its `func` is
/// synchronous when its signature has no `async`.
@Suite(.blocking) struct TestPoolRuleTests {
    struct Declaration {
        var attributes: String
        var kind: String
        var name: String
    }

    struct TestFunction {
        var file: String
        var line: Int
        var name: String
        var isSynchronous: Bool
        var owner: Declaration?
    }

    static let testsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    /// Declarations at column 0 and the tests below each, from one file's text.
    static func scan(_ text: String, file: String) -> (declarations: [Declaration], tests: [TestFunction]) {
        let lines = text.components(separatedBy: "\n")
        let declaration = /^((?:@\w+(?:\(.*\))?\s+)*)(?:(?:public|private|fileprivate|internal|final)\s+)*(struct|class|enum|extension|actor)\s+(\w+)/
        var declarations: [Declaration] = []
        var tests: [TestFunction] = []
        var pendingAttributes = ""
        for (index, line) in lines.enumerated() {
            if line.hasPrefix("@"), (try? declaration.prefixMatch(in: line)) == nil {
                pendingAttributes += line + " "  // an attribute on a line of its own
                continue
            }
            if let match = try? declaration.prefixMatch(in: line) {
                declarations.append(Declaration(attributes: pendingAttributes + match.1, kind: String(match.2), name: String(match.3)))
                pendingAttributes = ""
                continue
            }
            if !line.hasPrefix(" ") { pendingAttributes = "" }
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("@Test") else { continue }
            // The signature: from the `func` at or after the attribute up to its body's brace.
            var signature = "", funcName = "", seenFunc = false
            for next in lines[index...] {
                if !seenFunc, let range = next.range(of: "func ") {
                    seenFunc = true
                    funcName = String(next[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                    signature = String(next[range.lowerBound...])
                } else if seenFunc {
                    signature += " " + next
                }
                if seenFunc, let brace = signature.firstIndex(of: "{") {
                    signature = String(signature[..<brace])
                    break
                }
            }
            tests.append(TestFunction(file: file, line: index + 1, name: funcName,
                                      isSynchronous: !signature.contains(" async"), owner: declarations.last))
        }
        return (declarations, tests)
    }

    static func sources() throws -> [(path: String, text: String)] {
        let enumerator = FileManager.default.enumerator(atPath: testsDirectory.path)
        var files: [(String, String)] = []
        while let relative = enumerator?.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            files.append((relative, try String(contentsOf: testsDirectory.appendingPathComponent(relative), encoding: .utf8)))
        }
        return files
    }

    /// The tests `include` selects whose suite's attributes lack `trait`, as "file:line name".
    static func offenders(in files: [(path: String, text: String)], lacking trait: String = ".blocking",
                          include: (TestFunction, String) -> Bool = { test, _ in test.isSynchronous }) -> [String] {
        let scanned = files.map { scan($0.text, file: $0.path) }
        var declared: [String: Declaration] = [:]
        for declaration in scanned.flatMap(\.declarations) where declaration.kind != "extension" {
            declared[declaration.name] = declaration
        }
        return zip(files, scanned).flatMap { file, scan in scan.tests.filter { include($0, file.text) } }.compactMap { test in
            guard let owner = test.owner else { return "\(test.file):\(test.line) \(test.name) (outside any type)" }
            let suite = owner.kind == "extension" ? declared[owner.name] : owner
            return suite?.attributes.contains(trait) == true ? nil : "\(test.file):\(test.line) \(test.name)"
        }
    }

    /// What a test file mentions when its tests use the test PostgreSQL (see `DatabaseSuite`).
    static let databaseUses = ["TestDatabase", "CoordinatorHarness", "withCoordinator(", "FreshDatabase", "REEL_TEST_DATABASE_URL"]
    static let ownFile = URL(fileURLWithPath: #filePath).lastPathComponent

    /// The tests in files that use the database whose suite is not `.database`.
    static func databaseOffenders(in files: [(path: String, text: String)]) -> [String] {
        offenders(in: files, lacking: ".database") { test, text in
            !test.file.hasSuffix(ownFile) && databaseUses.contains { text.contains($0) }
        }
    }

    @Test func everySuiteWithASynchronousTestRunsOffTheCooperativePool() throws {
        let files = try Self.sources()
        let scanned = files.map { Self.scan($0.text, file: $0.path) }
        // The scan sees the tests: hundreds, most of them synchronous, in every test target.
        let tests = scanned.flatMap(\.tests)
        #expect(tests.count > 500 && tests.filter(\.isSynchronous).count > 300, "found \(tests.count) tests")
        #expect(Set(files.map { $0.path.prefix { $0 != "/" } }).isSuperset(of: ["ReelCoreTests", "ReelAgentTests", "ReelProtocolTests"]))
        let offenders = Self.offenders(in: files)
        #expect(offenders.isEmpty, "add .blocking to these tests' @Suite:\n\(offenders.joined(separator: "\n"))")
    }

    /// The database rule (see `DatabaseSuite`): tests in a file that uses the test PostgreSQL
    /// run in `.database` suites, so that no more of them run at once than the server takes.
    @Test func everySuiteThatUsesTheDatabaseWaitsAtItsGate() throws {
        let files = try Self.sources()
        let users = files.filter { file in Self.databaseUses.contains { file.text.contains($0) } }
        #expect(users.count > 25, "found \(users.count) files that use the database")
        let offenders = Self.databaseOffenders(in: files)
        #expect(offenders.isEmpty, "add .database to these tests' @Suite:\n\(offenders.joined(separator: "\n"))")
    }

    @Test func theScanTellsSynchronousTestsAndTheirSuites() {
        let text = """
        import Testing

        @Suite("pure", .blocking) struct A {
            @Test func one() throws {}
            @Test(arguments: [1, 2])
            func two(x: Int) async throws {}
        }

        @Suite struct B {
            @Test func three() {
            }
        }

        @Suite(.serialized)
        final class C {
            @Test
            func four() async {}
        }

        extension B {
            @Test func five() async throws {}
            @Test func six() {}
        }
        """
        let (declarations, tests) = Self.scan(text, file: "X.swift")
        #expect(declarations.map(\.name) == ["A", "B", "C", "B"])
        #expect(declarations[2].attributes.contains(".serialized"))
        #expect(tests.map(\.name) == ["one", "two", "three", "four", "five", "six"])
        #expect(tests.map(\.isSynchronous) == [true, false, true, false, false, true])
        #expect(tests.map { $0.owner?.name } == ["A", "A", "B", "C", "B", "B"])
        #expect(Self.offenders(in: [("X.swift", text)]) == ["X.swift:10 three", "X.swift:22 six"])
        let database = text.replacingOccurrences(of: "@Suite struct B", with: "@Suite(.database) struct B") + "\n// TestDatabase.Schema()"
        #expect(Self.databaseOffenders(in: [("Y.swift", database)]) == ["Y.swift:4 one", "Y.swift:5 two", "Y.swift:16 four"])
        #expect(Self.databaseOffenders(in: [("Z.swift", text)]).isEmpty, "a file that does not use the database")
    }
}
