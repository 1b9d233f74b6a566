import Foundation

/// A new, empty database on the test PostgreSQL (`REEL_TEST_DATABASE_URL`, set by ops/test.sh),
/// for a farm's coordinator or a `reel render --database URL` of a test's own.
///
/// The one place the integration tests read `REEL_TEST_DATABASE_URL`: without it a test that
/// needs a database fails with the reason, never passes by returning early.
enum FreshDatabase {
    /// - Parameters:
    ///   - server: the PostgreSQL to create it in (default: `REEL_TEST_DATABASE_URL`); a test
    ///     that restarts PostgreSQL passes its own cluster.
    ///   - prefix: the start of the database's random name (`render_…`, `farm_…`).
    static func url(server: String? = nil, prefix: String = "render") throws -> String {
        guard let base = server ?? ProcessInfo.processInfo.environment["REEL_TEST_DATABASE_URL"], !base.isEmpty else {
            throw Media.Failure(description: "REEL_TEST_DATABASE_URL is not set: run the tests with ops/test.sh")
        }
        let name = "\(prefix)_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        try Media.run("psql", [base, "-qc", "CREATE DATABASE \(name)"])
        return base.replacingOccurrences(of: #"/[^/?]+(\?|$)"#, with: "/\(name)$1", options: .regularExpression)
    }
}
