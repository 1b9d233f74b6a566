import ReelScheduling

extension Message {
    /// Parses one line (without `\n`) and the payload the framer read after it.
    ///
    /// Total: any input either yields the message it encodes or throws a
    /// `ReelProtocolError` with code `.malformed` naming the problem. `payload` must be
    /// non-nil exactly when the line has `size=` (the framer guarantees it), and its length
    /// must equal `size`.
    public static func parse(line text: String, payload: [UInt8]? = nil) throws(ReelProtocolError) -> Message {
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw ReelProtocolError(.malformed, "control character in line")
        }
        if text == "ERR" || text.hasPrefix("ERR ") {
            return try parseError(text)
        }
        var line = try ProtocolLine(parsing: text)
        let message = try parseFields(&line, payload: payload)
        try line.finish()
        return message
    }

    private static func parseError(_ text: String) throws(ReelProtocolError) -> Message {
        let rest = text.dropFirst(4)
        let code = rest.prefix { $0 != " " }
        guard !code.isEmpty, ProtocolLine.isValidKey(code) else {
            throw ReelProtocolError(.malformed, "ERR needs a code")
        }
        let message = rest.dropFirst(code.count).dropFirst()
        if message.isEmpty && rest.count > code.count {
            throw ReelProtocolError(.malformed, "ERR with a trailing space and no text")
        }
        return .error(code: .init(String(code)), message: String(message))
    }

    private static func parseFields(_ line: inout ProtocolLine, payload: [UInt8]?) throws(ReelProtocolError) -> Message {
        /// The payload announced by `size=`; consumed here so `finish()` accepts it.
        func body(_ line: inout ProtocolLine) throws(ReelProtocolError) -> [UInt8] {
            let size = try line.integer("size", in: 0...Int64(ProtocolLimits.maxPayloadLength))
            guard let payload, payload.count == size else {
                throw ReelProtocolError(.malformed, "\(line.verb): payload length does not match size=\(size)")
            }
            return payload
        }
        /// `offset=`, `total=` and the payload of a ranged message (`DATA`, `PUT`, `RESULTPART`),
        /// which must fit within `total`.
        func range(_ line: inout ProtocolLine) throws(ReelProtocolError) -> (offset: Int64, total: Int64, bytes: [UInt8]) {
            let offset = try line.integer("offset")
            let total = try line.integer("total")
            let bytes = try body(&line)
            guard Message.fits(offset: offset, count: bytes.count, total: total) else {
                throw ReelProtocolError(.malformed, "\(line.verb): offset + size exceeds total")
            }
            return (offset, total, bytes)
        }
        if payload != nil, !["TASK", "RESULT", "RESULTPART", "POSTER", "DATA", "SUBMIT", "BATCH", "ESTIMATE", "PUT", "REPORT", "ASSETDONE", "RESULTDONE", "FINALDONE"].contains(line.verb) {
            throw ReelProtocolError(.malformed, "\(line.verb) carries no payload")
        }
        let id: ClosedRange<Int64> = 1...Int64.max
        switch line.verb {
        case "HELLO":
            let version = try line.positional("protocol version")
            let roleName = try line.string("role")
            guard let role = PeerRole(rawValue: roleName) else {
                throw ReelProtocolError(.malformed, "HELLO: unknown role '\(roleName)'")
            }
            return .hello(version: version, role: role, name: try line.name("name"), clientNonce: try line.hex256("cnonce"))
        case "CHALLENGE": return .challenge(nonce: try line.hex256("nonce"))
        case "AUTH": return .auth(mac: try line.hex256("mac"))
        case "WELCOME": return .welcome(mac: try line.hex256("mac"))
        case "PING": return .ping
        case "PONG": return .pong
        case "QUIT": return .quit
        case "BYE": return .bye
        case "OK": return .ok
        case "CAPS":
            return .capabilities(AgentCapabilities(
                threads: Int(try line.integer("threads", in: 1...4096)),
                encoders: try line.list("encoders"),
                cacheBytes: try line.integer("cache"),
                host: try line.name("host"),
                finalise: try line.optionalInteger("finalise", in: 0...1) == 1,
                drain: try line.optionalInteger("drain", in: 0...1) == 1,
                costPerHour: try line.optionalDecimal("cost")))
        case "CLAIM":
            return .claim(waitSeconds: Int(try line.integer("wait", in: 0...Int64(ProtocolLimits.maxClaimWait))))
        case "TASK":
            let task = try line.integer("task", in: id)
            let job = try line.integer("job", in: id)
            let kindName = try line.string("kind")
            guard let kind = TaskKind(rawValue: kindName) else {
                throw ReelProtocolError(.malformed, "TASK: unknown kind '\(kindName)'")
            }
            let start = try line.integer("start")
            let end = try line.integer("end")
            guard start <= end else { throw ReelProtocolError(.malformed, "TASK: start > end") }
            let assignment = TaskAssignment(task: task, job: job, kind: kind, frameStart: start, frameEnd: end,
                                            epoch: try line.integer("epoch", in: id), expiresAtMillis: try line.integer("expires"))
            return .task(assignment, specification: try body(&line))
        case "NONE": return .noTask
        case "DRAIN": return .drain
        case "DRAINING": return .draining(seconds: Int(try line.integer("seconds", in: 0...86_400)))
        case "DRAINAGENT": return .drainAgent(name: try line.name("name"))
        case "HEARTBEAT": return .heartbeat(task: try line.integer("task", in: id), epoch: try line.integer("epoch", in: id))
        case "LEASE":
            return .lease(task: try line.integer("task", in: id), epoch: try line.integer("epoch", in: id),
                          expiresAtMillis: try line.integer("expires"), drain: try line.optionalInteger("drain", in: 0...1) == 1)
        case "LOST": return .lost(task: try line.integer("task", in: id))
        case "PROGRESS":
            return .progress(task: try line.integer("task", in: id), epoch: try line.integer("epoch", in: id),
                             frames: try line.integer("frames"))
        case "RESULT":
            return .result(task: try line.integer("task", in: id), epoch: try line.integer("epoch", in: id),
                           sha256: try line.hex256("sha256"), data: try body(&line))
        case "POSTER":
            return .poster(task: try line.integer("task", in: id), epoch: try line.integer("epoch", in: id), jpeg: try body(&line))
        case "RESULTPART":
            let task = try line.integer("task", in: id)
            let epoch = try line.integer("epoch", in: id)
            let sha = try line.hex256("sha256")
            let part = try range(&line)
            return .resultPart(task: task, epoch: epoch, sha256: sha, offset: part.offset, total: part.total, bytes: part.bytes)
        case "ACCEPTED": return .accepted(task: try line.integer("task", in: id))
        case "FAIL":
            return .fail(task: try line.integer("task", in: id), epoch: try line.integer("epoch", in: id),
                         reason: try line.string("reason"))
        case "RELEASE": return .release(task: try line.integer("task", in: id), epoch: try line.integer("epoch", in: id))
        case "FETCH":
            return .fetch(sha256: try line.hex256("sha256"), offset: try line.integer("offset"),
                          length: try line.integer("length", in: 1...Int64(ProtocolLimits.maxPayloadLength)))
        case "DATA":
            let data = try range(&line)
            return .data(offset: data.offset, total: data.total, bytes: data.bytes)
        case "SOURCEURL": return .sourceURL(sha256: try line.hex256("sha256"))
        case "RESULTURL", "RESULTDONE", "RESULTPARTS":
            let task = try line.integer("task", in: id)
            let epoch = try line.integer("epoch", in: id)
            let sha = try line.hex256("sha256")
            let total = try line.integer("total")
            switch line.verb {
            case "RESULTURL": return .resultURL(task: task, epoch: epoch, sha256: sha, total: total)
            case "RESULTPARTS": return .resultParts(task: task, epoch: epoch, sha256: sha, total: total)
            default:
                guard let upload = try line.optionalUpload() else { return .resultDone(task: task, epoch: epoch, sha256: sha, total: total) }
                return .resultDone(task: task, epoch: epoch, sha256: sha, total: total,
                                   upload: try UploadedParts.decode(id: upload, payload: try body(&line), verb: line.verb))
            }
        case "ASSETURL", "ASSETDONE", "ASSETPARTS":
            let sha = try line.hex256("sha256")
            let total = try line.integer("total")
            switch line.verb {
            case "ASSETURL": return .assetURL(sha256: sha, total: total)
            case "ASSETPARTS": return .assetParts(sha256: sha, total: total)
            default:
                guard let upload = try line.optionalUpload() else { return .assetDone(sha256: sha, total: total) }
                return .assetDone(sha256: sha, total: total, upload: try UploadedParts.decode(id: upload, payload: try body(&line), verb: line.verb))
            }
        case "PARTS":
            let sha = try line.hex256("sha256")
            let upload = try line.upload()
            let partSize = try line.integer("part_size", in: 1...Int64.max)
            let total = try line.integer("total")
            guard let have = PartNumbers.decode(try line.list("have")) else {
                throw ReelProtocolError(.malformed, "PARTS: have= takes ascending part numbers and ranges of 1 to 10000 (1-3,5)")
            }
            return .parts(sha256: sha, upload: upload, partSize: partSize, total: total, have: have)
        case "PARTURL":
            let sha = try line.hex256("sha256")
            let upload = try line.upload()
            let part = Int(try line.integer("part", in: 1...10_000))
            let partSHA = try line.hex256("part_sha256")
            let length = try line.integer("length")
            let task = try line.optionalInteger("task", in: id)
            let epoch = try line.optionalInteger("epoch", in: id)
            guard (task == nil) == (epoch == nil) else { throw ReelProtocolError(.malformed, "PARTURL: task= and epoch= go together") }
            return .partURL(PartURLRequest(sha256: sha, upload: upload, part: part, partSHA256: partSHA, length: length, task: task, epoch: epoch))
        case "OUTPUTURL": return .outputURL(job: try line.integer("job", in: id))
        case "FINALURL", "FINALPARTS", "FINALDONE":
            let task = try line.integer("task", in: id)
            let epoch = try line.integer("epoch", in: id)
            let sha = try line.hex256("sha256")
            let total = try line.integer("total")
            switch line.verb {
            case "FINALURL": return .finalURL(task: task, epoch: epoch, sha256: sha, total: total)
            case "FINALPARTS": return .finalParts(task: task, epoch: epoch, sha256: sha, total: total)
            default:
                let loudness = line.optionalString("loudness")
                guard let upload = try line.optionalUpload() else {
                    return .finalDone(task: task, epoch: epoch, sha256: sha, total: total, loudness: loudness)
                }
                return .finalDone(task: task, epoch: epoch, sha256: sha, total: total, loudness: loudness,
                                  upload: try UploadedParts.decode(id: upload, payload: try body(&line), verb: line.verb))
            }
        case "INPUTBAD":
            return .inputBad(task: try line.integer("task", in: id), epoch: try line.integer("epoch", in: id), sha256: try line.hex256("sha256"))
        case "URL":
            let method = try line.string("method")
            guard DirectURL.methods.contains(method) else { throw ReelProtocolError(.malformed, "URL: method=\(method) is not GET or PUT") }
            let url = try line.name("url")
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw ReelProtocolError(.malformed, "URL: url= must be an http or https URL")
            }
            var headers: [String: String] = [:]
            for item in try line.list("headers") {
                guard let colon = item.firstIndex(of: ":"), colon != item.startIndex else {
                    throw ReelProtocolError(.malformed, "URL: headers= takes NAME:VALUE items")
                }
                let name = item[..<colon].lowercased()
                guard headers[name] == nil else { throw ReelProtocolError(.malformed, "URL: header \(name) given twice") }
                headers[name] = String(item[item.index(after: colon)...])
            }
            return .url(DirectURL(method: method, url: url, headers: headers, expiresAtMillis: try line.integer("expires"),
                                  total: try line.integer("total")))
        case "SUBMIT": return .submit(document: try body(&line))
        case "JOB":
            let job = try line.integer("job", in: id)
            let missing = try line.list("missing")
            guard missing.allSatisfy(ProtocolLine.isHex256) else {
                throw ReelProtocolError(.malformed, "JOB: missing= must list SHA-256 hashes")
            }
            return .job(id: job, missing: missing)
        case "PUT":
            let sha = try line.hex256("sha256")
            let part = try range(&line)
            return .put(sha256: sha, offset: part.offset, total: part.total, bytes: part.bytes)
        case "STORED":
            // `task=` answers a RESULTPART, `sha256=` a PUT.
            if let task = try line.optionalInteger("task", in: id) {
                return .resultStored(task: task, have: try line.integer("have"), total: try line.integer("total"),
                                     expiresAtMillis: try line.integer("expires"))
            }
            return .stored(sha256: try line.hex256("sha256"), have: try line.integer("have"), total: try line.integer("total"))
        case "STATUS":
            let job = try line.optionalInteger("job", in: id)
            let wait = try line.optionalInteger("wait", in: 0...Int64(ProtocolLimits.maxStatusWait))
            if wait != nil, job == nil { throw ReelProtocolError(.malformed, "STATUS wait= needs job=") }
            return .status(job: job, waitSeconds: Int(wait ?? 0))
        case "AGENTS": return .agents
        case "REPORT": return .report(json: try body(&line))
        case "CANCEL": return .cancel(job: try line.integer("job", in: id))
        case "RETRY": return .retry(job: try line.integer("job", in: id))
        case "DELETE": return .delete(job: try line.integer("job", in: id))
        case "OUTPUT":
            return .output(job: try line.integer("job", in: id), offset: try line.integer("offset"),
                           length: try line.integer("length", in: 1...Int64(ProtocolLimits.maxPayloadLength)))
        case "PAUSE": return .pause(job: try line.integer("job", in: id))
        case "RESUME": return .resume(job: try line.integer("job", in: id))
        case "PRIORITY":
            let job = try line.integer("job", in: id)
            return .priority(job: job, priority: Int(try line.signedInteger("priority", in: Int64(JobPriority.range.lowerBound)...Int64(JobPriority.range.upperBound))))
        case "BUDGET": return .budget(job: try line.integer("job", in: id), amount: try line.string("amount"))
        case "EVENTS": return .events(job: try line.integer("job", in: id), after: try line.integer("after"))
        case "BATCH": return .batch(document: try body(&line))
        case "ESTIMATE": return .estimate(document: try body(&line))
        case "BATCHSTATUS":
            return .batchStatus(batch: try line.integer("batch", in: id), rows: try line.optionalInteger("rows", in: 0...1) == 1)
        default:
            throw ReelProtocolError(.malformed, "unknown verb '\(line.verb)'")
        }
    }

    /// `offset + count <= total` without overflow (a hostile `offset` near `Int64.max` must be
    /// refused, not trap).
    private static func fits(offset: Int64, count: Int, total: Int64) -> Bool {
        let (end, overflow) = offset.addingReportingOverflow(Int64(count))
        return !overflow && end <= total
    }
}
