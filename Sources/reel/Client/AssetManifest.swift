import Foundation
import ReelCore
import ReelObjectStore
import ReelProtocol

/// The content of every asset a composition names, for `SUBMIT`: asset id → SHA-256 and
/// size, plus where each hash's bytes are on this machine (to `PUT` the ones the coordinator
/// lacks). Files are hashed streamed (1 MiB blocks), each distinct path once.
struct AssetManifest {
    var entries: [String: AssetManifestEntry] = [:]
    /// Content hash → a local file with those bytes.
    var files: [String: String] = [:]

    /// Hashes the assets of `composition`, whose relative URLs are relative to `directory`.
    /// - Throws: `UserError` for an asset that is not a local file (agents read sources from
    ///   the coordinator by hash, so the client must upload them).
    init(composition: Composition, directory: String) throws {
        var byPath: [String: AssetManifestEntry] = [:]
        for id in composition.assets.keys.sorted() {
            let url = composition.assets[id]!.url
            let path = resolveAssetURL(url, relativeTo: directory)
            if path.lowercased().hasPrefix("http://") || path.lowercased().hasPrefix("https://") {
                throw UserError("asset \"\(id)\" is a URL (\(url)); the farm takes local files only: download it and use its path")
            }
            if let known = byPath[path] {
                entries[id] = known
                continue
            }
            try requireReadableFile(path, what: "asset \"\(id)\"")
            // Named as the farm's store names it: the SHA-256 of the bytes, or past 16 MiB the
            // tree hash of its parts (AssetAddress), which the store can check part by part.
            let digest: (size: Int64, name: String)
            do {
                digest = try AssetAddress.name(ofFile: path)
            } catch let error as ObjectStoreError {
                throw UserError("cannot read asset \"\(id)\" at \(path): \(error.message)")
            }
            let entry = AssetManifestEntry(sha256: digest.name, size: digest.size)
            byPath[path] = entry
            entries[id] = entry
            files[digest.name] = path
        }
    }

    /// Bytes of the given hashes (those the coordinator asked for).
    func bytes(of hashes: [String]) -> Int64 {
        hashes.reduce(0) { total, hash in total + (entries.values.first { $0.sha256 == hash }?.size ?? 0) }
    }
}
