import Synchronization

/// The coordinators an agent or operator client may reach (`--coordinator a:7400,b:7400`), and
/// which to try first: the one that last answered, then the others in the order given. A
/// connection that fails moves the next attempt on to the following coordinator, so a client
/// whose coordinator went away reconnects to another (proto/PROTOCOL.md §3, "Several
/// coordinators"). A host name that resolves to several addresses is one entry: each connect
/// tries its addresses in turn.
public final class CoordinatorEndpoints: Sendable, CustomStringConvertible {
    public let all: [HostPort]
    private let preferred = Mutex(0)

    /// - Precondition: `all` is not empty.
    public init(_ all: [HostPort]) {
        precondition(!all.isEmpty, "at least one coordinator")
        self.all = all
    }

    /// Every endpoint once, the preferred one first.
    public var inTryOrder: [HostPort] {
        let start = preferred.withLock { $0 }
        return (0..<all.count).map { all[(start + $0) % all.count] }
    }

    /// `endpoint` answered: try it first from now on.
    public func succeeded(_ endpoint: HostPort) {
        guard let index = all.firstIndex(of: endpoint) else { return }
        preferred.withLock { $0 = index }
    }

    /// Connecting to `endpoint` failed: if it was the preferred one, the next one is.
    public func failed(_ endpoint: HostPort) {
        guard let index = all.firstIndex(of: endpoint) else { return }
        preferred.withLock { if $0 == index { $0 = (index + 1) % all.count } }
    }

    /// `a:7400,b:7400`.
    public var description: String { all.map(\.description).joined(separator: ",") }
}
