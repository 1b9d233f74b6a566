import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import ReelProtocol
import ServiceLifecycle

/// The operator console on one HTTP listener (Hummingbird 2): the dashboard at `/`, the JSON
/// API under `/api/v1/` (proto/console-api.yaml; every request needs a console token), the
/// live stream at `/api/v1/stream`, and `/metrics`. TLS when given, as the line protocol.
///
/// The console runs as `services` in its owner's `ServiceGroup` (the coordinator's): the HTTP
/// application, then the live feed. Graceful shutdown runs in reverse, so the feed ends every
/// stream first and the application's drain then waits only for ordinary requests.
public final class ConsoleServer: Sendable {
    struct Services: Sendable {
        var backend: any ConsoleBackend
        var feed: ConsoleFeed
    }

    /// In this order in the owner's `ServiceGroup`.
    public let services: [any Service]
    private let bound: BoundAddress

    /// Prepares the console for `host:port` (it binds when its services run).
    /// `streamRefresh`: how often the live stream sends a snapshot even when nothing changed.
    public init(host: String, port: Int, tls: TLSConfiguration?, backend: any ConsoleBackend,
                authenticator: Authenticator, logger: Logger, streamRefresh: Duration = .seconds(5)) async throws {
        let tokens = await ConsoleTokens.make(authenticator: authenticator)
        let feed = ConsoleFeed(backend: backend, refresh: streamRefresh, logger: logger)
        let router = Self.makeRouter(services: Services(backend: backend, feed: feed), tokens: tokens, logger: logger)
        let bound = BoundAddress()
        self.bound = bound
        services = [ConsoleHTTPService(serving: router, as: "the console", host: host, port: port,
                                       server: try tls.map { try .tls(.http1(), tlsConfiguration: $0) } ?? .http1(), bound: bound, logger: logger),
                    ConsoleFeedService(feed: feed)]
    }

    /// The bound address once listening (useful with port 0); nil if it could not listen.
    public func waitUntilListening() async -> SocketAddress? { await bound.wait() }

    /// The bound address, once listening.
    public var localAddress: SocketAddress? { bound.address }

    static func makeRouter(services: Services, tokens: ConsoleTokens, logger: Logger) -> Router<ConsoleContext> {
        let router = Router(context: ConsoleContext.self)
        router.add(middleware: ConsoleErrorMiddleware(logger: logger))
        let api = router.group("api/v1").add(middleware: ConsoleAuthMiddleware(tokens: tokens))
        // The preview's routes: the same token rules, plus `?token=`.
        let media = router.group("api/v1").add(middleware: ConsoleAuthMiddleware(tokens: tokens, queryToken: true))
        for route in ConsoleRoutes.all {
            let handler: @Sendable (Request, ConsoleContext) async throws -> Response = { request, context in
                if route.access == .act, context.access?.role.canAct != true {
                    return ConsoleResponses.error(.forbidden, "this token is read-only; acting needs a token from `reel token` without --read-only")
                }
                return try await route.handler(request, context, services)
            }
            switch route.access {
            case .open:
                router.on(RouterPath(route.path), method: route.method, use: handler)
            case .read, .act:
                precondition(route.path.hasPrefix("/api/v1/"), "API routes live under /api/v1/")
                (route.queryToken ? media : api).on(RouterPath(String(route.path.dropFirst("/api/v1/".count))), method: route.method, use: handler)
            }
        }
        return router
    }
}

/// Why the console could not start.
public struct ConsoleStartupError: Error, CustomStringConvertible {
    public var description: String
}

/// A Hummingbird application as a service (the console's, the metrics listener's); a failure
/// to listen says what it would have served, and where.
struct ConsoleHTTPService: Service {
    let app: any Service
    let bound: BoundAddress
    let what: String
    let address: String

    /// `router` on `host:port`; `bound` learns the address once it listens. Hummingbird's own
    /// log lines (a server starting) only from `.notice`.
    init(serving router: Router<ConsoleContext>, as what: String, host: String, port: Int, server: HTTPServerBuilder,
         bound: BoundAddress, logger: Logger) {
        var quietLogger = logger
        quietLogger.logLevel = max(logger.logLevel, .notice)
        app = Application(
            router: router,
            server: server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in bound.set(channel.localAddress) },
            logger: quietLogger)
        self.bound = bound; self.what = what; self.address = "\(host):\(port)"
    }

    func run() async throws {
        defer { bound.set(nil) }
        do {
            try await app.run()
        } catch where bound.address == nil {
            throw ConsoleStartupError(description: "cannot serve \(what) on \(address): \(error)")
        }
    }
}

/// Ends the live streams at graceful shutdown (or cancellation), before the application drains.
private struct ConsoleFeedService: Service {
    let feed: ConsoleFeed

    func run() async throws {
        try? await gracefulShutdown()
        feed.close()
    }
}

/// A listener's bound address, and those waiting for it.
final class BoundAddress: Sendable {
    private struct State {
        var address: SocketAddress?
        var settled = false
        var waiters: [CheckedContinuation<SocketAddress?, Never>] = []
    }
    private let state = NIOLockedValueBox(State())

    var address: SocketAddress? { state.withLockedValue { $0.address } }

    /// The first call settles it (bound, or nil when the server ended without listening).
    func set(_ address: SocketAddress?) {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<SocketAddress?, Never>] in
            guard !state.settled else { return [] }
            state.settled = true
            state.address = address
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: address) }
    }

    func wait() async -> SocketAddress? {
        await withCheckedContinuation { continuation in
            let settled = state.withLockedValue { state -> SocketAddress?? in
                if state.settled { return .some(state.address) }
                state.waiters.append(continuation)
                return .none
            }
            if let settled { continuation.resume(returning: settled) }
        }
    }
}

/// Refusals as JSON (`{"error": "…"}`) with their status; unexpected errors as a 500 that
/// says where to look, with the details in the log only.
struct ConsoleErrorMiddleware: RouterMiddleware {
    typealias Context = ConsoleContext
    let logger: Logger

    func handle(_ request: Request, context: ConsoleContext,
                next: (Request, ConsoleContext) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ConsoleBackendError {
            switch error.kind {
            case .notFound: return ConsoleResponses.error(.notFound, error.message)
            case .conflict: return ConsoleResponses.error(.conflict, error.message, problems: error.problems)
            case .invalid: return ConsoleResponses.error(.badRequest, error.message, problems: error.problems)
            case .unplayable: return ConsoleResponses.error(.unsupportedMediaType, error.message)
            case .unavailable: return ConsoleResponses.error(.serviceUnavailable, error.message, headers: [.retryAfter: "1"])
            }
        } catch let error as HTTPError {
            return ConsoleResponses.error(error.status, error.body ?? "\(error.status)")
        } catch {
            logger.error("console request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return ConsoleResponses.error(.internalServerError, "internal error; see the coordinator's log")
        }
    }
}
