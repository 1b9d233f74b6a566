import Foundation

/// One object in a listing (`ListObjectsV2`).
public struct ObjectSummary: Hashable, Sendable {
    public var key: String
    public var size: Int64
    public var etag: String
    public var lastModified: Date?
}

/// One page of a listing, and the token for the next (`nil` on the last page).
public struct ObjectListPage: Hashable, Sendable {
    public var objects: [ObjectSummary]
    public var nextContinuationToken: String?
}

extension S3Client {
    /// One page of the objects whose keys start with `prefix`, in key order (`ListObjectsV2`).
    /// - Parameters:
    ///   - continuationToken: the previous page's `nextContinuationToken`.
    ///   - maxKeys: at most this many (S3 caps a page at 1,000).
    public func listObjects(prefix: String, continuationToken: String? = nil, startAfter: String? = nil,
                            maxKeys: Int = 1000) async throws -> ObjectListPage {
        var query = ["list-type": "2", "prefix": prefix, "max-keys": String(maxKeys)]
        if let continuationToken { query["continuation-token"] = continuationToken }
        if let startAfter { query["start-after"] = startAfter }
        let call = Call(operation: "ListObjectsV2", method: .GET, key: nil, query: query)
        return try await send(call) { response in
            let xml = try await self.xml(response, call)
            let objects = try xml.all("Contents").map { item -> ObjectSummary in
                guard let key = item.value("Key"), let size = item.value("Size").flatMap(Int64.init) else {
                    throw ObjectStoreError(.protocolViolation, "ListObjectsV2 \(self.configuration.bucket): an entry without Key or Size")
                }
                return ObjectSummary(key: key, size: size, etag: item.value("ETag") ?? "",
                                     lastModified: item.value("LastModified").flatMap(Self.isoDate))
            }
            let truncated = xml.value("IsTruncated") == "true"
            let next = truncated ? xml.value("NextContinuationToken").flatMap { $0.isEmpty ? nil : $0 } : nil
            if truncated && next == nil {
                throw ObjectStoreError(.protocolViolation, "ListObjectsV2 \(self.configuration.bucket): a truncated page without a continuation token")
            }
            return ObjectListPage(objects: objects, nextContinuationToken: next)
        }
    }

    /// Every object whose key starts with `prefix`, page by page: `body` sees each page in key
    /// order, so a retention sweep over millions of keys holds one page at a time.
    public func forEachPage(prefix: String, pageSize: Int = 1000, _ body: ([ObjectSummary]) async throws -> Void) async throws {
        var token: String?
        repeat {
            let page = try await listObjects(prefix: prefix, continuationToken: token, maxKeys: pageSize)
            try await body(page.objects)
            token = page.nextContinuationToken
        } while token != nil
    }

    /// Every object whose key starts with `prefix` (all pages), in key order.
    public func listAllObjects(prefix: String, pageSize: Int = 1000) async throws -> [ObjectSummary] {
        var all: [ObjectSummary] = []
        try await forEachPage(prefix: prefix, pageSize: pageSize) { all += $0 }
        return all
    }
}

extension S3Client {
    /// Creates the client's bucket; a bucket that this account already owns is not an error.
    /// (Operators usually create buckets themselves; tests and a first start use this.)
    public func createBucket() async throws {
        do {
            try await send(Call(operation: "CreateBucket", method: .PUT, key: nil)) { _ in }
        } catch let error as ObjectStoreError where error.s3Code == "BucketAlreadyOwnedByYou" {
            return
        }
    }
}
