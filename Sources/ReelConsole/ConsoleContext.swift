import Hummingbird

/// The request context of the console's routes: Hummingbird's core plus the access of the
/// request's verified token (set by `ConsoleAuthMiddleware` on `/api/` routes).
public struct ConsoleContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var access: ConsoleAccess?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
    }
}
