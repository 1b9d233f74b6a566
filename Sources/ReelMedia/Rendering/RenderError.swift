/// Failures of the render pipeline that are not the libraries' own errors.
public enum RenderError: Error, CustomStringConvertible {
    case internalInconsistency(String)
    case io(String)

    public var description: String {
        switch self {
        case .internalInconsistency(let m): return "internal error: \(m)"
        case .io(let m): return m
        }
    }
}
