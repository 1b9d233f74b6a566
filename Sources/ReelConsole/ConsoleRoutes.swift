import Foundation
import Hummingbird
import ReelProtocol

/// Who may call a route.
enum RouteAccess: Sendable {
    /// No token: the dashboard's static files and `/metrics`.
    case open
    /// Any valid token.
    case read
    /// A token whose role may act (403 for read-only tokens).
    case act
}

/// One route of the console: method, path in OpenAPI form (`/api/v1/jobs/{id}`, which is also
/// Hummingbird's capture syntax), who may call it and what answers. `ConsoleRoutes.all` is the
/// one list the server registers and the test holds against proto/console-api.yaml.
struct ConsoleRoute: Sendable {
    var method: HTTPRequest.Method
    var path: String
    var access: RouteAccess
    /// Whether the token may also come as `?token=` (the preview's playlist and segments: a
    /// media element cannot send an `Authorization` header).
    var queryToken = false
    var handler: @Sendable (Request, ConsoleContext, ConsoleServer.Services) async throws -> Response
}

enum ConsoleRoutes {
    static let all: [ConsoleRoute] = [
        // The dashboard and its files (no token: the page asks for one).
        ConsoleRoute(method: .get, path: "/", access: .open) { _, _, _ in
            ConsoleResponses.page(DashboardPage.html)
        },
        ConsoleRoute(method: .get, path: "/console.css", access: .open) { _, _, _ in
            ConsoleResponses.text(DashboardStyle.css, contentType: "text/css; charset=utf-8")
        },
        ConsoleRoute(method: .get, path: "/console.js", access: .open) { _, _, _ in
            ConsoleResponses.text(DashboardScript.js, contentType: "text/javascript; charset=utf-8")
        },
        ConsoleRoute(method: .get, path: "/metrics", access: .open) { _, _, services in
            ConsoleResponses.text(services.backend.metricsExposition(), contentType: MetricsListener.prometheusText)
        },

        ConsoleRoute(method: .get, path: "/api/v1/session", access: .read) { _, context, _ in
            try ConsoleResponses.json(context.access)
        },
        ConsoleRoute(method: .get, path: "/api/v1/jobs", access: .read) { request, _, services in
            let query = request.uri.queryParameters
            let limit = Int(try Self.integer(query["limit"].map(String.init), name: "limit", in: 1...500) ?? 50)
            var jobs = try await services.backend.jobs(limit: limit)
            if let states = query["state"], !states.isEmpty {
                let wanted = Set(states.split(separator: ",").map(String.init))
                jobs = jobs.filter { wanted.contains($0.state) || (wanted.contains("paused") && $0.paused) }
            }
            return try ConsoleResponses.json(StatusReport(jobs: jobs))
        },
        ConsoleRoute(method: .get, path: "/api/v1/jobs/{id}", access: .read) { _, context, services in
            try ConsoleResponses.json(try await services.backend.job(try Self.jobID(context)))
        },
        ConsoleRoute(method: .get, path: "/api/v1/jobs/{id}/events", access: .read) { request, context, services in
            let query = request.uri.queryParameters
            let after = try Self.integer(query["after"].map(String.init), name: "after", in: 0...Int64.max) ?? 0
            let limit = try Self.integer(query["limit"].map(String.init), name: "limit", in: 1...Int64(EventsReport.pageSize))
            return try ConsoleResponses.json(try await services.backend.events(job: try Self.jobID(context), after: after,
                                                                                limit: Int(limit ?? Int64(EventsReport.pageSize))))
        },
        ConsoleRoute(method: .get, path: "/api/v1/jobs/{id}/poster", access: .read) { _, context, services in
            let job = try Self.jobID(context)
            guard let jpeg = try await services.backend.poster(job: job) else {
                throw ConsoleBackendError(.notFound, "job \(job) has no poster frame yet (agents send one with each finished chunk)")
            }
            return ConsoleResponses.jpeg(jpeg)
        },
        // Watching a render: an HLS playlist of the job's whole timeline, and its pieces (which
        // wait for their chunks while the job renders).
        ConsoleRoute(method: .get, path: "/api/v1/jobs/{id}/preview.m3u8", access: .read, queryToken: true) { request, context, services in
            let playlist = try await services.backend.previewPlaylist(job: try Self.jobID(context))
            // Passed on to the URIs listed only when it came that way: a header-authorised
            // reader has no use for it in URLs.
            let token = request.uri.queryParameters["token"].map(String.init)
            return ConsoleResponses.media(Array(playlist.text(token: token).utf8), contentType: "application/vnd.apple.mpegurl")
        },
        ConsoleRoute(method: .get, path: "/api/v1/jobs/{id}/preview/init.mp4", access: .read, queryToken: true) { _, context, services in
            ConsoleResponses.media(try await services.backend.previewInitSegment(job: try Self.jobID(context)), contentType: "video/mp4")
        },
        ConsoleRoute(method: .get, path: "/api/v1/jobs/{id}/preview/{chunk}.m4s", access: .read, queryToken: true) { _, context, services in
            guard let text = context.parameters.get("chunk"), let chunk = Int(text), chunk >= 0 else {
                throw ConsoleBackendError(.invalid, "the chunk must be a chunk number (0, 1, …), as the preview playlist lists it")
            }
            return ConsoleResponses.media(try await services.backend.previewSegment(job: try Self.jobID(context), chunk: chunk),
                                          contentType: "video/iso.segment")
        },
        ConsoleRoute(method: .get, path: "/api/v1/agents", access: .read) { _, _, services in
            try ConsoleResponses.json(AgentsReport(agents: try await services.backend.agents(),
                                                   coordinators: try await services.backend.coordinators()))
        },
        ConsoleRoute(method: .get, path: "/api/v1/stream", access: .read) { _, _, services in
            services.feed.response()
        },
        // Batches: one job per row of a template's rows, followed as one.
        ConsoleRoute(method: .post, path: "/api/v1/batches", access: .act) { request, _, services in
            var request = request
            let body = try await request.collectBody(upTo: Self.batchBodyLimit)
            let report = try await services.backend.submitBatch(Array(body.readableBytesView))
            return try ConsoleResponses.json(report, status: .created)
        },
        ConsoleRoute(method: .get, path: "/api/v1/batches/{id}", access: .read) { _, context, services in
            try ConsoleResponses.json(try await services.backend.batch(try Self.batchID(context), rows: false))
        },
        ConsoleRoute(method: .get, path: "/api/v1/batches/{id}/rows", access: .read) { _, context, services in
            try ConsoleResponses.json(try await services.backend.batch(try Self.batchID(context), rows: true))
        },
    ] + JobAction.allCases.map { action in
        ConsoleRoute(method: .post, path: "/api/v1/jobs/{id}/\(action.rawValue)", access: .act) { _, context, services in
            let job = try Self.jobID(context)
            try await services.backend.perform(action, job: job)
            return try ConsoleResponses.json(ActionResult(job: job, action: action.rawValue))
        }
    } + [
        ConsoleRoute(method: .put, path: "/api/v1/jobs/{id}/priority", access: .act) { request, context, services in
            let job = try Self.jobID(context)
            var request = request
            let body = try await request.collectBody(upTo: 4096)
            guard let document = try? JSONDecoder().decode(PriorityDocument.self, from: Data(body.readableBytesView)) else {
                throw ConsoleBackendError(.invalid, #"the body must be JSON like {"priority": 10}"#)
            }
            try await services.backend.setPriority(job: job, priority: document.priority)
            return try ConsoleResponses.json(PriorityDocument(priority: document.priority))
        },
    ]

    struct ActionResult: Codable { var job: Int64; var action: String }
    struct PriorityDocument: Codable { var priority: Int }

    /// The largest `POST /api/v1/batches` body, as `SUBMIT`'s payload limit.
    static let batchBodyLimit = 64 << 20

    static func batchID(_ context: ConsoleContext) throws -> Int64 {
        guard let text = context.parameters.get("id"), let id = Int64(text), id > 0 else {
            throw ConsoleBackendError(.invalid, "the batch id must be a positive number (the number after the b of bID)")
        }
        return id
    }

    static func jobID(_ context: ConsoleContext) throws -> Int64 {
        guard let text = context.parameters.get("id"), let id = Int64(text), id > 0 else {
            throw ConsoleBackendError(.invalid, "the job id must be a positive number")
        }
        return id
    }

    static func integer(_ text: String?, name: String, in range: ClosedRange<Int64>) throws -> Int64? {
        guard let text else { return nil }
        guard let value = Int64(text), range.contains(value) else {
            throw ConsoleBackendError(.invalid, "\(name) must be an integer in \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }
}
