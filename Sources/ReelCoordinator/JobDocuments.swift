import Foundation
import ReelCore
import ReelProtocol

/// What the coordinator keeps in `jobs.settings`: the submitted settings plus the asset
/// manifest (composition asset id → content), which planning and task specifications need.
struct StoredJobSettings: Codable, Sendable {
    var settings: JobSettings
    var assets: [String: AssetManifestEntry]
}

/// Sorted-key JSON, so stored documents are stable byte for byte.
enum CoordinatorJSON {
    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }
}

extension CompositionError {
    /// The first problem and how many there are, for one-line `ERR` texts and job errors.
    var summary: String {
        guard let first = problems.first else { return "invalid composition" }
        return problems.count == 1 ? first.description : "\(first.description) (and \(problems.count - 1) more problems)"
    }
}
