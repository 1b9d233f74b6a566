/// Percent-encoding exactly as SigV4 specifies it ("UriEncode" in AWS's signing documentation):
/// every byte of the UTF-8 form except the unreserved characters `A–Z a–z 0–9 - . _ ~` becomes
/// `%XX` with upper-case hex digits. A space is `%20` (never `+`), and `+`, `=`, `&`, `%` and
/// every non-ASCII byte are encoded.
///
/// S3 object paths keep `/` (a key's slashes are path separators) and are never normalised: a
/// key `a/./b` or `a//b` is signed and sent as it is. Query names and values encode `/` too.
public enum SigV4Encoding {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// `text` percent-encoded; `/` is kept when `keepSlash` (object paths), encoded otherwise.
    public static func encode(_ text: String, keepSlash: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepSlash && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The path of `key` in `bucket` with path-style addressing: `/BUCKET/KEY`, each encoded.
    /// The same string is sent on the request line and signed as the canonical URI.
    public static func objectPath(bucket: String, key: String) -> String {
        "/" + encode(bucket, keepSlash: false) + "/" + encode(key, keepSlash: true)
    }

    /// The path of `bucket` itself (bucket-level requests such as `ListObjectsV2`): `/BUCKET`.
    public static func bucketPath(_ bucket: String) -> String {
        "/" + encode(bucket, keepSlash: false)
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
