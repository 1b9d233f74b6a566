@testable import ReelProtocol

/// Fixtures shared by the protocol tests.
enum Samples {
    static let hashA = String(repeating: "ab", count: 32)
    static let hashB = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    static let secret = Array("correct horse battery staple".utf8)

    /// One or more instances of every message, with edge-case values (escapes, empty lists,
    /// empty and binary payloads, non-ASCII names).
    static let messages: [Message] = [
        .hello(version: "reel/1", role: .agent, name: "render-01", clientNonce: hashA),
        .hello(version: "reel/1", role: .client, name: "Zoë Müller@工作室 #1=%", clientNonce: hashB),
        .challenge(nonce: hashB),
        .auth(mac: hashA),
        .welcome(mac: hashB),
        .ping, .pong, .quit, .bye, .ok, .noTask, .agents,
        .error(code: .staleEpoch, message: "task 17 is held under epoch 2"),
        .error(code: .internal, message: ""),
        .error(code: .init("future_code"), message: "size=12 must not be a payload  (double space)"),
        .capabilities(AgentCapabilities(threads: 8, encoders: ["libx264", "aac"], cacheBytes: 10_737_418_240, host: "render-01.example.net")),
        .capabilities(AgentCapabilities(threads: 1, encoders: [], cacheBytes: 0, host: "h")),
        .capabilities(AgentCapabilities(threads: 2, encoders: ["libx264"], cacheBytes: 0, host: "h", finalise: true)),
        .capabilities(AgentCapabilities(threads: 2, encoders: ["libx264"], cacheBytes: 0, host: "h", finalise: true, drain: true)),
        .capabilities(AgentCapabilities(threads: 4, encoders: ["libx264"], cacheBytes: 0, host: "h", drain: true, costPerHour: 0.85)),
        .capabilities(AgentCapabilities(threads: 1, encoders: ["libx264"], cacheBytes: 0, host: "h", costPerHour: 0)),
        .capabilities(AgentCapabilities(threads: 1, encoders: ["libx264"], cacheBytes: 0, host: "h", costPerHour: 123_456_789.000001)),
        .claim(waitSeconds: 0), .claim(waitSeconds: 60),
        .task(TaskAssignment(task: 17, job: 3, kind: .videoChunk, frameStart: 300, frameEnd: 600, epoch: 1,
                             expiresAtMillis: 1_763_780_460_000), specification: Array(#"{"chunk":1}"#.utf8)),
        .task(TaskAssignment(task: Int64.max, job: 1, kind: .finalise, frameStart: 0, frameEnd: 0, epoch: 9,
                             expiresAtMillis: 0), specification: []),
        .heartbeat(task: 17, epoch: 2),
        .lease(task: 17, epoch: 2, expiresAtMillis: 1_763_780_480_000),
        .lease(task: 17, epoch: 2, expiresAtMillis: 1_763_780_480_000, drain: true),
        .drain, .draining(seconds: 120), .drainAgent(name: "render-07"),
        .lost(task: 17),
        .progress(task: 17, epoch: 2, frames: 0),
        .result(task: 17, epoch: 2, sha256: hashA, data: (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
        .result(task: 17, epoch: 2, sha256: hashB, data: Array("\n\nsize=3\n".utf8)),
        .resultPart(task: 17, epoch: 2, sha256: hashA, offset: 0, total: 70 << 20, bytes: (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 13) }),
        .resultPart(task: 17, epoch: 2, sha256: hashB, offset: 5, total: 5, bytes: []),
        .resultStored(task: 17, have: 8_388_608, total: 73_400_320, expiresAtMillis: 1_763_780_480_000),
        .resultStored(task: 17, have: 0, total: 0, expiresAtMillis: 0),
        .accepted(task: 17),
        .fail(task: 5, epoch: 1, reason: "decoder error: invalid data\nat frame 12 — 100%"),
        .fail(task: 5, epoch: 1, reason: ""),
        .release(task: 5, epoch: 3),
        .fetch(sha256: hashA, offset: 0, length: 1_048_576),
        .data(offset: 10, total: 13, bytes: [0, 10, 255]),
        .data(offset: 0, total: 0, bytes: []),
        .submit(document: Array(#"{"composition":{"formatVersion":1},"text":"加点水印"}"#.utf8)),
        .job(id: 42, missing: [hashA, hashB]),
        .job(id: 42, missing: []),
        .batch(document: Array(#"{"name":"card.json × people.csv","rows":200}"#.utf8)),
        .estimate(document: Array(#"{"agents":4}"#.utf8)),
        .batchStatus(batch: 7, rows: false), .batchStatus(batch: 7, rows: true),
        .put(sha256: hashB, offset: 4, total: 8, bytes: [1, 2, 3, 4]),
        .stored(sha256: hashB, have: 8, total: 8),
        .status(job: nil), .status(job: 42), .status(job: 42, waitSeconds: 60),
        .report(json: Array("[]".utf8)),
        .cancel(job: 41), .retry(job: 40), .delete(job: 39),
        .pause(job: 42), .resume(job: 42), .priority(job: 42, priority: 1000), .priority(job: 42, priority: -1000),
        .priority(job: 42, priority: 0), .events(job: 42, after: 0), .events(job: 42, after: 1234),
        .output(job: 42, offset: 67_108_864, length: 67_108_864),
        .sourceURL(sha256: hashA),
        .resultURL(task: 17, epoch: 2, sha256: hashA, total: 70 << 20), .resultURL(task: 17, epoch: 2, sha256: hashB, total: 0),
        .resultDone(task: 17, epoch: 2, sha256: hashA, total: 812_345),
        .assetURL(sha256: hashB, total: 0), .assetDone(sha256: hashA, total: 524_288),
        .assetDone(sha256: hashA, total: 40 << 20, upload: UploadedParts(id: "ZjE5ZTM0-upload.id_2", partSHA256s: [hashB, hashA, hashB])), .assetParts(sha256: hashA, total: 40 << 20),
        .resultParts(task: 17, epoch: 2, sha256: hashA, total: 70 << 20),
        .resultDone(task: 17, epoch: 2, sha256: hashA, total: 70 << 20, upload: UploadedParts(id: "ZjE5ZTM0", partSHA256s: [hashB])),
        .parts(sha256: hashA, upload: "ZjE5ZTM0", partSize: 16 << 20, total: 70 << 20, have: [1, 2, 3, 5]),
        .parts(sha256: hashB, upload: "u", partSize: 5 << 20, total: 5 << 20 + 1, have: []),
        .partURL(PartURLRequest(sha256: hashA, upload: "ZjE5ZTM0", part: 4, partSHA256: hashB, length: 16 << 20)),
        .partURL(PartURLRequest(sha256: hashA, upload: "ZjE5ZTM0", part: 10_000, partSHA256: hashB, length: 1, task: 17, epoch: 2)),
        .outputURL(job: 42),
        .finalURL(task: 18, epoch: 3, sha256: hashB, total: 9_876_543),
        .finalDone(task: 18, epoch: 3, sha256: hashB, total: 9_876_543, loudness: nil),
        .finalDone(task: 18, epoch: 3, sha256: hashB, total: 1,
                   loudness: "normalised to -23 LUFS: measured -17.1 LUFS; gain -5.9 dB; output -23.0 LUFS"),
        .finalParts(task: 18, epoch: 3, sha256: hashB, total: 70 << 20),
        .finalDone(task: 18, epoch: 3, sha256: hashB, total: 70 << 20, loudness: "gain -5.9 dB",
                   upload: UploadedParts(id: "ZjE5ZTM0", partSHA256s: [hashA, hashB])),
        .inputBad(task: 18, epoch: 3, sha256: hashA),
        .url(DirectURL(method: "GET", url: presignedGET, headers: [:], expiresAtMillis: 1_763_780_460_000, total: 524_288)),
        .url(DirectURL(method: "PUT", url: presignedPUT,
                       headers: ["x-amz-checksum-sha256": "LPJNul+wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ=", "x-amz-meta-note": "a:b"],
                       expiresAtMillis: 0, total: 0)),
    ]

    /// Presigned URLs as S3BlobStore makes them (the signatures are made up).
    static let presignedGET = "http://127.0.0.1:8333/reel/farm/assets/sha256/ab/\(hashA)?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        + "&X-Amz-Credential=reel%2F20261126%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261126T051500Z&X-Amz-Expires=900"
        + "&X-Amz-SignedHeaders=host&X-Amz-Signature=\(hashB)"
    static let presignedPUT = "https://s3.example.net/reel/results/sha256/ab/\(hashA)?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        + "&X-Amz-Expires=900&X-Amz-SignedHeaders=host%3Bx-amz-checksum-sha256&X-Amz-Signature=\(hashA)"
}
