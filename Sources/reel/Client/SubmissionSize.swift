import Foundation
import ReelProtocol

/// `reel submit`'s check that a composition fits in one `SUBMIT` payload (at most
/// `ProtocolLimits.maxPayloadLength`, 64 MiB: proto/PROTOCOL.md §1), made before anything is
/// sent, in words that say what to do — rather than the coordinator's `payload_too_large`.
/// Pure: sizes in, `UserError` out.
enum SubmissionSize {
    /// The composition file itself, checked before it is even read.
    static func checkComposition(_ path: String, bytes: Int64, limit: Int = ProtocolLimits.maxPayloadLength) throws {
        guard bytes > Int64(limit) else { return }
        throw UserError("\(path) is \(megabytes(bytes)); a composition can be at most \(mebibytes(limit)) — "
                        + "move large data (e.g. embedded images) into asset files")
    }

    /// The encoded `SUBMIT` document: the composition's text as a JSON string (quotes and
    /// newlines escaped, so it can outgrow the file) plus the asset list and settings.
    static func checkDocument(bytes: Int, limit: Int = ProtocolLimits.maxPayloadLength) throws {
        guard bytes > limit else { return }
        throw UserError("the submission is \(megabytes(Int64(bytes))) once the composition is escaped as JSON text; "
                        + "it can be at most \(mebibytes(limit)) — move large data (e.g. embedded images) into asset files")
    }

    /// `70.0 MB` (decimal, as file managers show sizes).
    static func megabytes(_ bytes: Int64) -> String { String(format: "%.1f MB", Double(bytes) / 1_000_000) }

    /// `64 MiB` (the protocol's limit is binary).
    static func mebibytes(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }
}
