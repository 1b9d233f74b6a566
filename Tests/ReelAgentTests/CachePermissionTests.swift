import Foundation
import ReelProtocol
import Testing
@testable import ReelAgent
import ReelThreadTesting

/// The agent's cache holds the farm's source media: owner-only.
@Suite(.blocking) struct CachePermissionTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        #expect(stat(path, &info) == 0, "\(path) missing")
        return info.st_mode & 0o7777
    }

    @Test func aNewCacheIsCreatedOwnerOnlyAndOldFoldersAreMadePrivate() throws {
        let parent = try RenderFixture.tempDirectory()
        defer { try? FileManager.default.removeItem(at: parent) }
        let fresh = parent.appendingPathComponent("fresh/cache")
        let authenticator = try Authenticator(secret: Array("cache permission tests secret".utf8))
        do {
            let agent = try Agent(configuration: AgentConfiguration(coordinatorHost: "127.0.0.1", coordinatorPort: 1, name: "a", cacheDirectory: fresh),
                                  authenticator: authenticator, logger: testLogger())
            #expect(Self.mode(fresh.path) == 0o700)
            #expect(Self.mode(fresh.appendingPathComponent("assets").path) == 0o700)
            #expect(Self.mode(fresh.appendingPathComponent("work").path) == 0o700)
            #expect(Self.mode(fresh.appendingPathComponent("agent.lock").path) == 0o600)
            _ = agent
        }

        // A cache an older version left world-readable: the folders become private, the
        // existing root (perhaps a volume the operator set up) keeps its mode.
        let old = parent.appendingPathComponent("old")
        for sub in ["", "assets", "work"] {
            try FileManager.default.createDirectory(at: old.appendingPathComponent(sub), withIntermediateDirectories: true)
            chmod(old.appendingPathComponent(sub).path, 0o755)
        }
        let agent = try Agent(configuration: AgentConfiguration(coordinatorHost: "127.0.0.1", coordinatorPort: 1, name: "b", cacheDirectory: old),
                              authenticator: authenticator, logger: testLogger())
        #expect(Self.mode(old.path) == 0o755)
        #expect(Self.mode(old.appendingPathComponent("assets").path) == 0o700)
        #expect(Self.mode(old.appendingPathComponent("work").path) == 0o700)
        _ = agent
    }
}
