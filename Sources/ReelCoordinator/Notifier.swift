import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ReelCore
import ReelProtocol
import ReelScheduling
import ReelStore
import ServiceLifecycle

/// Job-end notifications (`reel submit --notify URL`, docs/notifications.md): when a job ends —
/// done, failed or cancelled, whatever ended it — the coordinator POSTs a `JobEndNotification`
/// to the job's URL, signed under the farm's secret (`Reel-Signature`). Any 2xx answer delivers
/// it; anything else (another status, a refused connection, no answer within
/// `requestTimeout`) is tried again on `NotificationRetryPolicy`'s schedule, and every attempt
/// is an event of the job (`notified`, `notify_failed`, `notify_abandoned`).
///
/// The store decides what is due (`NotificationStore`: a pending row of an ended job whose next
/// attempt has come), so notifications survive a restart: a job that ended while no coordinator
/// ran is notified by the next one. `bell` is rung when a job may have ended (`JobWatchers`);
/// otherwise the loop looks again when the next retry is due, and at least every
/// `idleInterval`. Deliveries run one at a time: a slow receiver delays the others by at most
/// `requestTimeout`.
///
/// Several coordinators may run on one database: each notification is claimed before it is
/// sent (`NotificationStore.due`, `SKIP LOCKED`), and an outcome is recorded only by the attempt
/// that claimed it, so each attempt is made by one coordinator. A coordinator killed after
/// sending but before recording leaves the notification due again when its claim runs out:
/// delivery is at least once, as a receiver must expect of any webhook.
struct Notifier: Service {
    let pool: StorePool
    let authenticator: Authenticator
    let policy: NotificationRetryPolicy
    let clock: FarmClock
    let bell: Doorbell
    let logger: Logger
    var requestTimeout: Duration = .seconds(10)
    var idleInterval: Duration = .seconds(30)
    /// How long a claim outlasts the delivery's own timeout (recording its outcome included).
    static let claimMarginMillis: Int64 = 30_000

    func run() async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton,
                                configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let wait = await pass(client)
                await bell.wait(upTo: wait)
            }
        }
        try? await client.shutdown()
    }

    /// Sends what is due; returns how long to wait before the next pass.
    private func pass(_ client: HTTPClient) async -> Duration {
        do {
            while !Task.isCancelled {
                // One at a time, each claimed for as long as its delivery can take: another
                // coordinator's notifier skips it meanwhile, and takes it over if this one dies.
                let claimMillis = Int64(requestTimeout.components.seconds) * 1000 + Self.claimMarginMillis
                let due = try await pool.run { [clock] in
                    let now = clock.nowMillis()
                    return try $0.notifications.due(nowMillis: now, claimUntilMillis: now + claimMillis, limit: 1)
                }
                guard let notification = due.first else { break }
                await deliver(notification, client)
            }
            guard let next = try await pool.run({ try $0.notifications.nextDueMillis() }) else { return idleInterval }
            return min(idleInterval, .milliseconds(max(0, next - clock.nowMillis())))
        } catch {
            logger.error("notification pass failed", metadata: ["error": "\(error)"])
            return idleInterval
        }
    }

    private func deliver(_ notification: DueNotification, _ client: HTTPClient) async {
        let attempt = notification.attempts + 1
        let failure: String
        do {
            let body = try await document(notification.job, attempt: attempt)
            var request = HTTPClientRequest(url: notification.url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "User-Agent", value: "reel-coordinator")
            request.headers.add(name: NotificationSignature.header,
                                value: authenticator.notificationSignature(timestamp: clock.nowMillis() / 1000, body: body))
            request.body = .bytes(body)
            let response = try await client.execute(request, timeout: .nanoseconds(Int64(requestTimeout.components.seconds) * 1_000_000_000))
            // Read (and bound) the answer so the connection can be reused; its content is not used.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            if (200..<300).contains(response.status.code) {
                try await record(notification.job, attempt, .delivered, "POST \(Self.redacted(notification.url)): \(response.status.code)")
                logger.info("job notified", metadata: ["job": "\(notification.job)", "attempt": "\(attempt)"])
                return
            }
            failure = "answered \(response.status.code)"
        } catch {
            failure = "\(error)"
        }
        let next = policy.nextAttemptMillis(afterFailedAttempts: attempt, nowMillis: clock.nowMillis())
        let target = Self.redacted(notification.url)
        do {
            if let next {
                let inSeconds = Double(next - clock.nowMillis()) / 1000
                try await record(notification.job, attempt, .retryAt(next),
                                 "POST \(target) attempt \(attempt) failed: \(failure); next attempt in \(String(format: "%.1f", inSeconds)) s")
            } else {
                try await record(notification.job, attempt, .abandoned,
                                 "POST \(target) attempt \(attempt) failed: \(failure); no more attempts (\(policy.maxAttempts) made)")
            }
        } catch {
            logger.error("cannot record a notification attempt", metadata: ["job": "\(notification.job)", "error": "\(error)"])
        }
        logger.warning("job notification failed", metadata: ["job": "\(notification.job)", "attempt": "\(attempt)", "error": "\(failure)",
                                                             "retry": "\(next != nil)"])
    }

    private func record(_ job: Int64, _ attempts: Int, _ outcome: NotificationOutcome, _ message: String) async throws {
        _ = try await pool.run { try $0.notifications.record(job: job, attempts: attempts, outcome: outcome, message: message) }
    }

    /// The job as `STATUS` shows it now, wrapped as the notification's body.
    private func document(_ job: Int64, attempt: Int) async throws -> [UInt8] {
        guard let summary = try await pool.run({ try $0.jobs.summary(job) }) else { throw StoreError.jobNotFound(job) }
        let status = CoordinatorHandler.jobStatus(summary, nowMillis: clock.nowMillis(), connectedEncoders: [])
        let output = status.state == "done"
            ? JobEndNotification.Output(fetchCommand: "reel fetch \(job) -o FILE", bytes: status.outputBytes, fileType: status.outputFileType)
            : nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(JobEndNotification(job: status, output: output, attempt: attempt)))
    }

    /// A URL for events and logs: its user information and query removed (either may hold a token).
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "(unparseable URL)" }
        if components.user != nil || components.password != nil { components.user = "***"; components.password = nil }
        if components.query != nil { components.query = "…" }
        return components.string ?? "(unparseable URL)"
    }
}
