/// Failures of the render pipeline that are not the libraries' own errors.
public enum RenderError: Error, CustomStringConvertible {
    case internalInconsistency(String)
    case io(String)
    /// What the composition asks for is not drawn in this kind of render (an HDR render's
    /// rotated layer): validation refuses what it can see, this is the rest.
    case unsupported(String)

    public var description: String {
        switch self {
        case .internalInconsistency(let m): return "internal error: \(m)"
        case .io(let m): return m
        case .unsupported(let m): return m
        }
    }
}
