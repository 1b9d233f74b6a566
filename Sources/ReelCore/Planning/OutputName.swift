/// The file name an output path (`-o`) ends in, split into its stem and extension: the one
/// parser of output names that `OutputContainer` and the command line's output checks share.
///
/// Pure text, no I/O. A path that names a directory by its form — `.`, `..`, one ending in
/// `/.` or `/..`, or one ending in `/` (`renders/`) — is refused, and so is an empty one: no
/// render can be written there, and each such message says what to give instead (a file name
/// in that directory). Whether a path names a directory that exists is for the caller to ask
/// the file system (`OutputNameError.directory` words its message the same way).
///
/// Invariants of a parsed name: `fileName` is not empty, not `.` or `..`, and holds no `/`;
/// `fileExtension` is lowercased and empty when the name has no dot or ends in one (`out.`),
/// so a container is never read from the name's first word; `stem + "." + fileExtension` is
/// `fileName` (case aside) whenever the extension is not empty.
public struct OutputName: Hashable, Sendable {
    /// The path as given.
    public var path: String
    /// Its last component: `out.mp4` of `renders/out.mp4`.
    public var fileName: String
    /// The file name before its last dot (`out` of `out.mp4`; all of it when it has no dot).
    public var stem: String
    /// What follows the file name's last dot, lowercased (`mp4`); empty without one.
    public var fileExtension: String

    /// Parses `path`. `example` is the kind of file name the caller writes (`out.mp4`,
    /// `thumb.png`), offered in the message when the path names a directory.
    public static func parse(_ path: String, example: String = "out.mp4") -> Result<OutputName, OutputNameError> {
        guard !path.isEmpty else {
            return .failure(OutputNameError(message: "the output name is empty: give a file name such as \(example)"))
        }
        let slash = path.lastIndex(of: "/")
        let fileName = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !fileName.isEmpty, fileName != ".", fileName != ".." else {
            return .failure(.directory(path, example: example))
        }
        guard let dot = fileName.lastIndex(of: ".") else {
            return .success(OutputName(path: path, fileName: fileName, stem: fileName, fileExtension: ""))
        }
        return .success(OutputName(path: path, fileName: fileName, stem: String(fileName[..<dot]),
                                   fileExtension: String(fileName[fileName.index(after: dot)...]).lowercased()))
    }
}

extension OutputNameError {
    /// `path` names a directory (by its form, or because one exists there): the message says
    /// so and offers `example` inside it (`../out.mp4` for `..`).
    public static func directory(_ path: String, example: String = "out.mp4") -> OutputNameError {
        let inside = path == "." || path == "./" ? example : path.hasSuffix("/") ? path + example : path + "/" + example
        return OutputNameError(message: "the output name \(path) is a directory, not a file name: give a file name such as \(inside)")
    }
}
