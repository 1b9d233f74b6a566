import Foundation
import ReelCore
import ReelProtocol
import ReelScheduling
import ReelThreadTesting
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Job-end notifications (`reel submit --notify URL`, docs/notifications.md) against a real
/// HTTP receiver on loopback.
@Suite(.database, .blocking) struct NotificationTests {
    /// A submission like `TestMedia.submission()`, with `settings.notify`.
    static func submission(_ media: TestMedia, notify: String?, noCache: Bool? = nil) throws -> [UInt8] {
        let request = SubmitRequest(composition: media.composition(withAudio: false, codec: nil), assets: try media.manifest(),
                                    settings: JobSettings(chunkSeconds: Rational(1, 2), encoderThreads: 1, name: "notified job",
                                                          noCache: noCache, notify: notify))
        return Array(try JSONEncoder().encode(request))
    }

    static func submit(_ client: ReelClient, _ media: TestMedia, notify: String?, noCache: Bool? = nil) async throws -> Int64 {
        try await client.upload(media.video)
        try await client.upload(media.audio)
        guard case .job(let job, let missing) = try await client.send(.submit(document: try submission(media, notify: notify, noCache: noCache))),
              missing.isEmpty else {
            throw TestFailure(description: "SUBMIT did not answer JOB with nothing missing")
        }
        return job
    }

    static func events(_ client: ReelClient, _ job: Int64) async throws -> [JobEvent] {
        guard case .report(let json) = try await client.send(.events(job: job, after: 0)) else { throw TestFailure(description: "EVENTS did not REPORT") }
        return try JSONDecoder().decode(EventsReport.self, from: Data(json)).events
    }

    static func notification(_ request: WebhookReceiver.Request) throws -> JobEndNotification {
        try JSONDecoder().decode(JobEndNotification.self, from: Data(request.body))
    }

    /// The signature checked by its formula, computed here with Python's hmac module (an
    /// independent implementation) for a fixed timestamp and body.
    @Test func theSignatureIsHMACSHA256OfTimestampDotBody() throws {
        let secret = Array(CoordinatorHarness.secret.utf8), body = Array(#"{"event":"job.ended"}"#.utf8)
        let header = NotificationSignature.value(secret: secret, timestamp: 1_700_000_000, body: body)
        #expect(header == "t=1700000000,v1=3cb878b5c11e49addb8ce6f10359bd33aafd0417115d958ed4c10e8624bd8169")
        #expect(NotificationSignature.verify(header, secret: secret, body: body))
        #expect(!NotificationSignature.verify(header, secret: secret, body: body + [0x20]), "another body")
        #expect(!NotificationSignature.verify(header, secret: Array("another secret, long enough".utf8), body: body))
        #expect(!NotificationSignature.verify(header.replacingOccurrences(of: "t=1700000000", with: "t=1700000001"), secret: secret, body: body))
    }

    @Test func theRetryScheduleDoublesUpToItsCapAndEnds() {
        let policy = NotificationRetryPolicy(maxAttempts: 5, baseSeconds: 2, capSeconds: 5)
        #expect(policy.nextAttemptMillis(afterFailedAttempts: 1, nowMillis: 1000) == 3000)
        #expect(policy.nextAttemptMillis(afterFailedAttempts: 2, nowMillis: 1000) == 5000)
        #expect(policy.nextAttemptMillis(afterFailedAttempts: 3, nowMillis: 1000) == 6000, "capped at 5 s")
        #expect(policy.nextAttemptMillis(afterFailedAttempts: 4, nowMillis: 1000) == 6000)
        #expect(policy.nextAttemptMillis(afterFailedAttempts: 5, nowMillis: 1000) == nil, "the fifth attempt was the last")
    }

    /// A rendered job and a cancelled one each get exactly one signed POST, with the job's end
    /// state, and the done one with its output's size.
    @Test func eachEndedJobIsNotifiedOnceAndSigned() async throws {
        let receiver = try WebhookReceiver(answers: [])
        defer { receiver.stop() }
        try await withCoordinator { media, harness, client in
            let url = "http://127.0.0.1:\(receiver.port)/hooks/reel?token=abc"
            let rendered = try await Self.submit(client, media, notify: url)
            let agent = try await harness.agent("render-01")
            try await RenderingAgent(client: agent, harness: harness, workDirectory: try makeWorkDirectory()).work()
            await agent.close()
            let done = try await client.waitForState(job: rendered, "done")
            try await eventually("the receiver gets the rendered job's notification") { receiver.requests.count >= 1 }

            // Not from the cache: the same job again would reuse every chunk of the first and
            // could be done before the cancel arrives (CI once saw "job 2 is already done").
            // With no agent left, this one waits to be rendered until it is cancelled.
            let cancelled = try await Self.submit(client, media, notify: url, noCache: true)
            #expect(try await client.send(.cancel(job: cancelled)) == .ok)
            try await eventually("the receiver gets the cancelled job's notification") { receiver.requests.count >= 2 }

            let requests = receiver.requests
            #expect(requests.count == 2)
            let secret = Array(CoordinatorHarness.secret.utf8)
            for request in requests {
                #expect(request.method == "POST" && request.target == "/hooks/reel?token=abc")
                #expect(request.headers["content-type"] == "application/json")
                let signature = try #require(request.headers["reel-signature"])
                #expect(NotificationSignature.verify(signature, secret: secret, body: request.body), "signed under the farm's secret")
                #expect(!NotificationSignature.verify(signature, secret: Array("not the farm's secret at all".utf8), body: request.body))
            }
            let first = try Self.notification(requests[0]), second = try Self.notification(requests[1])
            #expect(first.event == "job.ended" && first.attempt == 1)
            #expect(first.job.id == rendered && first.job.state == "done" && first.job.name == "notified job")
            #expect(first.job.frameCount == 50 && first.job.framesDone == 50)
            #expect(first.output?.bytes == done.outputBytes && (done.outputBytes ?? 0) > 0)
            #expect(first.output?.fetchCommand == "reel fetch \(rendered) -o FILE")
            #expect(second.job.id == cancelled && second.job.state == "cancelled" && second.output == nil)
            let kinds = try await Self.events(client, rendered).map(\.kind)
            #expect(kinds.filter { $0 == "notified" }.count == 1)
            // The event names the URL without its query (it may hold a token). The notifier
            // records it once the receiver has answered, which may be after the test saw the
            // request arrive: wait for it.
            try await eventually("the cancelled job's notified event") {
                try await Self.events(client, cancelled).contains { $0.kind == "notified" }
            }
            let message = try #require(try await Self.events(client, cancelled).first { $0.kind == "notified" }?.message)
            #expect(message.contains("/hooks/reel") && !message.contains("abc"))
        }
    }

    /// A receiver that answers 500 twice gets the third attempt; each attempt is an event.
    @Test func aFailingReceiverGetsTheThirdAttempt() async throws {
        let receiver = try WebhookReceiver(answers: [500, 500])
        defer { receiver.stop() }
        try await withCoordinator(configure: { $0.notificationRetry = NotificationRetryPolicy(maxAttempts: 5, baseSeconds: 0.05, capSeconds: 0.2) }) { media, harness, client in
            let job = try await Self.submit(client, media, notify: "http://127.0.0.1:\(receiver.port)/hook")
            #expect(try await client.send(.cancel(job: job)) == .ok)
            try await eventually("three attempts reach the receiver") { receiver.requests.count >= 3 }
            try await eventually("the third is recorded as delivered") { try await Self.events(client, job).contains { $0.kind == "notified" } }
            let requests = receiver.requests
            #expect(requests.count == 3)
            #expect(try requests.map { try Self.notification($0).attempt } == [1, 2, 3])
            let events = try await Self.events(client, job).filter { $0.kind.hasPrefix("notif") }
            #expect(events.map(\.kind) == ["notify_failed", "notify_failed", "notified"])
            #expect(events[0].message.contains("answered 500"))
        }
    }

    /// Retries end: a receiver that never answers 2xx gets `maxAttempts` POSTs, then the
    /// notification is abandoned, with an event saying so.
    @Test func retriesEndAfterTheLastAttempt() async throws {
        let receiver = try WebhookReceiver(answers: Array(repeating: 503, count: 10))
        defer { receiver.stop() }
        try await withCoordinator(configure: { $0.notificationRetry = NotificationRetryPolicy(maxAttempts: 3, baseSeconds: 0.05, capSeconds: 0.1) }) { media, harness, client in
            let job = try await Self.submit(client, media, notify: "http://127.0.0.1:\(receiver.port)/hook")
            #expect(try await client.send(.cancel(job: job)) == .ok)
            try await eventually("the notification is abandoned") { try await Self.events(client, job).contains { $0.kind == "notify_abandoned" } }
            #expect(receiver.requests.count == 3)
            let kinds = try await Self.events(client, job).map(\.kind).filter { $0.hasPrefix("notif") }
            #expect(kinds == ["notify_failed", "notify_failed", "notify_abandoned"])
        }
    }

    @Test func aBadNotifyURLIsRefusedAtSubmit() async throws {
        try await withCoordinator { media, _, client in
            for (url, words) in [("ftp://example.com/x", "scheme ftp"), ("not a url", "not a URL"), ("http:///path", "no host")] {
                do {
                    _ = try await client.send(.submit(document: try Self.submission(media, notify: url)))
                    Issue.record("\(url) was accepted")
                } catch let error as ReelProtocolError {
                    #expect(error.code == .invalidComposition)
                    #expect(error.message.contains("settings.notify") && error.message.contains(words), "\(error.message)")
                }
            }
        }
    }
}

/// A minimal HTTP/1.1 server on 127.0.0.1 (blocking sockets on a thread of its own): it keeps
/// every request and answers each with the next status of `answers`, then 200, closing the
/// connection after each answer.
final class WebhookReceiver: Sendable {
    struct Request: Sendable {
        var method: String
        var target: String
        /// Lower-cased names.
        var headers: [String: String]
        var body: [UInt8]
    }

    let port: Int
    private let listener: Int32
    private let state: Mutex<(requests: [Request], answers: [Int], stopped: Bool)>

    var requests: [Request] { state.withLock { $0.requests } }

    init(answers: [Int]) throws {
        state = Mutex((requests: [], answers: answers, stopped: false))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure(description: "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard bound == 0, listen(fd, 16) == 0 else { close(fd); throw TestFailure(description: "bind/listen failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    func stop() {
        state.withLock { $0.stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 { if state.withLock({ $0.stopped }) { return } else { continue } }
            handle(connection)
            close(connection)
        }
    }

    private func handle(_ connection: Int32) {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        func readMore() -> Bool {
            let n = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return false }
            bytes += buffer[0..<n]
            return true
        }
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        while headerEnd == nil {
            if let range = bytes.firstRange(of: separator) { headerEnd = range.upperBound; break }
            guard readMore() else { return }
        }
        let head = String(decoding: bytes[0..<headerEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = head[0].split(separator: " ")
        guard requestLine.count >= 2 else { return }
        var headers: [String: String] = [:]
        for line in head.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while bytes.count - headerEnd! < length { guard readMore() else { return } }
        let request = Request(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers,
                              body: Array(bytes[headerEnd!..<(headerEnd! + length)]))
        let status = state.withLock { s -> Int in
            s.requests.append(request)
            return s.answers.isEmpty ? 200 : s.answers.removeFirst()
        }
        let reply = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Error")\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        _ = Array(reply.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
