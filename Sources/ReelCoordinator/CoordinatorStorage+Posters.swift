import Foundation
import ReelProtocol

/// Poster frames: the newest finished frame of each job, as a small JPEG an agent sent with
/// a chunk (`POSTER`), kept as the blob `posters/<job>.jpg` for the console
/// (`CoordinatorStorage+Blobs.swift` stores and reads it). Only the newest matters, so each
/// replaces the last (atomically: a reader sees a whole picture). Deleting the job deletes it.
extension CoordinatorStorage {
    func posterPath(job: Int64) -> String { local.path(of: .poster(job: job)) }
}
