import Foundation
import ReelProtocol
import Synchronization

/// The plan documents of the last few jobs this agent ran, decoded, so consecutive chunks of
/// a job neither fetch nor decode their plan again (one `FETCH` per job per agent process).
final class PlanDocumentMemory: Sendable {
    /// Least recently used first.
    private let documents = Mutex<[(sha256: String, document: RenderPlanDocument)]>([])
    private let capacity: Int

    init(capacity: Int = 4) { self.capacity = max(1, capacity) }

    func document(_ sha256: String) -> RenderPlanDocument? {
        documents.withLock { documents in
            guard let index = documents.firstIndex(where: { $0.sha256 == sha256 }) else { return nil }
            let entry = documents.remove(at: index)
            documents.append(entry)
            return entry.document
        }
    }

    func remember(_ document: RenderPlanDocument, as sha256: String) {
        documents.withLock { documents in
            documents.removeAll { $0.sha256 == sha256 }
            documents.append((sha256, document))
            if documents.count > capacity { documents.removeFirst(documents.count - capacity) }
        }
    }
}
