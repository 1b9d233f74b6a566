import Foundation
import Testing
@testable import ReelCoordinator
import ReelThreadTesting

/// The coordinator's storage holds the farm's media: folders 0700, files 0600.
@Suite(.blocking) struct StoragePermissionTests {
    static func mode(_ path: String) -> mode_t {
        var info = stat()
        #expect(stat(path, &info) == 0, "\(path) missing")
        return info.st_mode & 0o7777
    }

    static func tempRoot() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-storage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    @Test func preparedStorageIsOwnerOnlyAndItsFilesAre0600() async throws {
        let parent = try Self.tempRoot()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let storage = CoordinatorStorage(root: parent + "/new/storage")
        try storage.prepare()
        #expect(Self.mode(storage.root) == 0o700)
        for folder in CoordinatorStorage.folders { #expect(Self.mode(storage.root + "/" + folder) == 0o700, "\(folder)") }

        // A partial upload, the completed asset and a stored result are all 0600.
        let hello = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"      // SHA-256("hello")
        let helloWorld = "936a185caaa266bb9cbe981e9e05cb78cd732b0b3280eb944412bb6f8f8f07af" // SHA-256("helloworld")
        #expect(try storage.put(hash: helloWorld, offset: 0, total: 10, bytes: Array("hello".utf8)) == (5, false))
        #expect(Self.mode(storage.partialAssetPath(helloWorld)) == 0o600)
        #expect(try storage.put(hash: helloWorld, offset: 5, total: 10, bytes: Array("world".utf8)) == (10, true))
        #expect(Self.mode(storage.assetPath(helloWorld)) == 0o600)
        let result = try await storage.storeResult(Array("hello".utf8), sha256: hello)
        #expect(result == storage.resultPath(hello))
        #expect(Self.mode(result) == 0o600)
        #expect(Self.mode((result as NSString).deletingLastPathComponent) == 0o700)
    }

    @Test func foldersAnOlderVersionLeftOpenAreMadePrivate() throws {
        let root = try Self.tempRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        for folder in CoordinatorStorage.folders {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
            chmod(root + "/" + folder, 0o755)
        }
        chmod(root, 0o755)
        try CoordinatorStorage(root: root).prepare()
        for folder in CoordinatorStorage.folders { #expect(Self.mode(root + "/" + folder) == 0o700, "\(folder)") }
        // An existing root (a mount point, a systemd StateDirectory) keeps its mode.
        #expect(Self.mode(root) == 0o755)
    }

    @Test func aRootInTheOlderFlatLayoutIsMovedToBlobKeyPaths() throws {
        let root = try Self.tempRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let hello = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"  // SHA-256("hello")
        for folder in ["assets", "results"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
            try Data("hello".utf8).write(to: URL(fileURLWithPath: root + "/\(folder)/\(hello)"))
        }
        // An upload in progress and a stranger's file stay where they are.
        try Data("hel".utf8).write(to: URL(fileURLWithPath: root + "/assets/\(hello).partial"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/results/notes.txt"))
        let storage = CoordinatorStorage(root: root)
        #expect(try storage.prepare() == 2)
        for path in [storage.assetPath(hello), storage.resultPath(hello)] {
            #expect(path.hasSuffix("/sha256/2c/\(hello)"))
            #expect(FileManager.default.contents(atPath: path) == Data("hello".utf8))
            #expect(Self.mode((path as NSString).deletingLastPathComponent) == 0o700)
        }
        #expect(!FileManager.default.fileExists(atPath: root + "/assets/\(hello)"))
        #expect(FileManager.default.fileExists(atPath: root + "/assets/\(hello).partial"))
        #expect(FileManager.default.fileExists(atPath: root + "/results/notes.txt"))
        #expect(Set(storage.list("assets").map(\.name)) == [hello, hello + ".partial"])
        #expect(Set(storage.list("results").map(\.name)) == [hello, "notes.txt"])
        #expect(storage.usage().assetBytes == 8 && storage.usage().resultBytes == 6)
        // Starting again moves nothing.
        #expect(try storage.prepare() == 0)
    }

    @Test func aStoragePathThatIsAFileIsRefusedSayingSo() throws {
        let root = try Self.tempRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(FileManager.default.createFile(atPath: root + "/file", contents: Data()))
        #expect { try CoordinatorStorage(root: root + "/file").prepare() } throws: { "\($0)".contains("is a file, not a folder") }
    }
}
