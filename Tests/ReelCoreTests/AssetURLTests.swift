import Testing
@testable import ReelCore
import ReelThreadTesting

@Suite("Asset URL resolution", .blocking)
struct AssetURLTests {
    @Test(arguments: [
        ("clips/intro.mp4", "/home/u/project", "/home/u/project/clips/intro.mp4"),
        ("./music.m4a", "/home/u/project/", "/home/u/project/music.m4a"),
        ("/abs/logo.png", "/home/u/project", "/abs/logo.png"),
        ("https://cdn.example.com/a.mp4", "/x", "https://cdn.example.com/a.mp4"),
        ("HTTP://cdn.example.com/a.mp4", "/x", "HTTP://cdn.example.com/a.mp4"),
        ("file:///media/a%20b.mp4", "/x", "/media/a b.mp4"),
        ("file://localhost/media/c.mp4", "/x", "/media/c.mp4"),
        ("rel.mp4", "", "rel.mp4"),
        ("rel.mp4", ".", "rel.mp4"),
        ("../up.mp4", "/a/b", "/a/b/../up.mp4"),
    ])
    func resolves(_ url: String, _ directory: String, _ expected: String) {
        #expect(resolveAssetURL(url, relativeTo: directory) == expected)
    }
}
