import Foundation

/// A new, empty database on the test PostgreSQL (`REEL_TEST_DATABASE_URL`, set by ops/test.sh),
/// for a `reel render --database URL` of a test's own.
enum FreshDatabase {
    static func url() throws -> String {
        guard let base = ProcessInfo.processInfo.environment["REEL_TEST_DATABASE_URL"], !base.isEmpty else {
            throw Media.Failure(description: "REEL_TEST_DATABASE_URL is not set: run the tests with ops/test.sh")
        }
        let name = "render_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        try Media.run("psql", [base, "-qc", "CREATE DATABASE \(name)"])
        return base.replacingOccurrences(of: #"/[^/?]+(\?|$)"#, with: "/\(name)$1", options: .regularExpression)
    }
}
