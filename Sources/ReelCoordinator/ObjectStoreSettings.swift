import Foundation
import Logging
import ReelObjectStore

/// The farm's blobs in an S3-compatible bucket (`reel coordinator --storage s3://BUCKET/PREFIX
/// --s3-endpoint URL`, docs/object-storage.md) instead of the storage directory, which then
/// holds only uploads in progress and local copies of what the coordinator itself reads
/// (sources for planning, chunks for finalising).
public struct ObjectStoreSettings: Sendable {
    public var location: ObjectStoreLocation
    public var endpoint: S3Endpoint
    /// The signature's region; S3-compatible servers without regions accept `us-east-1`.
    public var region: String
    /// `nil`: found the AWS ways when the coordinator starts (`CredentialChain`).
    public var credentials: S3Credentials?

    public init(location: ObjectStoreLocation, endpoint: S3Endpoint, region: String = "us-east-1", credentials: S3Credentials? = nil) {
        self.location = location; self.endpoint = endpoint; self.region = region; self.credentials = credentials
    }

    /// The bucket's blob store, after one request that shows the bucket is there and the
    /// credentials are accepted.
    /// - Throws: `CoordinatorStartupError` saying what to fix (never holding a secret).
    /// - Parameter bodyBytesRead: told the size of every object body read (a metric).
    func connect(logger: Logger, bodyBytesRead: @escaping @Sendable (Int64) -> Void = { _ in }) async throws -> S3BlobStore {
        do {
            let credentials = try self.credentials ?? CredentialChain().resolve()
            let client = S3Client(configuration: S3ClientConfiguration(endpoint: endpoint, bucket: location.bucket, region: region),
                                  credentials: credentials, logger: logger, bodyBytesRead: bodyBytesRead)
            let store = try S3BlobStore(client: client, location: location)
            // A listing, not a HEAD: a missing bucket answers a HEAD with a bare 404.
            _ = try await client.listObjects(prefix: location.objectKey("posters/"), maxKeys: 1)
            return store
        } catch let error as ObjectStoreError {
            let hint = error.s3Code == "NoSuchBucket" ? " (create the bucket first)" : ""
            throw CoordinatorStartupError(description: "cannot use the object store \(location) at \(endpoint): \(error)\(hint)")
        }
    }
}
