import Foundation
import ReelThreadTesting
import Testing
@testable import ReelConsole

/// The dashboard is three plain files in Sources/ReelConsole/Dashboard, embedded in the binary:
/// the console serves exactly those bytes, the script is valid JavaScript (Node's parser), and
/// every element the script looks up exists in the page.
@Suite(.blocking) struct DashboardFilesTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/ReelConsole/Dashboard")

    static func file(_ name: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
    }

    @Test func theConsoleServesTheFilesAsTheyAreInTheRepository() async throws {
        try await ConsoleServerTests.withFarm { farm in
            for (path, name) in [("/", "console.html"), ("/console.css", "console.css"), ("/console.js", "console.js")] {
                let reply = try await farm.http.request("GET", path)
                #expect(reply.status == 200)
                #expect(reply.body == (try Self.file(name)), "\(path) is not \(name) as committed")
            }
        }
    }

    @Test func theScriptParses() throws {
        let path = Self.directory.appendingPathComponent("console.js").path
        let node = ["/usr/bin/node", "/usr/bin/nodejs"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let binary = try #require(node, "the dashboard test needs Node.js to parse console.js: run ops/install-deps.sh (apt-get install nodejs)")
        let (status, errors) = try Self.run([binary, "--check", path])
        #expect(status == 0, "node --check console.js: \(errors)")
    }

    @Test func everyElementTheScriptUsesIsInThePage() throws {
        let script = try Self.file("console.js"), page = try Self.file("console.html")
        let ids = Set(page.matches(of: /\sid="([^"]+)"/).map { String($0.output.1) })
        let lookups = script.matches(of: /\$\("([^"]+)"\)/).map { String($0.output.1) }
        let views = script.matches(of: /for \(const id of \[([^\]]*)\]\)/).flatMap {
            $0.output.1.matches(of: /"([^"]+)"/).map { String($0.output.1) }
        }
        #expect(lookups.count > 20 && views.count == 5, "the script's lookups were not found: \(lookups), \(views)")
        for id in lookups + views { #expect(ids.contains(id), "console.js uses #\(id), which console.html does not have") }
    }

    /// Runs a program (posix_spawn; output to a file) and returns its exit status and stderr.
    static func run(_ arguments: [String]) throws -> (Int32, String) {
        let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("reel-dashboard-\(UUID().uuidString).err").path
        defer { unlink(errPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, arguments[0], &actions, nil, argv, environ) == 0 else {
            throw CocoaError(.executableLoad, userInfo: [NSFilePathErrorKey: arguments[0]])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let exit = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1
        return (exit, (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }
}
