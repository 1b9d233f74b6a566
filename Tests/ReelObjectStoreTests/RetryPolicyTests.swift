import ReelObjectStore
import Testing
import ReelThreadTesting

/// Which failures are tried again, and how long the client waits between attempts.
@Suite(.blocking) struct RetryPolicyTests {
    @Test("passing failures are retried; refusals are final")
    func retryable() {
        for status in [500, 502, 503, 504, 429, 408] { #expect(RetryPolicy.isRetryable(status: status, s3Code: nil), "\(status)") }
        for code in ["SlowDown", "InternalError", "RequestTimeout", "ServiceUnavailable"] {
            #expect(RetryPolicy.isRetryable(status: 400, s3Code: code), "\(code)")
        }
        // S3 may answer 200 with an InternalError in the body (CompleteMultipartUpload).
        #expect(RetryPolicy.isRetryable(status: 200, s3Code: "InternalError"))
        for (status, code) in [(403, "SignatureDoesNotMatch"), (403, "AccessDenied"), (404, "NoSuchKey"), (400, "BadDigest"),
                               (416, "InvalidRange"), (400, "EntityTooSmall"), (403, "RequestTimeTooSkewed"), (501, "NotImplemented")] {
            #expect(!RetryPolicy.isRetryable(status: status, s3Code: code), "\(status) \(code)")
        }
    }

    @Test("delays double from the base up to the ceiling, half of each random")
    func delays() {
        let policy = RetryPolicy(maxAttempts: 8, baseDelay: .milliseconds(100), maxDelay: .seconds(2))
        let ceilings: [Duration] = [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
                                    .milliseconds(1600), .seconds(2), .seconds(2)]
        for (index, ceiling) in ceilings.enumerated() {
            #expect(policy.delay(afterAttempt: index + 1, random: 0) == ceiling / 2)
            #expect(policy.delay(afterAttempt: index + 1, random: 1) == ceiling)
            #expect(policy.delay(afterAttempt: index + 1, random: 0.5) == ceiling * 3 / 4)
        }
        #expect(policy.delay(afterAttempt: 1_000, random: 1) == .seconds(2))  // no overflow
        #expect(RetryPolicy(maxAttempts: 0).maxAttempts == 1)
    }
}
