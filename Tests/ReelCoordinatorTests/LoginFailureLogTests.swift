import Foundation
import Logging
import ReelProtocol
import ReelLogTesting
import Testing
@testable import ReelCoordinator
import ReelThreadTesting

@Suite(.database, .blocking) struct LoginFailureLogTests {
    @Test(arguments: [
        (ReelProtocolError.Code.authFailed, "bad MAC"), (.replayedNonce, "replayed nonce"),
        (.unsupportedVersion, "unsupported protocol version"), (.timeout, "handshake timeout"),
    ])
    func aFailedLoginIsAWarningWithAddressRoleNameAndReason(code: ReelProtocolError.Code, reason: String) throws {
        let capture = LogCapture()
        let failure = HandshakeFailure(role: .agent, name: "render-07", error: ReelProtocolError(code, "details"))
        LoginFailureLog.record(failure, remoteAddress: "10.0.0.9:51234", to: capture.logger)
        let record = try #require(capture.records.first)
        #expect(capture.records.count == 1)
        #expect(record.level == .warning)
        #expect(record.message == "login failed")
        #expect(record.metadata["remote"] == "10.0.0.9:51234")
        #expect(record.metadata["role"] == "agent")
        #expect(record.metadata["name"] == "render-07")
        #expect(record.metadata["reason"]?.description.hasPrefix(reason) == true, "\(record.metadata)")
        #expect(record.metadata["error"] == "\(code.rawValue): details")
    }

    @Test func aClaimedNameCannotForgeLogLinesOrDriveTheTerminal() throws {
        let capture = LogCapture()
        let failure = HandshakeFailure(role: .client, name: "x\n2026-01-01 error fake\u{1B}[2J",
                                       error: ReelProtocolError(.authFailed, "authentication failed"))
        LoginFailureLog.record(failure, remoteAddress: "[::1]:4000", to: capture.logger)
        let record = try #require(capture.records.first)
        #expect(record.metadata["name"] == "x\\u{A}2026-01-01 error fake\\u{1B}[2J")
        #expect(record.metadata["remote"] == "[::1]:4000")
    }

    @Test func theCoordinatorLogsARefusedLoginWithThePeersAddress() async throws {
        let capture = LogCapture()
        let harness = try await CoordinatorHarness(logger: capture.logger)
        await #expect(throws: ReelProtocolError.self) {
            let client = try await harness.connect(role: .client, name: "mallory\u{1B}[31m", secret: "a different secret, long enough")
            await client.close()
        }
        // The server logs the failure before it writes the ERR, so the record exists by the time
        // the client has seen its refusal: no waiting needed.
        let record = capture.records.first { $0.message == "login failed" }
        try await harness.stop()
        let logged = try #require(record, "no login failure was logged")
        #expect(logged.level == .warning)
        #expect(logged.metadata["remote"]?.description.hasPrefix("127.0.0.1:") == true, "\(logged.metadata)")
        #expect(logged.metadata["role"] == "client")
        #expect(logged.metadata["name"] == "mallory\\u{1B}[31m")
        #expect(logged.metadata["reason"]?.description.hasPrefix("bad MAC") == true)
    }

    @Test func aPeerThatNeverSentHelloIsLoggedWithoutIdentity() throws {
        let capture = LogCapture()
        LoginFailureLog.record(HandshakeFailure(role: nil, name: nil, error: ReelProtocolError(.timeout, "handshake not completed in time")),
                               remoteAddress: "192.0.2.1:9", to: capture.logger)
        let record = try #require(capture.records.first)
        #expect(record.metadata["role"] == "-" && record.metadata["name"] == "-")
        #expect(record.metadata["reason"] == "handshake timeout")
    }
}
