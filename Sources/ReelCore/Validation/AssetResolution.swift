/// What the caller found when it looked for one asset: the pure core never touches files, so
/// whoever validates a composition probes each asset first and passes the outcome here.
public enum AssetResolution: Hashable, Sendable {
    /// The asset exists at `url` (resolved: absolute path or http(s) URL) and probed as described.
    case described(url: String, AssetDescription)
    /// The asset cannot be used; `reason` becomes the problem message (`assets.<id>.url: <reason>`),
    /// e.g. `no such file`.
    case unavailable(reason: String)
    /// The file was read but is malformed (a subtitle file with bad cues): one problem message
    /// per entry, each reported as `assets.<id>.url: <reason>`.
    case malformed(reasons: [String])
}

/// Where an asset's `url` points, given the directory of the composition file.
///
/// `http://` and `https://` URLs and absolute paths are returned unchanged; `file://` is
/// stripped (and its percent-escapes decoded); anything else is a path relative to
/// `compositionDirectory` (leading `./` removed). Pure string work: nothing is checked on disk.
public func resolveAssetURL(_ url: String, relativeTo compositionDirectory: String) -> String {
    let lower = url.lowercased()
    if lower.hasPrefix("http://") || lower.hasPrefix("https://") { return url }
    var path = url
    if lower.hasPrefix("file://") {
        path = percentDecoded(String(url.dropFirst("file://".count)))
        // file://localhost/abs is the same as file:///abs.
        if path.hasPrefix("localhost/") { path = String(path.dropFirst("localhost".count)) }
    }
    if path.hasPrefix("/") { return path }
    while path.hasPrefix("./") { path = String(path.dropFirst(2)) }
    if compositionDirectory.isEmpty || compositionDirectory == "." { return path }
    return compositionDirectory.hasSuffix("/") ? compositionDirectory + path : compositionDirectory + "/" + path
}

/// `%XX` → byte; malformed escapes are kept literally.
private func percentDecoded(_ s: String) -> String {
    var out: [UInt8] = []
    let bytes = Array(s.utf8)
    var i = 0
    while i < bytes.count {
        if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count,
           let v = UInt8(String(decoding: bytes[i + 1...i + 2], as: UTF8.self), radix: 16) {
            out.append(v); i += 3
        } else {
            out.append(bytes[i]); i += 1
        }
    }
    return String(decoding: out, as: UTF8.self)
}
