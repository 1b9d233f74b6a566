import ReelScheduling

/// Which side of the protocol a connected peer is (`HELLO … role=`).
public enum PeerRole: String, Hashable, Sendable, CaseIterable {
    /// A render agent: claims tasks, heartbeats, uploads results, fetches sources.
    case agent
    /// An operator client: submits jobs, uploads assets, reads status and outputs.
    case client
}

/// Every message of protocol `reel/1` (proto/PROTOCOL.md §3–4), requests and replies alike.
///
/// `encode()` produces the exact wire bytes (line, `\n`, payload); `Message.parse(line:payload:)`
/// is its total inverse and rejects anything the grammar does not allow. Payload-carrying
/// cases hold their bytes; their `size=` is always derived from the bytes, never stored.
public enum Message: Hashable, Sendable {
    // Handshake (§3).
    /// `HELLO reel/1 role= name= cnonce=` — the connecting peer's first line.
    case hello(version: String, role: PeerRole, name: String, clientNonce: String)
    /// `CHALLENGE nonce=` — the server's fresh nonce.
    case challenge(nonce: String)
    /// `AUTH mac=` — the client's HMAC over both nonces.
    case auth(mac: String)
    /// `WELCOME mac=` — the server's HMAC, proving it knows the secret too.
    case welcome(mac: String)

    // Any role (§4.1).
    case ping
    case pong
    case quit
    case bye
    /// `OK` — a request succeeded and has nothing to return.
    case ok
    /// `ERR code text` — a request failed (§6).
    case error(code: ReelProtocolError.Code, message: String)

    // Agents (§4.2).
    /// `CAPS threads= encoders= cache= host= [finalise=1]`.
    case capabilities(AgentCapabilities)
    /// `CLAIM wait=` — long-poll for one task, `0...60` s.
    case claim(waitSeconds: Int)
    /// `TASK …` + the task specification (JSON, opaque here).
    case task(TaskAssignment, specification: [UInt8])
    /// `NONE` — no task became claimable within the wait.
    case noTask
    /// `DRAIN` — instead of `NONE`: an operator asked this agent to drain (`reel drain`); it
    /// claims nothing more, finishes what it holds within its drain time, and says `QUIT`.
    /// Only sent to agents that said `drain=1` in `CAPS`.
    case drain
    /// `DRAINING seconds=` — the agent is draining (SIGTERM, or told `DRAIN`): it claims
    /// nothing more and hands back within `seconds` what it cannot finish.
    case draining(seconds: Int)
    /// `HEARTBEAT task= epoch=` — renew a lease.
    case heartbeat(task: Int64, epoch: Int64)
    /// `LEASE task= epoch= expires= [drain=1]` — the renewed lease, expiry in ms since the Unix
    /// epoch; `drain=1` as `DRAIN` says it, to an agent busy with a task.
    case lease(task: Int64, epoch: Int64, expiresAtMillis: Int64, drain: Bool = false)
    /// `LOST task=` — the lease is gone; stop and discard.
    case lost(task: Int64)
    /// `PROGRESS task= epoch= frames=`.
    case progress(task: Int64, epoch: Int64, frames: Int64)
    /// `RESULT task= epoch= sha256= size=` + the task's output.
    case result(task: Int64, epoch: Int64, sha256: String, data: [UInt8])
    /// `RESULTPART task= epoch= sha256= offset= total= size=` + bytes `[offset, offset+size)` of
    /// a result of `total` bytes uploaded in ranges (any size; each part within the payload limit).
    case resultPart(task: Int64, epoch: Int64, sha256: String, offset: Int64, total: Int64, bytes: [UInt8])
    /// `POSTER task= epoch= size=` + a small JPEG of the task's last frame, for the console.
    case poster(task: Int64, epoch: Int64, jpeg: [UInt8])
    /// `STORED task= have= total= expires=` — a part of a ranged result was stored; `have` bytes
    /// are held, and the part renewed the lease until `expires` (ms since the Unix epoch).
    case resultStored(task: Int64, have: Int64, total: Int64, expiresAtMillis: Int64)
    /// `ACCEPTED task=` — the result was verified and stored.
    case accepted(task: Int64)
    /// `FAIL task= epoch= reason=` — rendering failed.
    case fail(task: Int64, epoch: Int64, reason: String)
    /// `RELEASE task= epoch=` — hand the task back un-attempted.
    case release(task: Int64, epoch: Int64)
    /// `FETCH sha256= offset= length=` — read a source range by content hash.
    case fetch(sha256: String, offset: Int64, length: Int64)
    /// `DATA offset= total= size=` + bytes — a range of a source or an output.
    case data(offset: Int64, total: Int64, bytes: [UInt8])

    // Direct transfers with an object store (§4.5): presigned URLs instead of bytes.
    /// `SOURCEURL sha256=` — a presigned `GET` for a source (or plan document) by content hash.
    case sourceURL(sha256: String)
    /// `RESULTURL task= epoch= sha256= total=` — a presigned `PUT` for the task's result, bound to its SHA-256.
    case resultURL(task: Int64, epoch: Int64, sha256: String, total: Int64)
    /// `RESULTDONE task= epoch= sha256= total= [upload= size=]` — the result was uploaded (with
    /// `upload=`, as the parts of that multipart upload, whose SHA-256s are the payload:
    /// complete it first); verify it and count it.
    case resultDone(task: Int64, epoch: Int64, sha256: String, total: Int64, upload: UploadedParts? = nil)
    /// `ASSETURL sha256= total=` — a presigned `PUT` for a missing asset, bound to its SHA-256.
    case assetURL(sha256: String, total: Int64)
    /// `ASSETDONE sha256= total= [upload= size=]` — the asset was uploaded (with `upload=`, as
    /// the parts of that multipart upload, whose SHA-256s are the payload: complete it first);
    /// verify it (answered `STORED`).
    case assetDone(sha256: String, total: Int64, upload: UploadedParts? = nil)
    /// `ASSETPARTS sha256= total=` — like `ASSETURL`, but a large asset is uploaded in parts
    /// (answered `PARTS`); a small one gets `URL` (one `PUT`) and a stored one `STORED`.
    case assetParts(sha256: String, total: Int64)
    /// `RESULTPARTS task= epoch= sha256= total=` — like `RESULTURL`, in parts when large
    /// (answered `PARTS`, `URL` or `ACCEPTED`).
    case resultParts(task: Int64, epoch: Int64, sha256: String, total: Int64)
    /// `PARTS sha256= upload= part_size= total= have=` — upload the blob in `part_size` parts
    /// (the last smaller) to multipart upload `upload`; the store holds the parts `have` already.
    case parts(sha256: String, upload: String, partSize: Int64, total: Int64, have: [Int])
    /// `PARTURL sha256= upload= part= part_sha256= length= [task= epoch=]` — a presigned `PUT`
    /// of one part, bound to its SHA-256 (an agent's result part names its lease).
    case partURL(PartURLRequest)
    /// `OUTPUTURL job=` — a presigned `GET` for a finished job's output.
    case outputURL(job: Int64)
    /// `FINALURL task= epoch= sha256= total=` — a presigned `PUT` for the output of the finalise
    /// task an agent holds, bound to the output's SHA-256 (§4.5.1).
    case finalURL(task: Int64, epoch: Int64, sha256: String, total: Int64)
    /// `FINALPARTS task= epoch= sha256= total=` — like `FINALURL`, in parts when large
    /// (answered `PARTS`, or `URL` for one `PUT`), as `RESULTPARTS` is for a result.
    case finalParts(task: Int64, epoch: Int64, sha256: String, total: Int64)
    /// `FINALDONE task= epoch= sha256= total= [loudness=] [upload= size=]` — the output was
    /// uploaded (with `upload=`, as the parts of that multipart upload, whose SHA-256s are the
    /// payload: complete it first); verify it and complete the finalise (so the job), recording
    /// the loudness figures when given.
    case finalDone(task: Int64, epoch: Int64, sha256: String, total: Int64, loudness: String?, upload: UploadedParts? = nil)
    /// `INPUTBAD task= epoch= sha256=` — an input result of the held finalise task did not hash
    /// to `sha256`: the coordinator renders the task(s) of that result again.
    case inputBad(task: Int64, epoch: Int64, sha256: String)
    /// `URL method= url= headers= expires= total=` — a presigned request (a bearer credential:
    /// never logged; `DirectURL`'s description hides its query).
    case url(DirectURL)

    // Operator clients (§4.3).
    /// `SUBMIT size=` + the submission JSON.
    case submit(document: [UInt8])
    /// `JOB job= missing=` — the new job and the asset hashes still to upload.
    case job(id: Int64, missing: [String])
    /// `PUT sha256= offset= total= size=` + bytes of an asset.
    case put(sha256: String, offset: Int64, total: Int64, bytes: [UInt8])
    /// `STORED sha256= have= total=`.
    case stored(sha256: String, have: Int64, total: Int64)
    /// `STATUS [job= [wait=]]`. With `wait=S` (seconds, only with `job=`) the reply waits until
    /// the job has ended (done, failed, cancelled) or S seconds have passed: a follower learns
    /// of the end at once without polling quickly.
    case status(job: Int64?, waitSeconds: Int = 0)
    /// `AGENTS`.
    case agents
    /// `DRAINAGENT name=` — ask the agent of that name (and its slots, `name/1` …) to drain
    /// (`REPORT` with a `DrainReport`).
    case drainAgent(name: String)
    /// `REPORT size=` + a JSON report.
    case report(json: [UInt8])
    /// `CANCEL job=`.
    case cancel(job: Int64)
    /// `RETRY job=`.
    case retry(job: Int64)
    /// `DELETE job=` — remove an ended job with its files.
    case delete(job: Int64)
    /// `OUTPUT job= offset= length=` — read a range of a finished job's output.
    case output(job: Int64, offset: Int64, length: Int64)
    /// `PAUSE job=` — stop handing out the job's tasks (leases already held run on).
    case pause(job: Int64)
    /// `RESUME job=` — hand out a paused job's tasks again.
    case resume(job: Int64)
    /// `BUDGET job= amount=` — set or raise a job's budget (`JobBudget`: `12.50` money, `3.5h`
    /// agent-hours); a job its budget paused resumes when under 90 % of the new one. Answered
    /// `REPORT` with a `BudgetReport`.
    case budget(job: Int64, amount: String)
    /// `PRIORITY job= priority=` — set a job's priority (`JobPriority.range`; higher is claimed first).
    case priority(job: Int64, priority: Int)
    /// `EVENTS job= after=` — the job's history after event id `after` (`REPORT` with an `EventsReport`).
    case events(job: Int64, after: Int64)
    /// `BATCH size=` + a `NewBatchRequest` — open a batch; answered `REPORT` with a `BatchCreated`.
    case batch(document: [UInt8])
    /// `BATCHSTATUS batch= [rows=1]` — a batch's `BatchReport` (`REPORT`), with every row when `rows`.
    case batchStatus(batch: Int64, rows: Bool)
    /// `ESTIMATE size=` + an `EstimateRequest` — predict a render from the farm's history;
    /// answered `REPORT` with a `RenderEstimate`, or `ERR not_ready` when there is no history.
    case estimate(document: [UInt8])
}

/// A job's priority: higher is claimed first; 0 is the default.
public enum JobPriority {
    /// The values `PRIORITY` and `reel submit --priority` accept.
    public static let range: ClosedRange<Int> = -1000...1000
}

/// What an agent can do (`CAPS`).
public struct AgentCapabilities: Hashable, Sendable, Codable {
    /// Encoder threads the agent uses per task.
    public var threads: Int
    /// Encoder names available (`libx264`, `aac`, …).
    public var encoders: [String]
    /// Bytes of source cache.
    public var cacheBytes: Int64
    /// The agent's host name.
    public var host: String
    /// Whether the agent runs finalise tasks (`finalise=1`; §4.5.1). An agent that does not say
    /// so is never handed one.
    public var finalise: Bool
    /// Whether the agent understands `DRAIN` and `LEASE … drain=1` (`drain=1`): only such an
    /// agent can be drained with `reel drain`.
    public var drain: Bool
    /// What the whole agent (all its `threads` render slots) costs an hour, in the farm's
    /// currency (`cost=`, `reel agent --cost-per-hour`); nil: the agent names no price (the
    /// coordinator's price table may). Each slot costs its share, `costPerHour / threads`.
    public var costPerHour: Double?

    public init(threads: Int, encoders: [String], cacheBytes: Int64, host: String, finalise: Bool = false, drain: Bool = false,
                costPerHour: Double? = nil) {
        self.threads = threads; self.encoders = encoders; self.cacheBytes = cacheBytes; self.host = host
        self.finalise = finalise; self.drain = drain; self.costPerHour = costPerHour
    }

    private enum CodingKeys: String, CodingKey { case threads, encoders, cacheBytes, host, finalise, drain, costPerHour }

    /// Capabilities stored before agents could finalise have no `finalise`: false.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(threads: try c.decode(Int.self, forKey: .threads), encoders: try c.decode([String].self, forKey: .encoders),
                  cacheBytes: try c.decode(Int64.self, forKey: .cacheBytes), host: try c.decode(String.self, forKey: .host),
                  finalise: try c.decodeIfPresent(Bool.self, forKey: .finalise) ?? false,
                  drain: try c.decodeIfPresent(Bool.self, forKey: .drain) ?? false,
                  costPerHour: try c.decodeIfPresent(Double.self, forKey: .costPerHour))
    }
}

/// A claimed task under its lease (`TASK` without its specification payload).
public struct TaskAssignment: Hashable, Sendable {
    public var task: Int64
    public var job: Int64
    public var kind: TaskKind
    /// First frame of a video chunk (0 for other kinds).
    public var frameStart: Int64
    /// One past the last frame (0 for other kinds).
    public var frameEnd: Int64
    /// The fencing epoch every later message about this task must carry.
    public var epoch: Int64
    /// Lease expiry in milliseconds since the Unix epoch.
    public var expiresAtMillis: Int64

    public init(task: Int64, job: Int64, kind: TaskKind, frameStart: Int64, frameEnd: Int64, epoch: Int64, expiresAtMillis: Int64) {
        self.task = task; self.job = job; self.kind = kind; self.frameStart = frameStart; self.frameEnd = frameEnd
        self.epoch = epoch; self.expiresAtMillis = expiresAtMillis
    }
}

extension Message {
    /// The verb on the wire.
    public var verb: String {
        switch self {
        case .hello: "HELLO"
        case .challenge: "CHALLENGE"
        case .auth: "AUTH"
        case .welcome: "WELCOME"
        case .ping: "PING"
        case .pong: "PONG"
        case .quit: "QUIT"
        case .bye: "BYE"
        case .ok: "OK"
        case .error: "ERR"
        case .capabilities: "CAPS"
        case .claim: "CLAIM"
        case .task: "TASK"
        case .noTask: "NONE"
        case .drain: "DRAIN"
        case .draining: "DRAINING"
        case .drainAgent: "DRAINAGENT"
        case .heartbeat: "HEARTBEAT"
        case .lease: "LEASE"
        case .lost: "LOST"
        case .progress: "PROGRESS"
        case .result: "RESULT"
        case .resultPart: "RESULTPART"
        case .poster: "POSTER"
        case .accepted: "ACCEPTED"
        case .fail: "FAIL"
        case .release: "RELEASE"
        case .fetch: "FETCH"
        case .data: "DATA"
        case .sourceURL: "SOURCEURL"
        case .resultURL: "RESULTURL"
        case .resultDone: "RESULTDONE"
        case .assetURL: "ASSETURL"
        case .assetDone: "ASSETDONE"
        case .assetParts: "ASSETPARTS"
        case .resultParts: "RESULTPARTS"
        case .parts: "PARTS"
        case .partURL: "PARTURL"
        case .outputURL: "OUTPUTURL"
        case .finalURL: "FINALURL"
        case .finalParts: "FINALPARTS"
        case .finalDone: "FINALDONE"
        case .inputBad: "INPUTBAD"
        case .url: "URL"
        case .submit: "SUBMIT"
        case .job: "JOB"
        case .put: "PUT"
        case .stored, .resultStored: "STORED"
        case .status: "STATUS"
        case .agents: "AGENTS"
        case .report: "REPORT"
        case .cancel: "CANCEL"
        case .retry: "RETRY"
        case .delete: "DELETE"
        case .output: "OUTPUT"
        case .pause: "PAUSE"
        case .resume: "RESUME"
        case .priority: "PRIORITY"
        case .budget: "BUDGET"
        case .events: "EVENTS"
        case .batch: "BATCH"
        case .batchStatus: "BATCHSTATUS"
        case .estimate: "ESTIMATE"
        }
    }

    /// The roles that may send this message as a request once ready; `nil` for handshake
    /// messages and replies (which a ready server never accepts).
    public var requestRoles: Set<PeerRole>? {
        switch self {
        case .ping, .quit, .partURL: [.agent, .client]
        case .capabilities, .claim, .draining, .heartbeat, .progress, .result, .resultPart, .poster, .fail, .release, .fetch,
             .sourceURL, .resultURL, .resultDone, .finalURL, .finalDone, .inputBad, .resultParts, .finalParts: [.agent]
        case .submit, .put, .status, .agents, .drainAgent, .cancel, .retry, .delete, .output, .pause, .resume, .priority, .budget, .events,
             .assetURL, .assetDone, .outputURL, .assetParts, .batch, .batchStatus, .estimate: [.client]
        case .hello, .challenge, .auth, .welcome, .pong, .bye, .ok, .error, .task, .noTask, .drain, .lease, .lost,
             .accepted, .data, .job, .stored, .resultStored, .report, .url, .parts:
            nil
        }
    }
}

/// `PARTURL`: which part of which upload, with the part's SHA-256 and length; `task`/`epoch`
/// for an agent's result (fenced by the lease), `nil` for a client's asset.
public struct PartURLRequest: Hashable, Sendable {
    public var sha256: String
    public var upload: String
    public var part: Int
    public var partSHA256: String
    public var length: Int64
    public var task: Int64?
    public var epoch: Int64?

    public init(sha256: String, upload: String, part: Int, partSHA256: String, length: Int64, task: Int64? = nil, epoch: Int64? = nil) {
        self.sha256 = sha256; self.upload = upload; self.part = part; self.partSHA256 = partSHA256; self.length = length
        self.task = task; self.epoch = epoch
    }
}

/// A multipart upload said done: its id and every part's SHA-256 (hex), part 1 first. The
/// payload of `ASSETDONE`/`RESULTDONE … upload=` is the digests, 64 hex digits each, back to back.
public struct UploadedParts: Hashable, Sendable {
    public var id: String
    public var partSHA256s: [String]

    public init(id: String, partSHA256s: [String]) { self.id = id; self.partSHA256s = partSHA256s }

    var payload: [UInt8] { Array(partSHA256s.joined().utf8) }

    static func decode(id: String, payload: [UInt8], verb: String) throws(ReelProtocolError) -> UploadedParts {
        guard !payload.isEmpty, payload.count % 64 == 0, payload.count / 64 <= 10_000 else {
            throw ReelProtocolError(.malformed, "\(verb): the payload is 1 to 10000 part SHA-256s of 64 hex digits each")
        }
        var digests: [String] = []
        for start in stride(from: 0, to: payload.count, by: 64) {
            let digest = String(decoding: payload[start..<(start + 64)], as: UTF8.self)
            guard ProtocolLine.isHex256(digest) else {
                throw ReelProtocolError(.malformed, "\(verb): part \(start / 64 + 1)'s SHA-256 is not 64 lower-case hex digits")
            }
            digests.append(digest)
        }
        return UploadedParts(id: id, partSHA256s: digests)
    }
}

/// Part numbers written as ascending ranges, `1-3,5` (`PARTS have=`).
public enum PartNumbers {
    public static func encode(_ numbers: [Int]) -> [String] {
        var out: [String] = []
        let sorted = Set(numbers).sorted()
        var index = 0
        while index < sorted.count {
            var end = index
            while end + 1 < sorted.count && sorted[end + 1] == sorted[end] + 1 { end += 1 }
            out.append(end == index ? "\(sorted[index])" : "\(sorted[index])-\(sorted[end])")
            index = end + 1
        }
        return out
    }

    /// - Returns: `nil` for anything but ascending, non-overlapping ranges of 1...10000.
    public static func decode(_ items: [String]) -> [Int]? {
        var numbers: [Int] = []
        for item in items {
            let bounds = item.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard (1...2).contains(bounds.count), let low = bounds.first ?? nil, let high = bounds.last ?? nil,
                  1 <= low, low <= high, high <= 10_000, low > (numbers.last ?? 0) else { return nil }
            numbers += Array(low...high)
        }
        return numbers
    }
}

/// A presigned request handed out in `URL` (proto/PROTOCOL.md §4.5): whoever holds it may do
/// `method` on one object until `expiresAtMillis`, sending exactly `headers` (for a `PUT`, the
/// `x-amz-checksum-sha256` the coordinator bound it to). A bearer credential: its description
/// shows the URL without its query (where the signature is), so it can be logged by mistake
/// without leaking.
public struct DirectURL: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `GET` or `PUT`.
    public var method: String
    public var url: String
    /// Header names (lower case) and values to send as they are.
    public var headers: [String: String]
    public var expiresAtMillis: Int64
    /// The object's size (`GET`), or the bytes to send (`PUT`).
    public var total: Int64

    public init(method: String, url: String, headers: [String: String], expiresAtMillis: Int64, total: Int64) {
        self.method = method; self.url = url; self.headers = headers; self.expiresAtMillis = expiresAtMillis; self.total = total
    }

    /// The URL without its query: what may appear in a message or a log line.
    public var redactedURL: String { url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url }
    public var description: String { "\(method) \(redactedURL)?<signed query redacted>" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["method": method, "url": redactedURL], displayStyle: .struct) }

    /// Methods a `URL` may carry.
    public static let methods: Set<String> = ["GET", "PUT"]
}
