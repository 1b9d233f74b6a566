import Foundation
import Hummingbird
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
public final class ConsoleServer: Sendable {
    struct Services: Sendable {
        var backend: any ConsoleBackend
        var feed: ConsoleFeed
    }

    private let task: Task<Void, Error>
    private let group: ServiceGroup
    private let feed: ConsoleFeed
    /// The bound address (useful with port 0).
    public let localAddress: SocketAddress?

    private init(task: Task<Void, Error>, group: ServiceGroup, feed: ConsoleFeed, localAddress: SocketAddress?) {
        self.task = task; self.group = group; self.feed = feed; self.localAddress = localAddress
    }

    /// Binds `host:port` and serves until `close()`. Throws if it cannot listen.
    /// `streamRefresh`: how often the live stream sends a snapshot even when nothing changed.
    public static func start(host: String, port: Int, tls: TLSConfiguration?, backend: any ConsoleBackend,
                             authenticator: Authenticator, logger: Logger,
                             streamRefresh: Duration = .seconds(5)) async throws -> ConsoleServer {
        let tokens = await ConsoleTokens.make(authenticator: authenticator)
        let feed = ConsoleFeed(backend: backend, refresh: streamRefresh, logger: logger)
        let router = makeRouter(services: Services(backend: backend, feed: feed), tokens: tokens, logger: logger)
        let bound = NIOLockedValueBox<CheckedContinuation<SocketAddress?, Error>?>(nil)
        var quietLogger = logger
        quietLogger.logLevel = max(logger.logLevel, .notice)
        let app = Application(
            router: router,
            server: try tls.map { try .tls(.http1(), tlsConfiguration: $0) } ?? .http1(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                bound.withLockedValue { $0.take() }?.resume(returning: channel.localAddress)
            },
            logger: quietLogger)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [app], logger: quietLogger))
        let address: SocketAddress?
        var task: Task<Void, Error>?
        do {
            address = try await withCheckedThrowingContinuation { continuation in
                bound.withLockedValue { $0 = continuation }
                task = Task {
                    do {
                        try await group.run()
                    } catch {
                        bound.withLockedValue { $0.take() }?.resume(throwing: error)
                        throw error
                    }
                    // Stopped before it ever listened (cancelled at once).
                    bound.withLockedValue { $0.take() }?.resume(returning: nil)
                }
            }
        } catch {
            throw ConsoleStartupError(description: "cannot serve the console on \(host):\(port): \(error)")
        }
        return ConsoleServer(task: task!, group: group, feed: feed, localAddress: address)
    }

    /// Ends the live streams, stops listening, lets requests in flight finish (up to 5 s) and
    /// waits for the server to stop.
    public func close() async {
        feed.close()
        await group.triggerGracefulShutdown()
        let task = task
        let timeout = Task {
            try await Task.sleep(for: .seconds(5))
            task.cancel()
        }
        _ = try? await task.value
        timeout.cancel()
    }

    static func makeRouter(services: Services, tokens: ConsoleTokens, logger: Logger) -> Router<ConsoleContext> {
        let router = Router(context: ConsoleContext.self)
        router.add(middleware: ConsoleErrorMiddleware(logger: logger))
        let api = router.group("api/v1").add(middleware: ConsoleAuthMiddleware(tokens: tokens))
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
                api.on(RouterPath(String(route.path.dropFirst("/api/v1/".count))), method: route.method, use: handler)
            }
        }
        return router
    }
}

/// Why the console could not start.
public struct ConsoleStartupError: Error, CustomStringConvertible {
    public var description: String
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
            case .conflict: return ConsoleResponses.error(.conflict, error.message)
            case .invalid: return ConsoleResponses.error(.badRequest, error.message)
            }
        } catch let error as HTTPError {
            return ConsoleResponses.error(error.status, error.body ?? "\(error.status)")
        } catch {
            logger.error("console request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return ConsoleResponses.error(.internalServerError, "internal error; see the coordinator's log")
        }
    }
}
