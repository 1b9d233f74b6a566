/// Every error of this module: a `Code` to branch on, and a message that says what happened and
/// what to do. Errors from the server carry its HTTP status and S3 error code (`NoSuchKey`,
/// `SignatureDoesNotMatch`, …) and message.
///
/// Never holds a secret or a signature: messages are built from keys, buckets, endpoints,
/// statuses and the server's own error text, and request URLs appear with their query removed.
public struct ObjectStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// No usable credentials, or a malformed credentials file.
        public static let credentials = Code("credentials")
        /// A bad argument: an endpoint, a key, an expiry, a range.
        public static let invalidArgument = Code("invalid_argument")
        /// The object (or upload) does not exist (HTTP 404).
        public static let notFound = Code("not_found")
        /// The server refused the request's authentication (HTTP 403: a wrong secret, an
        /// expired or tampered presigned URL, a clock too far off).
        public static let accessDenied = Code("access_denied")
        /// Another error the server answered with (its status and S3 code are attached).
        public static let server = Code("server")
        /// The server could not be reached, or the connection broke, after every retry.
        public static let transport = Code("transport")
        /// What was written or read is not what was declared: a size or a SHA-256 differs.
        public static let integrity = Code("integrity")
        /// A local file could not be read or written.
        public static let localFile = Code("local_file")
        /// The server's answer could not be understood (malformed XML, missing fields).
        public static let protocolViolation = Code("protocol")
    }

    public var code: Code
    public var message: String
    /// The HTTP status, for errors the server answered with.
    public var status: Int?
    /// The S3 error code from the server's XML error body (`NoSuchKey`, `SlowDown`, …).
    public var s3Code: String?

    public init(_ code: Code, _ message: String, status: Int? = nil, s3Code: String? = nil) {
        self.code = code; self.message = message; self.status = status; self.s3Code = s3Code
    }

    public var description: String {
        var parts = ["object store (\(code)): \(message)"]
        if let status { parts.append("HTTP \(status)") }
        if let s3Code { parts.append("S3 code \(s3Code)") }
        return parts.joined(separator: "; ")
    }
}
