import Foundation
import ReelObjectStore
import NIOCore
import NIOPosix
import NIOSSL
import ReelCore
import ReelProtocol
import Synchronization

/// The operator's connection to the coordinator (`role=client`, name `user@host`), with the
/// protocol's failures turned into sentences the user can act on (`UserError`, exit 1).
///
/// One request at a time, as the protocol requires; every request has a timeout so a wedged
/// coordinator never hangs a script. Close it with `close()` (best-effort `QUIT`).
final class OperatorClient: CoordinatorConnection, Sendable {
    let endpoint: HostPort
    let secretPath: String
    private let client: ReelClient
    private let closed = ConnectionClosedFlag()
    /// Set once the coordinator answered a direct-transfer request `no_direct`: this connection
    /// then moves bytes over reel/1 without asking again.
    private let noDirect = ConnectionClosedFlag()

    /// Timeout for small requests (SUBMIT, STATUS, CANCEL, …).
    static let requestTimeout: TimeAmount = .seconds(60)
    /// Timeout for one ranged transfer (`PUT`/`OUTPUT` of up to `rangeLength` bytes).
    static let transferTimeout: TimeAmount = .seconds(300)
    /// Bytes per `PUT`/`OUTPUT` range: well under the 64 MiB payload limit, so progress moves.
    static let rangeLength = 8 << 20

    private init(endpoint: HostPort, secretPath: String, client: ReelClient) {
        self.endpoint = endpoint; self.secretPath = secretPath; self.client = client
        let closed = self.closed
        client.closeFuture.whenComplete { _ in closed.set() }
    }

    /// Whether the connection has closed (the coordinator went away, or a reply timed out).
    var isClosed: Bool { closed.isSet }

    /// Reads the secret, connects and authenticates.
    /// - Throws: `UserError` for a missing/short secret file, an unreachable coordinator or a refused secret.
    ///
    /// With several coordinators (`--coordinator a:7400,b:7400`) it connects to the first that
    /// answers, the one that answered last first; a coordinator that is unreachable or going
    /// away (a transient failure) moves it on to the next. Other refusals are thrown at once.
    static func connect(_ options: ConnectionOptions) async throws -> OperatorClient {
        let endpoints = try options.endpoints()
        let order = Self.endpoints(endpoints)
        var lastError: UserError?
        for endpoint in order.inTryOrder {
            do {
                let client = try await connect(to: endpoint, options)
                order.succeeded(endpoint)
                return client
            } catch let error as UserError where error.transient != nil {
                order.failed(endpoint)
                lastError = error
            }
        }
        throw lastError ?? UserError("no coordinator given")
    }

    /// One `CoordinatorEndpoints` per list for the process, so a reconnection starts where
    /// the last connection succeeded or failed.
    private static let endpointLists = Mutex<[[HostPort]: CoordinatorEndpoints]>([:])

    private static func endpoints(_ list: [HostPort]) -> CoordinatorEndpoints {
        endpointLists.withLock { lists in
            if let known = lists[list] { return known }
            let new = CoordinatorEndpoints(list)
            lists[list] = new
            return new
        }
    }

    private static func connect(to endpoint: HostPort, _ options: ConnectionOptions) async throws -> OperatorClient {
        let secretPath = try options.secretPath()
        let authenticator: Authenticator
        do {
            authenticator = try Authenticator(secretFile: secretPath)
        } catch let error as SecretFileError {
            throw UserError(error.description)
        } catch let error as ReelProtocolError {
            if FileManager.default.isReadableFile(atPath: secretPath) {
                throw UserError("the secret file \(secretPath) is too short: \(error.message) (make one with `head -c 32 /dev/urandom | base64 > \(secretPath)`)")
            }
            throw UserError("cannot read the secret file \(secretPath); pass the farm's secret with --secret-file or REEL_SECRET_FILE")
        }
        var configuration = ReelClientConfiguration(host: endpoint.host, port: endpoint.port, role: .client, name: operatorName())
        if let ca = options.tlsCa {
            try requireReadableFile(ca, what: "the TLS CA certificate")
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(ca)
            do {
                configuration.tls = try NIOSSLContext(configuration: tls)
            } catch {
                throw UserError("cannot use the TLS CA certificate \(ca): \(error)")
            }
            configuration.tlsServerHostname = options.tlsServerName
        }
        do {
            let client = try await ReelClient.connect(configuration: configuration, authenticator: authenticator)
            return OperatorClient(endpoint: endpoint, secretPath: secretPath, client: client)
        } catch let error as ReelProtocolError {
            switch error.code {
            case .authFailed where error.message.contains("prove"):
                throw UserError("the coordinator at \(endpoint) could not prove it knows the secret in \(secretPath); "
                                + "is that really your farm's coordinator, with the same secret?")
            case .authFailed:
                throw UserError("the coordinator refused the secret in \(secretPath)")
            case .malformed, .lineTooLong, .payloadTooLarge:
                throw UserError("whatever answers at \(endpoint) does not speak the Reel protocol (\(error.message)); "
                                + "is that the port of `reel coordinator --listen`?")
            case .internal:
                // Also what a coordinator that is still starting up looks like: worth retrying.
                throw UserError("cannot reach the coordinator at \(endpoint) (the connection closed during the handshake: "
                                + "\(error.message)); is `reel coordinator` running there, and is TLS set up alike on both sides?",
                                transient: .connectionLost)
            case .shuttingDown, .timeout, .tooManyConnections:
                // tooManyConnections: the coordinator's cap on connections still authenticating
                // (proto §3) is full for a moment; like a restart, worth riding out.
                throw UserError("the coordinator at \(endpoint) refused the connection: \(error.message) (\(error.code))",
                                transient: .connectionLost)
            default:
                throw UserError("the coordinator at \(endpoint) refused the connection: \(error.message) (\(error.code))")
            }
        } catch {
            // Refused or unreachable: a coordinator being restarted looks exactly like this.
            throw UserError("cannot reach the coordinator at \(endpoint) (\(describeConnectError(error))); is `reel coordinator` running?",
                            transient: .connectionLost)
        }
    }

    /// The reason a TCP connect failed, in the words of the OS (`Connection refused`) rather
    /// than NIO's nested error dump.
    static func describeConnectError(_ error: Error) -> String {
        if let error = error as? NIOConnectionError {
            if let dns = error.dnsAError ?? error.dnsAAAAError { return "cannot resolve \(error.host): \(dns)" }
            if let first = error.connectionErrors.first { return describeConnectError(first.error) }
        }
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        if let error = error as? ChannelError, case .connectTimeout = error { return "no answer within the connect timeout" }
        return "\(error)"
    }

    /// `user@host`, as `HELLO name=` (shown in the coordinator's logs).
    static func operatorName() -> String {
        let environment = ProcessInfo.processInfo.environment
        let user = environment["USER"] ?? environment["LOGNAME"] ?? (getpwuid(getuid()).flatMap { String(cString: $0.pointee.pw_name) }) ?? "user"
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "host"
        return "\(user)@\(host)"
    }

    /// Sends one request; an `ERR` reply, a timeout or a lost connection becomes a `UserError`,
    /// marked `transient` when the coordinator rather than the request is at fault.
    func call(_ request: Message, timeout: TimeAmount = OperatorClient.requestTimeout) async throws -> Message {
        do {
            return try await client.request(request, timeout: timeout)
        } catch let error as ReelProtocolError {
            throw userError(error, request, timeout: timeout)
        }
    }

    /// Sends a direct-transfer request (proto/PROTOCOL.md §4.5); `nil` when the coordinator hands
    /// out no presigned URLs (a local directory, or a coordinator that predates them).
    func directCall(_ request: Message) async throws -> Message? {
        if noDirect.isSet { return nil }
        do {
            return try await client.request(request, timeout: Self.requestTimeout)
        } catch let error as ReelProtocolError where error.meansNoDirectTransfers {
            noDirect.set()
            return nil
        } catch let error as ReelProtocolError {
            throw userError(error, request, timeout: Self.requestTimeout)
        }
    }

    private func userError(_ error: ReelProtocolError, _ request: Message, timeout: TimeAmount) -> UserError {
            switch error.code {
            case .timeout:
                // ReelClient closes the connection on a timeout (a late reply would desynchronise it).
                return UserError("no reply from the coordinator at \(endpoint) to \(request.verb) within \(timeout.nanoseconds / 1_000_000_000) s",
                                transient: .connectionLost)
            case .internal where error.message.hasPrefix("connection closed") || isClosed:
                return UserError("lost the connection to the coordinator at \(endpoint) (\(error.message))", transient: .connectionLost)
            case .internal:
                // The coordinator's own trouble, most often its database restarting; it recovers by itself.
                return UserError("the coordinator at \(endpoint) failed to handle \(request.verb): \(error.message) (\(error.code))",
                                transient: .internalError)
            case .shuttingDown:
                return UserError("the coordinator at \(endpoint) is shutting down; try again when it is back", transient: .connectionLost)
            default:
                return UserError("\(error.message) (\(error.code))")
            }
    }

    /// `SUBMIT`: queues a job; returns its id and the asset hashes the coordinator lacks.
    func submit(_ request: SubmitRequest) async throws -> (job: Int64, missing: [String]) {
        let document = try JSONCoding.encode(request)
        try SubmissionSize.checkDocument(bytes: document.count)
        let reply = try await call(.submit(document: document))
        guard case let .job(id, missing) = reply else { throw unexpected(reply, to: "SUBMIT") }
        return (id, missing)
    }

    /// Uploads the file at `path` (content hash `sha256`, `size` bytes) in ranges of at most
    /// `rangeLength`, starting where the coordinator says it already is (`have`). An asset the
    /// coordinator already holds is answered `have = total` at once, and the upload ends there.
    /// - Parameter progress: called after every range with the bytes sent so far.
    func upload(sha256: String, path: String, size: Int64, progress: (Int64) -> Void) async throws {
        if try await uploadDirectly(sha256: sha256, path: path, size: size) {
            progress(size)
            return
        }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw UserError("cannot read the asset \(path)") }
        defer { try? handle.close() }
        var offset: Int64 = 0
        repeat {
            try Task.checkCancellation()   // Ctrl-C on reel render: stop between ranges
            try handle.seek(toOffset: UInt64(offset))
            let count = Int(min(Int64(Self.rangeLength), size - offset))
            let bytes = count == 0 ? [] : [UInt8](try handle.read(upToCount: count) ?? Data())
            guard bytes.count == count else {
                throw UserError("the asset \(path) changed while it was uploaded (it was \(size) bytes when hashed); submit again")
            }
            let reply = try await call(.put(sha256: sha256, offset: offset, total: size, bytes: bytes), timeout: Self.transferTimeout)
            guard case let .stored(_, have, _) = reply else { throw unexpected(reply, to: "PUT") }
            if have == size {
                progress(size)
                return
            }
            guard have == offset + Int64(count) else {
                throw UserError("the coordinator holds \(have) bytes of \(path) after a PUT up to \(offset + Int64(count)); submit again")
            }
            offset = have
            progress(offset)
        } while offset < size
    }

    /// With an object store: `ASSETPARTS`, then a large asset in parts straight to the store
    /// (`uploadParts`), a small one with one presigned `PUT` (`uploadWhole`); a coordinator that
    /// predates `ASSETPARTS` is asked `ASSETURL`.
    /// - Returns: `false` when the coordinator hands out no URLs (upload with `PUT` instead).
    private func uploadDirectly(sha256: String, path: String, size: Int64) async throws -> Bool {
        if noDirect.isSet { return false }
        let reply: Message
        do {
            reply = try await client.request(.assetParts(sha256: sha256, total: size), timeout: Self.requestTimeout)
        } catch let error as ReelProtocolError where error.code == .malformed && error.message.hasPrefix("unknown verb") {
            return try await uploadWhole(sha256: sha256, path: path, size: size, first: nil)
        } catch let error as ReelProtocolError where error.meansNoDirectTransfers {
            noDirect.set()
            return false
        } catch let error as ReelProtocolError {
            throw userError(error, .assetParts(sha256: sha256, total: size), timeout: Self.requestTimeout)
        }
        switch reply {
        case .stored(_, let have, _) where have == size:
            return true
        case .url(let url) where url.method == "PUT" && url.total == size:
            return try await uploadWhole(sha256: sha256, path: path, size: size, first: url)
        case .parts(let hash, let upload, let partSize, let total, let have) where hash == sha256 && total == size:
            try await uploadParts(sha256: sha256, path: path, BlobUpload(id: upload, total: size, partSize: partSize, held: have))
            return true
        default:
            throw unexpected(reply, to: "ASSETPARTS")
        }
    }

    /// A large asset in parts (proto/PROTOCOL.md §4.5, "Uploads in parts"): the parts the store
    /// lacks, each through its own `PARTURL`, then `ASSETDONE upload=`, which the coordinator
    /// answers once it has completed the upload and read the object back to check its SHA-256.
    /// When parts fail (past the transfer's own retries) or the coordinator finds parts missing,
    /// it asks `ASSETPARTS` again once and sends only what is still missing; a later `reel
    /// submit` of the same file resumes the same way.
    private func uploadParts(sha256: String, path: String, _ first: BlobUpload) async throws {
        var upload = first
        for attempt in 0..<2 {
            try Task.checkCancellation()
            do {
                let client = self.client
                let report = try await DirectPartUpload(transfer: Self.transfer, window: Self.partsInFlight).send(file: path, upload: upload) { part, partSHA256, length, _ in
                    let request = PartURLRequest(sha256: sha256, upload: upload.id, part: part, partSHA256: partSHA256, length: length)
                    let reply = try await client.request(.partURL(request), timeout: Self.requestTimeout)
                    guard case .url(let url) = reply, url.method == "PUT", url.total == length else { throw self.unexpected(reply, to: "PARTURL") }
                    return DirectPartUpload.PartURL(url: url.url, headers: url.headers)
                }
                let parts = UploadedParts(id: upload.id, partSHA256s: report.partSHA256s)
                let done = try await client.request(.assetDone(sha256: sha256, total: upload.total, upload: parts), timeout: Self.transferTimeout)
                guard case .stored(_, let have, _) = done, have == upload.total else { throw unexpected(done, to: "ASSETDONE") }
                return
            } catch let error as ObjectStoreError where attempt == 0 && error.code != .localFile {
                // A part failed for good, or the upload is gone: ask again below.
            } catch let error as ReelProtocolError where attempt == 0 && error.code == .notFound {
                // The coordinator found parts missing: ask again below.
            } catch let error as ObjectStoreError {
                throw UserError("cannot upload the asset \(path) to the object store: \(error.message)", transient: .internalError)
            } catch let error as ReelProtocolError {
                throw userError(error, .assetDone(sha256: sha256, total: upload.total), timeout: Self.transferTimeout)
            }
            let again = try await call(.assetParts(sha256: sha256, total: upload.total))
            switch again {
            case .stored(_, let have, _) where have == upload.total: return
            case .parts(let hash, let id, let partSize, let total, let have) where hash == sha256 && total == upload.total:
                upload = BlobUpload(id: id, total: total, partSize: partSize, held: have)
            default: throw unexpected(again, to: "ASSETPARTS")
            }
        }
        throw UserError("the upload of \(path) in parts failed twice; submit again to resume it", transient: .internalError)
    }

    /// One presigned `PUT` bound to the asset's SHA-256 straight to the store (`first`, or asked
    /// with `ASSETURL`; asked for again once if it is refused as expired), then `ASSETDONE`.
    private func uploadWhole(sha256: String, path: String, size: Int64, first: DirectURL?) async throws -> Bool {
        var given = first
        for attempt in 0..<2 {
            try Task.checkCancellation()
            let reply: Message
            if let known = given {
                reply = .url(known)
                given = nil
            } else {
                guard let asked = try await directCall(.assetURL(sha256: sha256, total: size)) else { return false }
                reply = asked
            }
            switch reply {
            case .stored(_, let have, _) where have == size:
                return true
            case .url(let url) where url.method == "PUT" && url.total == size:
                do {
                    try await Self.transfer.put(url: url.url, headers: url.headers, file: path)
                } catch let error as ObjectStoreError where error.code == .accessDenied && attempt == 0 {
                    continue
                } catch let error as ObjectStoreError {
                    throw UserError("cannot upload the asset \(path) to the object store: \(error.message)", transient: .internalError)
                }
                let done = try await call(.assetDone(sha256: sha256, total: size))
                guard case .stored(_, let have, _) = done, have == size else { throw unexpected(done, to: "ASSETDONE") }
                return true
            default:
                throw unexpected(reply, to: "ASSETURL")
            }
        }
        throw UserError("the object store refused two presigned uploads of \(path) in a row; submit again")
    }

    /// `OUTPUTURL`: a presigned GET of the job's output, or `nil` when the coordinator hands out
    /// none (read it with `OUTPUT` instead).
    func outputURL(job: Int64) async throws -> DirectURL? {
        guard let reply = try await directCall(.outputURL(job: job)) else { return nil }
        guard case .url(let url) = reply, url.method == "GET" else { throw unexpected(reply, to: "OUTPUTURL") }
        return url
    }

    /// Moves bytes through the presigned URLs the coordinator hands out.
    static let transfer = PresignedTransfer()

    /// Parts of a large asset in flight at once (`DirectPartUpload.window`): three 16 MiB parts
    /// in memory keep the network and the store busy while the next part is read and hashed.
    static let partsInFlight = 3

    /// `STATUS [job= [wait=]]`: the decoded report and its raw JSON. With `waitSeconds` the
    /// coordinator holds the reply until the job has ended or that long has passed.
    func status(job: Int64? = nil, waitSeconds: Int = 0) async throws -> (report: StatusReport, raw: [UInt8]) {
        let reply = try await call(.status(job: job, waitSeconds: waitSeconds), timeout: Self.requestTimeout + .seconds(Int64(waitSeconds)))
        guard case let .report(json) = reply else { throw unexpected(reply, to: "STATUS") }
        return (try JSONCoding.decode(StatusReport.self, from: json, what: "STATUS report"), json)
    }

    /// `BATCH`: opens a batch of `request.rows` rows; returns its id.
    func openBatch(_ request: NewBatchRequest) async throws -> Int64 {
        let reply = try await call(.batch(document: try JSONCoding.encode(request)))
        guard case let .report(json) = reply else { throw unexpected(reply, to: "BATCH") }
        return try JSONCoding.decode(BatchCreated.self, from: json, what: "BATCH reply").batch
    }

    /// `BATCHSTATUS batch= [rows=1]`: the batch's report (every row's with `rows`).
    func batchStatus(_ batch: Int64, rows: Bool) async throws -> BatchReport {
        try await batchStatusReport(batch, rows: rows).report
    }

    /// `BATCHSTATUS`: the decoded report and its raw JSON.
    func batchStatusReport(_ batch: Int64, rows: Bool) async throws -> (report: BatchReport, raw: [UInt8]) {
        let reply = try await call(.batchStatus(batch: batch, rows: rows))
        guard case let .report(json) = reply else { throw unexpected(reply, to: "BATCHSTATUS") }
        return (try JSONCoding.decode(BatchReport.self, from: json, what: "BATCHSTATUS report"), json)
    }

    /// `ESTIMATE`: the coordinator's prediction of a render from the farm's history, and its raw JSON.
    func estimate(_ request: EstimateRequest) async throws -> (estimate: RenderEstimate, raw: [UInt8]) {
        let reply = try await call(.estimate(document: try JSONCoding.encode(request)))
        guard case let .report(json) = reply else { throw unexpected(reply, to: "ESTIMATE") }
        return (try JSONCoding.decode(RenderEstimate.self, from: json, what: "ESTIMATE report"), json)
    }

    /// `AGENTS`: the decoded report and its raw JSON.
    func agents() async throws -> (report: AgentsReport, raw: [UInt8]) {
        let reply = try await call(.agents)
        guard case let .report(json) = reply else { throw unexpected(reply, to: "AGENTS") }
        return (try JSONCoding.decode(AgentsReport.self, from: json, what: "AGENTS report"), json)
    }

    /// `DRAINAGENT name=`: the agents asked to drain (an agent's slots are `name/1` …).
    func drain(agent name: String) async throws -> DrainReport {
        let reply = try await call(.drainAgent(name: name))
        guard case let .report(json) = reply else { throw unexpected(reply, to: "DRAINAGENT") }
        return try JSONCoding.decode(DrainReport.self, from: json, what: "DRAINAGENT report")
    }

    /// `CANCEL job=`.
    func cancel(job: Int64) async throws {
        let reply = try await call(.cancel(job: job))
        guard case .ok = reply else { throw unexpected(reply, to: "CANCEL") }
    }

    /// `RETRY job=`.
    func retry(job: Int64) async throws {
        let reply = try await call(.retry(job: job))
        guard case .ok = reply else { throw unexpected(reply, to: "RETRY") }
    }

    /// `DELETE job=`.
    func delete(job: Int64) async throws {
        let reply = try await call(.delete(job: job))
        guard case .ok = reply else { throw unexpected(reply, to: "DELETE") }
    }

    /// `PAUSE job=`.
    func pause(job: Int64) async throws {
        let reply = try await call(.pause(job: job))
        guard case .ok = reply else { throw unexpected(reply, to: "PAUSE") }
    }

    /// `RESUME job=`.
    func resume(job: Int64) async throws {
        let reply = try await call(.resume(job: job))
        guard case .ok = reply else { throw unexpected(reply, to: "RESUME") }
    }

    /// `BUDGET job= amount=`: the budget set, what the job spent of it, and whether it stays paused.
    func setBudget(job: Int64, amount: String) async throws -> BudgetReport {
        let reply = try await call(.budget(job: job, amount: amount))
        guard case let .report(json) = reply else { throw unexpected(reply, to: "BUDGET") }
        return try JSONCoding.decode(BudgetReport.self, from: json, what: "BUDGET report")
    }

    /// `PRIORITY job= priority=`.
    func setPriority(job: Int64, priority: Int) async throws {
        let reply = try await call(.priority(job: job, priority: priority))
        guard case .ok = reply else { throw unexpected(reply, to: "PRIORITY") }
    }

    /// The job's whole history: `EVENTS` page after page until a page is not full.
    func events(job: Int64) async throws -> [JobEvent] {
        var events: [JobEvent] = []
        while true {
            let reply = try await call(.events(job: job, after: events.last?.id ?? 0))
            guard case let .report(json) = reply else { throw unexpected(reply, to: "EVENTS") }
            let page = try JSONCoding.decode(EventsReport.self, from: json, what: "EVENTS report").events
            events += page
            if page.count < EventsReport.pageSize { return events }
        }
    }

    /// `OUTPUT job= offset=`: up to `rangeLength` bytes of the job's output from `offset`, with
    /// the offset the coordinator answered for and the output's total size.
    func outputRange(job: Int64, offset: Int64) async throws -> (at: Int64, total: Int64, bytes: [UInt8]) {
        let reply = try await call(.output(job: job, offset: offset, length: Int64(Self.rangeLength)), timeout: Self.transferTimeout)
        guard case let .data(at, total, bytes) = reply else { throw unexpected(reply, to: "OUTPUT") }
        return (at, total, bytes)
    }

    /// Best-effort `QUIT`, then close.
    func close() async { await client.close() }

    private func unexpected(_ reply: Message, to verb: String) -> UserError {
        UserError("the coordinator at \(endpoint) answered \(verb) with \(reply.verb); are client and coordinator the same Reel version?")
    }
}

/// JSON for protocol documents: sorted keys (stable bytes), decoding failures as user-facing errors.
enum JSONCoding {
    static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(value))
    }

    static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8], what: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch {
            throw UserError("cannot read the coordinator's \(what) (\(error)); are client and coordinator the same Reel version?")
        }
    }
}

/// Set once when a connection closes (from an event loop), read from the client's task.
final class ConnectionClosedFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
