/// An operation a presigned URL permits: one method on one key (and, for a part, one upload and
/// part number). A SHA-256 given for an upload is signed into the URL as
/// `x-amz-checksum-sha256`: the holder must send that header, and the server refuses any other
/// bytes.
public enum PresignedOperation: Hashable, Sendable {
    case getObject(key: String)
    case headObject(key: String)
    case putObject(key: String, sha256: String?)
    case uploadPart(key: String, uploadID: String, partNumber: Int, sha256: String?)
}

extension S3Client {
    /// A presigned URL for `operation`, valid `expires` seconds from now (at most 7 days; 15
    /// minutes by default). Whoever holds it can do that one thing until then, without
    /// credentials: hand it only to the agent or client that should.
    public func presign(_ operation: PresignedOperation, expires: Int = SigV4Signer.defaultPresignExpiry) throws -> PresignedRequest {
        let method: String, key: String
        var query: [String: String] = [:], headers: [String: String] = [:]
        switch operation {
        case .getObject(let name):
            method = "GET"; key = name
        case .headObject(let name):
            method = "HEAD"; key = name
        case .putObject(let name, let sha256):
            method = "PUT"; key = name
            if let sha256 { headers["x-amz-checksum-sha256"] = try Self.base64(hex: sha256) }
        case .uploadPart(let name, let uploadID, let partNumber, let sha256):
            guard (1...10_000).contains(partNumber) else {
                throw ObjectStoreError(.invalidArgument, "UploadPart: part numbers are 1 to 10000, not \(partNumber)")
            }
            method = "PUT"; key = name
            query = ["partNumber": String(partNumber), "uploadId": uploadID]
            if let sha256 { headers["x-amz-checksum-sha256"] = try Self.base64(hex: sha256) }
        }
        let request = SignableRequest(method: method, endpoint: configuration.endpoint, bucket: configuration.bucket, key: key,
                                      query: query, headers: headers)
        return try signer.presign(request, expires: expires, at: AmzDate(now()))
    }
}
