/// One thing wrong with a composition, located by its JSON path.
///
/// `path` is object keys joined by `.` with array indices as `[n]`
/// (`tracks[0].segments[2].sourceRange.duration`); it is empty for the document itself.
public struct Problem: Hashable, Sendable, Codable, CustomStringConvertible {
    public var path: String
    public var message: String
    public init(path: String, message: String) { self.path = path; self.message = message }
    /// `path: message` (just the message when the path is empty) — one line of `reel validate`.
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// Every problem found while parsing or validating a composition (never empty).
///
/// Parsing and validation collect all problems rather than stopping at the first, so a user
/// fixes a file in one round trip.
public struct CompositionError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    public var problems: [Problem]
    public init(problems: [Problem]) { self.problems = problems }
    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
