import Crypto
import Foundation
import ReelObjectStore
import Testing

/// How assets are named (`AssetAddress`): the SHA-256 up to 16 MiB, the tree hash of the parts'
/// SHA-256s beyond. The reference is the formula written out here with Crypto's one-shot
/// SHA-256, not `ContentDigest`'s streaming.
@Suite(.blocking) struct AssetAddressTests {
    static func hex(_ digest: some Sequence<UInt8>) -> String { digest.map { String(format: "%02x", $0) }.joined() }

    /// Seeded pseudo-random bytes, 8 at a time.
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { raw in
            var index = 0
            while index < count {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                var word = state
                for _ in 0..<min(8, count - index) {
                    raw[index] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                    index += 1
                }
            }
        }
        return out
    }

    /// The tree hash by its definition: SHA-256 of the header, the part size and the size as
    /// 8-byte big-endian integers, then each part's SHA-256.
    static func reference(_ bytes: [UInt8], partSize: Int) -> String {
        var message = Array("reel-asset-tree-v1\n".utf8)
        for value in [UInt64(partSize), UInt64(bytes.count)] { message += withUnsafeBytes(of: value.bigEndian) { Array($0) } }
        for start in stride(from: 0, to: bytes.count, by: partSize) {
            message += Array(SHA256.hash(data: bytes[start..<min(start + partSize, bytes.count)]))
        }
        return hex(SHA256.hash(data: message))
    }

    @Test func theLayoutDependsOnTheSizeAlone() {
        let mebibyte: Int64 = 1 << 20
        #expect(AssetAddress.partSize(total: 0) == nil)
        #expect(AssetAddress.partSize(total: 16 * mebibyte) == nil)
        #expect(AssetAddress.partSize(total: 16 * mebibyte + 1) == 16 * mebibyte)
        #expect(AssetAddress.partSize(total: 10_000 * 16 * mebibyte) == 16 * mebibyte)
        // One byte more would need 10,001 parts: the part size goes up to the next whole MiB.
        #expect(AssetAddress.partSize(total: 10_000 * 16 * mebibyte + 1) == 17 * mebibyte)
        let huge: Int64 = 4 << 40  // 4 TiB
        let part = AssetAddress.partSize(total: huge)!
        #expect(part % mebibyte == 0 && (huge + part - 1) / part <= 10_000)
    }

    @Test func aSmallAssetIsNamedByItsSHA256() {
        for count in [0, 1, 1000, 16 << 20] {
            let data = Self.bytes(count, seed: UInt64(count) + 1)
            #expect(AssetAddress.name(of: data) == Self.hex(SHA256.hash(data: data)), "\(count) bytes")
        }
    }

    @Test func aLargeAssetIsNamedByItsTreeHash() {
        let partSize = 16 << 20
        for count in [partSize + 1, 2 * partSize, 3 * partSize + 123] {
            let data = Self.bytes(count, seed: 7)
            let name = AssetAddress.name(of: data)
            #expect(name == Self.reference(data, partSize: partSize), "\(count) bytes")
            #expect(name != Self.hex(SHA256.hash(data: data)))
            let parts = stride(from: 0, to: count, by: partSize).map { Self.hex(SHA256.hash(data: data[$0..<min($0 + partSize, count)])) }
            #expect(AssetAddress.tree(partSize: Int64(partSize), total: Int64(count), partSHA256s: parts) == name)
        }
        #expect(AssetAddress.tree(partSize: 16 << 20, total: 17 << 20, partSHA256s: ["xyz", String(repeating: "0", count: 64)]) == nil)
    }

    /// The running digest gives the same name however the bytes are cut as they arrive
    /// (uploads in ranges, downloads in network reads), parts boundaries included.
    @Test func theRunningDigestIgnoresHowBytesArrive() {
        let count = 2 * (16 << 20) + 5
        let data = Self.bytes(count, seed: 3)
        let expected = Self.reference(data, partSize: 16 << 20)
        for piece in [1 << 20, 65_537, (16 << 20) - 1, 16 << 20, count] {
            var digest = ContentDigest(total: Int64(count), partSize: AssetAddress.partSize(total: Int64(count)))
            var start = 0
            while start < count {
                digest.update(Array(data[start..<min(start + piece, count)]))
                start += piece
            }
            #expect(digest.byteCount == Int64(count))
            #expect(digest.hex == expected, "pieces of \(piece)")
        }
    }

    /// The file forms agree with the in-memory one, and a content key of the wrong name is
    /// refused by the local store; an asset is checked by its name when it is read back.
    @Test func storesCheckAnAssetByItsName() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("asset-address-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = Self.bytes((16 << 20) + 999, seed: 11)
        let path = directory.appendingPathComponent("big.bin").path
        try Data(data).write(to: URL(fileURLWithPath: path))
        let named = try AssetAddress.name(ofFile: path)
        #expect(named.size == Int64(data.count) && named.name == Self.reference(data, partSize: 16 << 20))

        let store = LocalBlobStore(root: directory.appendingPathComponent("store").path)
        try store.prepare()
        let plain = Self.hex(SHA256.hash(data: data))
        await #expect(throws: ObjectStoreError.self) { try await store.write(.asset(sha256: plain), file: path, sha256: nil) }
        let info = try await store.write(.asset(sha256: named.name), file: path, sha256: nil)
        #expect(info.size == Int64(data.count) && info.sha256 == named.name)
        let copy = directory.appendingPathComponent("copy.bin").path
        #expect(try await store.download(.asset(sha256: named.name), to: copy).sha256 == named.name)
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == Data(data))
    }
}
