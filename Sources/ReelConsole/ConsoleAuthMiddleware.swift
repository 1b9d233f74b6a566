import Hummingbird

/// Every `/api/` request needs `Authorization: Bearer TOKEN` with a valid console token:
/// without one, or with a tampered, expired or other-farm token, 401 (with the reason and
/// `WWW-Authenticate: Bearer`). Whether the token may act is checked by the route (403).
struct ConsoleAuthMiddleware: RouterMiddleware {
    typealias Context = ConsoleContext
    let tokens: ConsoleTokens

    func handle(_ request: Request, context: ConsoleContext,
                next: (Request, ConsoleContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            return ConsoleResponses.unauthorized("this request needs a console token: send `Authorization: Bearer TOKEN` (get one with `reel token`)")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty else {
            return ConsoleResponses.unauthorized("the Authorization header must be `Bearer TOKEN`")
        }
        var context = context
        do {
            context.access = try await tokens.verify(String(parts[1]).trimmingCharacters(in: .whitespaces))
        } catch {
            return ConsoleResponses.unauthorized(error.description)
        }
        return try await next(request, context)
    }
}
