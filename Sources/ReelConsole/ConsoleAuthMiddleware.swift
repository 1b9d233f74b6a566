import Hummingbird

/// Every `/api/` request needs `Authorization: Bearer TOKEN` with a valid console token:
/// without one, or with a tampered, expired or other-farm token, 401 (with the reason and
/// `WWW-Authenticate: Bearer`). Whether the token may act is checked by the route (403).
/// With `queryToken` (the preview's routes, fetched by a media element that cannot send a
/// header), `?token=TOKEN` is accepted too when there is no `Authorization` header; it is
/// verified the same way. Nothing here logs a token, and the error middleware logs paths only.
struct ConsoleAuthMiddleware: RouterMiddleware {
    typealias Context = ConsoleContext
    let tokens: ConsoleTokens
    var queryToken = false

    func handle(_ request: Request, context: ConsoleContext,
                next: (Request, ConsoleContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            if queryToken, let token = request.uri.queryParameters["token"] {
                guard !token.isEmpty else { return ConsoleResponses.unauthorized("`?token=` is empty; give a console token (get one with `reel token`)") }
                var context = context
                do {
                    context.access = try await tokens.verify(String(token))
                } catch {
                    return ConsoleResponses.unauthorized(error.description)
                }
                return try await next(request, context)
            }
            return ConsoleResponses.unauthorized(queryToken
                ? "this request needs a console token: send `Authorization: Bearer TOKEN` or add `?token=TOKEN` (get one with `reel token`)"
                : "this request needs a console token: send `Authorization: Bearer TOKEN` (get one with `reel token`)")
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
