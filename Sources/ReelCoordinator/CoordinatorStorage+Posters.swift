import Foundation
import ReelProtocol

/// Poster frames: the newest finished frame of each job, as a small JPEG an agent sent with
/// a chunk (`POSTER`), kept as `posters/<job>.jpg` for the console. Only the newest matters,
/// so each replaces the last (atomically: a reader sees a whole picture). Deleting the job
/// deletes it.
extension CoordinatorStorage {
    func posterPath(job: Int64) -> String { "\(root)/posters/\(job).jpg" }

    func storePoster(job: Int64, jpeg: [UInt8]) throws {
        try writeWhole(jpeg, to: posterPath(job: job), what: "the poster of job \(job)")
    }

    /// The job's poster, or nil when it has none (yet).
    func poster(job: Int64) throws -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: posterPath(job: job)) else { return nil }
        return [UInt8](data)
    }
}
