extension Message {
    /// The header line without its `\n`, keys in the order proto/PROTOCOL.md lists them.
    public var headerLine: String {
        var line = LineWriter(verb)
        switch self {
        case let .hello(version, role, name, clientNonce):
            line.positional(version)
            line.add("role", role.rawValue)
            line.add("name", name)
            line.add("cnonce", clientNonce)
        case let .challenge(nonce):
            line.add("nonce", nonce)
        case let .auth(mac), let .welcome(mac):
            line.add("mac", mac)
        case .ping, .pong, .quit, .bye, .ok, .noTask, .drain, .agents:
            break
        case let .error(code, message):
            // ERR's text is raw (§2): keep it on one line by replacing control characters.
            let text = String(String.UnicodeScalarView(message.unicodeScalars.map {
                $0.value < 0x20 || $0.value == 0x7F ? " " : $0
            }))
            return text.isEmpty ? "ERR \(code.rawValue)" : "ERR \(code.rawValue) \(text)"
        case let .capabilities(caps):
            line.add("threads", caps.threads)
            line.add("encoders", list: caps.encoders)
            line.add("cache", caps.cacheBytes)
            line.add("host", caps.host)
            if caps.finalise { line.add("finalise", 1) }
            if caps.drain { line.add("drain", 1) }
            if let cost = caps.costPerHour { line.add("cost", ProtocolLine.decimal(cost)) }
        case let .draining(seconds):
            line.add("seconds", seconds)
        case let .drainAgent(name):
            line.add("name", name)
        case let .claim(wait):
            line.add("wait", wait)
        case let .task(assignment, specification):
            line.add("task", assignment.task)
            line.add("job", assignment.job)
            line.add("kind", assignment.kind.rawValue)
            line.add("start", assignment.frameStart)
            line.add("end", assignment.frameEnd)
            line.add("epoch", assignment.epoch)
            line.add("expires", assignment.expiresAtMillis)
            line.add("size", specification.count)
        case let .heartbeat(task, epoch), let .release(task, epoch):
            line.add("task", task)
            line.add("epoch", epoch)
        case let .lease(task, epoch, expires, drain):
            line.add("task", task)
            line.add("epoch", epoch)
            line.add("expires", expires)
            if drain { line.add("drain", 1) }
        case let .lost(task), let .accepted(task):
            line.add("task", task)
        case let .progress(task, epoch, frames):
            line.add("task", task)
            line.add("epoch", epoch)
            line.add("frames", frames)
        case let .result(task, epoch, sha256, data):
            line.add("task", task)
            line.add("epoch", epoch)
            line.add("sha256", sha256)
            line.add("size", data.count)
        case let .poster(task, epoch, jpeg):
            line.add("task", task)
            line.add("epoch", epoch)
            line.add("size", jpeg.count)
        case let .resultPart(task, epoch, sha256, offset, total, bytes):
            line.add("task", task)
            line.add("epoch", epoch)
            line.add("sha256", sha256)
            line.addRange(offset: offset, total: total, size: bytes.count)
        case let .resultStored(task, have, total, expires):
            line.add("task", task)
            line.add("have", have)
            line.add("total", total)
            line.add("expires", expires)
        case let .fail(task, epoch, reason):
            line.add("task", task)
            line.add("epoch", epoch)
            line.add("reason", reason)
        case let .fetch(sha256, offset, length):
            line.add("sha256", sha256)
            line.add("offset", offset)
            line.add("length", length)
        case let .data(offset, total, bytes):
            line.addRange(offset: offset, total: total, size: bytes.count)
        case let .sourceURL(sha256):
            line.add("sha256", sha256)
        case let .resultURL(task, epoch, sha256, total), let .resultParts(task, epoch, sha256, total),
             let .finalURL(task, epoch, sha256, total), let .finalParts(task, epoch, sha256, total):
            line.add("task", task)
            line.add("epoch", epoch)
            line.add("sha256", sha256)
            line.add("total", total)
        case let .resultDone(task, epoch, sha256, total, upload):
            line.add("task", task)
            line.add("epoch", epoch)
            line.add("sha256", sha256)
            line.add("total", total)
            if let upload {
                line.add("upload", upload.id)
                line.add("size", upload.payload.count)
            }
        case let .assetURL(sha256, total), let .assetParts(sha256, total):
            line.add("sha256", sha256)
            line.add("total", total)
        case let .assetDone(sha256, total, upload):
            line.add("sha256", sha256)
            line.add("total", total)
            if let upload {
                line.add("upload", upload.id)
                line.add("size", upload.payload.count)
            }
        case let .parts(sha256, upload, partSize, total, have):
            line.add("sha256", sha256)
            line.add("upload", upload)
            line.add("part_size", partSize)
            line.add("total", total)
            line.add("have", list: PartNumbers.encode(have))
        case let .partURL(request):
            line.add("sha256", request.sha256)
            line.add("upload", request.upload)
            line.add("part", Int64(request.part))
            line.add("part_sha256", request.partSHA256)
            line.add("length", request.length)
            if let task = request.task { line.add("task", task) }
            if let epoch = request.epoch { line.add("epoch", epoch) }
        case let .outputURL(job):
            line.add("job", job)
        case let .finalDone(task, epoch, sha256, total, loudness, upload):
            line.add("task", task)
            line.add("epoch", epoch)
            line.add("sha256", sha256)
            line.add("total", total)
            if let loudness { line.add("loudness", loudness) }
            if let upload {
                line.add("upload", upload.id)
                line.add("size", upload.payload.count)
            }
        case let .inputBad(task, epoch, sha256):
            line.add("task", task)
            line.add("epoch", epoch)
            line.add("sha256", sha256)
        case let .url(direct):
            line.add("method", direct.method)
            line.add("url", direct.url)
            line.add("headers", list: direct.headers.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" })
            line.add("expires", direct.expiresAtMillis)
            line.add("total", direct.total)
        case let .submit(document), let .batch(document), let .estimate(document):
            line.add("size", document.count)
        case let .job(id, missing):
            line.add("job", id)
            line.add("missing", list: missing)
        case let .put(sha256, offset, total, bytes):
            line.add("sha256", sha256)
            line.addRange(offset: offset, total: total, size: bytes.count)
        case let .stored(sha256, have, total):
            line.add("sha256", sha256)
            line.add("have", have)
            line.add("total", total)
        case let .status(job, waitSeconds):
            if let job { line.add("job", job) }
            if waitSeconds > 0 { line.add("wait", waitSeconds) }
        case let .report(json):
            line.add("size", json.count)
        case let .cancel(job), let .retry(job), let .delete(job), let .pause(job), let .resume(job):
            line.add("job", job)
        case let .priority(job, priority):
            line.add("job", job)
            line.add("priority", priority)
        case let .budget(job, amount):
            line.add("job", job)
            line.add("amount", amount)
        case let .events(job, after):
            line.add("job", job)
            line.add("after", after)
        case let .output(job, offset, length):
            line.add("job", job)
            line.add("offset", offset)
            line.add("length", length)
        case let .batchStatus(batch, rows):
            line.add("batch", batch)
            if rows { line.add("rows", 1) }
        }
        return line.text
    }

    /// The payload that follows the header line, for the verbs that carry one.
    public var payload: [UInt8]? {
        switch self {
        case let .task(_, bytes), let .result(_, _, _, bytes), let .resultPart(_, _, _, _, _, bytes), let .poster(_, _, bytes), let .data(_, _, bytes),
             let .submit(bytes), let .batch(bytes), let .estimate(bytes), let .put(_, _, _, bytes), let .report(bytes):
            bytes
        case let .assetDone(_, _, upload?), let .resultDone(_, _, _, _, upload?), let .finalDone(_, _, _, _, _, upload?):
            upload.payload
        default:
            nil
        }
    }

    /// The exact wire bytes: header line, `\n`, then the payload if any.
    public func encode() -> [UInt8] {
        var bytes = Array(headerLine.utf8)
        bytes.append(UInt8(ascii: "\n"))
        if let payload { bytes.append(contentsOf: payload) }
        return bytes
    }
}
