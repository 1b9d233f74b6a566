import Foundation
import Testing
@testable import ReelConsole
import ReelThreadTesting

/// proto/console-api.yaml is the API's specification: the server registers exactly its routes.
@Suite(.blocking) struct OpenAPIRoutesTests {
    static let specURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("proto/console-api.yaml")

    /// "METHOD /path" for every operation under `paths:` (two-space path keys, four-space methods).
    static func specifiedRoutes() throws -> Set<String> {
        let text = try String(contentsOf: specURL, encoding: .utf8)
        var routes: Set<String> = []
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line == "paths:" { inPaths = true; continue }
            guard inPaths else { continue }
            if !line.isEmpty, !line.hasPrefix(" ") { break }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "),
                      let method = ["get", "put", "post", "delete", "patch"].first(where: { line == "    \($0):" }) {
                routes.insert("\(method.uppercased()) \(path)")
            }
        }
        return routes
    }

    /// The document is a valid OpenAPI 3.1 document (openapi-spec-validator, which
    /// ops/install-deps.sh installs): every `$ref` resolves, every schema is a schema.
    @Test func theDocumentIsValidOpenAPI() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-m", "openapi_spec_validator", Self.specURL.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "openapi-spec-validator (pip install openapi-spec-validator; ops/install-deps.sh does) says:\n\(text)")
        #expect(text.contains("OK"), "\(text)")
    }

    @Test func everyRegisteredRouteIsSpecifiedAndEverySpecifiedRouteIsRegistered() throws {
        let specified = try Self.specifiedRoutes()
        let registered = Set(ConsoleRoutes.all.map { "\($0.method.rawValue) \($0.path)" })
        #expect(specified.count >= 15, "the spec parser found too few routes: \(specified.sorted())")
        #expect(registered.subtracting(specified).isEmpty, "registered but not in proto/console-api.yaml: \(registered.subtracting(specified).sorted())")
        #expect(specified.subtracting(registered).isEmpty, "in proto/console-api.yaml but not served: \(specified.subtracting(registered).sorted())")
        #expect(registered.count == ConsoleRoutes.all.count, "a route is registered twice")
    }

    @Test func onlyTheDashboardAndMetricsAreOpenAndEveryActionNeedsAnOperator() throws {
        for route in ConsoleRoutes.all {
            switch route.access {
            case .open: #expect(!route.path.hasPrefix("/api/"), "\(route.path) is open")
            case .read: #expect(route.path.hasPrefix("/api/v1/") && route.method == .get, "\(route.method) \(route.path) only reads")
            case .act: #expect((route.path.hasPrefix("/api/v1/jobs/{id}/") || route.path == "/api/v1/batches") && route.method != .get)
            }
        }
        // The spec says the same: only the open routes have `security: []`.
        let text = try String(contentsOf: Self.specURL, encoding: .utf8)
        let openInSpec = text.components(separatedBy: "security: []").count - 1
        #expect(openInSpec == ConsoleRoutes.all.filter { $0.access == .open }.count)
    }
}
