import Foundation
import ReelCore
import ReelObjectStore
import ReelProtocol
import ReelStore
import ReelScheduling

/// The job's plan document (`RenderPlanDocument`): stored once per job in the coordinator's
/// storage by content, beside the assets, so agents read it with `FETCH` and cache it like a
/// source. Its hash is the job's `plan_sha256`; `job_assets` lists it, so retention keeps it
/// exactly as long as the job's sources. It is the one copy of the job's render plan: the
/// finaliser, the console's previews and estimates read the plan from it.
enum RenderPlanDocuments {
    /// Encodes and stores `document` (if not stored already). - Returns: its reference.
    static func store(_ document: RenderPlanDocument, storage: CoordinatorStorage) async throws -> RenderPlanReference {
        let bytes = Array(try CoordinatorJSON.encode(document).utf8)
        // Named as every asset is (a plan of a very long job may pass AssetAddress's base part size).
        let sha256 = AssetAddress.name(of: bytes)
        try await storage.store(.asset(sha256: sha256), bytes: bytes)
        return RenderPlanReference(sha256: sha256, size: Int64(bytes.count))
    }

    /// The stored document's frame count (audio tasks planned before their rows carried it).
    static func frameCount(of reference: RenderPlanReference, storage: CoordinatorStorage) async throws -> Int {
        try await read(reference, storage: storage).plan.frameCount
    }

    /// The stored document.
    static func read(_ reference: RenderPlanReference, storage: CoordinatorStorage) async throws -> RenderPlanDocument {
        let bytes = try await storage.readRange(.asset(sha256: reference.sha256), offset: 0, length: reference.size).bytes
        return try JSONDecoder().decode(RenderPlanDocument.self, from: Data(bytes))
    }

    /// A job's render plan (as agents get it): from its row for a job planned before migration
    /// 20, else from its stored document, which the row no longer copies; nil when the job is
    /// not planned yet.
    static func renderPlan(of documents: JobDocuments, storage: CoordinatorStorage) async throws -> RenderPlan? {
        if documents.hasInlineRenderPlan { return try CoordinatorJSON.decode(RenderPlan.self, from: documents.renderPlan) }
        guard let reference = documents.renderPlanDocument else { return nil }
        return try await read(reference, storage: storage).plan
    }

    /// What tasks planned before migration 3 carry in their row: the whole plan.
    struct LegacyTaskSpecification: Decodable {
        var frames: FrameRange
        var plan: RenderPlan
        var assets: [String: AssetManifestEntry]
        var encoderThreads: Int
    }

    /// A task planned by an older coordinator: its job's plan document is made from the
    /// task's inline specification, stored, and recorded on the job (once; later claims of
    /// the job's tasks find it).
    static func adoptLegacy(_ claimed: ClaimedTask, storage: CoordinatorStorage, pool: StorePool)
        async throws -> (reference: RenderPlanReference, frames: FrameRange) {
        let legacy = try CoordinatorJSON.decode(LegacyTaskSpecification.self, from: claimed.spec)
        let reference = try await store(RenderPlanDocument(plan: legacy.plan, assets: legacy.assets, encoderThreads: legacy.encoderThreads),
                                        storage: storage)
        let path = storage.storedKey(.asset(sha256: reference.sha256))
        try await pool.run { store in
            try store.assets.stored(sha256: reference.sha256, size: reference.size, storedKey: path)
            try store.jobs.adoptRenderPlanDocument(job: claimed.jobID, document: reference)
        }
        return (reference, legacy.frames)
    }
}
