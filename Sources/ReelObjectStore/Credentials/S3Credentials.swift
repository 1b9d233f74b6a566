/// A secret (a secret access key, a session token) that never prints: its `description`,
/// `debugDescription` and reflection show `<redacted>`, so interpolating it into a log line or an
/// error, `dump`ing it or printing a value that holds it cannot leak it. The text is reached only
/// through `revealed`, which the signer alone calls.
public struct SecretString: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let value: String

    public init(_ value: String) { self.value = value }

    /// The secret itself: for computing a signature, never for printing.
    public var revealed: String { value }

    public var isEmpty: Bool { value.isEmpty }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// AWS credentials for SigV4: an access key id (not secret: it names the key, and appears in
/// every request's credential scope), its secret access key, and for temporary credentials a
/// session token. Printing shows only the access key id.
public struct S3Credentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let accessKeyID: String
    public let secretAccessKey: SecretString
    public let sessionToken: SecretString?

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = SecretString(secretAccessKey)
        self.sessionToken = sessionToken.flatMap { $0.isEmpty ? nil : SecretString($0) }
    }

    public var description: String {
        "S3Credentials(accessKeyID: \(accessKeyID), secretAccessKey: <redacted>\(sessionToken == nil ? "" : ", sessionToken: <redacted>"))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["accessKeyID": accessKeyID, "secretAccessKey": secretAccessKey, "sessionToken": sessionToken as Any],
               displayStyle: .struct)
    }
}
