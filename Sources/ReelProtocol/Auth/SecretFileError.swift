/// A secret file other users can read or change (`--secret-file`, `REEL_SECRET_FILE`):
/// refused, because whoever reads the secret can join the farm as an agent or submit jobs as
/// an operator. `description` is the whole message for the operator, fix included.
public struct SecretFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file as it was given.
    public var path: String
    /// Its permission bits (e.g. `0o644`).
    public var mode: UInt32

    public init(path: String, mode: UInt32) {
        self.path = path; self.mode = mode
    }

    public var description: String {
        "the secret file \(path) is accessible to other users (mode \(Self.octal(mode))); "
            + "anyone who can read it can join the farm. Make it private: chmod 600 \(path)"
    }

    /// Whether a secret file with these permission bits and this owner is private enough.
    ///
    /// The rule is PostgreSQL's for its server key: nothing for other users, and nothing for
    /// the group either — except that a file owned by root may be readable (only) by its group.
    /// That is how an administrator shares a secret with a service account (`root:reel 0640`),
    /// and how Kubernetes mounts a secret volume when the pod sets `fsGroup` (it turns a
    /// `defaultMode` of 0400 into 0440, group `fsGroup`).
    public static func isPrivate(mode: UInt32, ownerUID: UInt32) -> Bool {
        let forbidden: UInt32 = ownerUID == 0 ? 0o037 : 0o077
        return mode & forbidden == 0
    }

    static func octal(_ mode: UInt32) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
