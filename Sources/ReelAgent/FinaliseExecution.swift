import Foundation
import Logging
import ReelCore
import ReelFinalising
import ReelObjectStore
import ReelProtocol

/// A finalise task on an agent (proto/PROTOCOL.md §4.5.1; only with an object store, and only
/// for agents that said `finalise=1`): download each input result through its presigned `GET`
/// (hash checked while it is written: `PresignedTransfer.download`), join them with the same
/// `JobFinalising` code the coordinator runs, send a poster when the job has none, upload the
/// output (in parts through presigned part URLs when larger than the coordinator's part size,
/// `FINALPARTS`, else through a `PUT` bound to its SHA-256, `FINALURL`), and have the
/// coordinator check and count it (`FINALDONE`, with the loudness figures). The lease is
/// heartbeaten throughout, as for a render. An input whose bytes do not hash to its SHA-256 is reported (`INPUTBAD`): its
/// chunk is rendered again and the job does not fail.
extension TaskExecution {
    /// An input's bytes are not what the coordinator said.
    struct DamagedInput: Error, CustomStringConvertible {
        var sha256: String
        var problem: String
        var description: String { "input \(sha256): \(problem)" }
    }

    /// What the finalise made, ready to upload.
    struct FinalisedOutput: Sendable {
        var path: String
        var outcome: JobFinalising.Outcome
    }

    func runFinalise(_ assignment: TaskAssignment, specification bytes: [UInt8], logger: Logger) async -> Ending {
        let specification: TaskSpecification
        let plan: RenderPlan
        do {
            specification = try JSONDecoder().decode(TaskSpecification.self, from: Data(bytes))
            guard specification.kind == .finalise, specification.task == assignment.task, specification.inputs != nil else {
                throw AgentError.protocolViolation("TASK \(assignment.task) kind finalise carries no finalise specification")
            }
            plan = try await planDocument(specification.planDocument).plan
        } catch {
            logger.error("cannot start the finalise", metadata: ["error": "\(error)"])
            return await fail(assignment, reason: "agent cannot run the task: \(error)", logger: logger)
        }
        let directory = workDirectory.appendingPathComponent("finalise-\(assignment.task)-\(assignment.epoch)")
        defer { try? FileManager.default.removeItem(at: directory) }

        let control = RenderControl()
        let lease = LeaseExpiry(assignment.expiresAtMillis)
        let finalised: Result<FinalisedOutput, any Error>
        switch await finaliseSupervised(assignment, control: control, lease: lease, logger: logger, work: {
            try await self.finalise(specification, plan: plan, in: directory, assignment: assignment, logger: logger)
        }) {
        case .abandoned(.lost):
            logger.warning("lease lost; finalise abandoned")
            return .finished
        case .abandoned(.connectionLost):
            logger.warning("connection lost during the finalise; abandoned")
            return .connectionLost(nil)
        case .abandoned(.shutdown):
            logger.notice("shutdown grace period over; releasing the finalise")
            return await release(assignment, logger: logger)
        case .done(let result):
            finalised = result
        }
        switch finalised {
        case .failure(let damaged as DamagedInput):
            logger.warning("an input result is damaged; the coordinator renders its chunk again",
                           metadata: ["sha256": "\(damaged.sha256)", "problem": "\(damaged.problem)"])
            do {
                _ = try await session.inputBad(assignment, sha256: damaged.sha256)
                return drain.isDraining ? .released : .finished
            } catch {
                if session.isClosed { return .connectionLost(nil) }
                return await fail(assignment, reason: "\(damaged)", logger: logger)
            }
        case .failure(let error):
            if session.isClosed { return .connectionLost(nil) }
            logger.error("finalise failed", metadata: ["error": "\(error)"])
            return await fail(assignment, reason: "finalise failed: \(error)", logger: logger)
        case .success(let output):
            do {
                try await DirectOutputUpload(session: session).send(output, for: assignment)
                logger.info("finalised; output accepted", metadata: ["bytes": "\(output.outcome.size)", "sha256": "\(output.outcome.sha256)"])
                return drain.isDraining ? .released : .finished
            } catch let error as ReelProtocolError where error.code == .staleEpoch {
                logger.warning("lease lost before the output was counted; discarded")
                return .finished
            } catch {
                if session.isClosed { return .connectionLost(nil) }
                logger.error("the output was not accepted", metadata: ["error": "\(error)"])
                return await fail(assignment, reason: "finalise output not accepted: \(error)", logger: logger)
            }
        }
    }

    /// Downloads and checks the inputs, joins them, and sends the poster the job wants.
    private func finalise(_ specification: TaskSpecification, plan: RenderPlan, in directory: URL, assignment: TaskAssignment,
                          logger: Logger) async throws -> FinalisedOutput {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var inputs: [JobFinalising.Input] = []
        for (index, input) in (specification.inputs ?? []).enumerated() {
            // A ladder chunk may have several inputs (renditions from several archives).
            let path = directory.appendingPathComponent("\(input.kind.rawValue)-\(input.ordinal)-\(index)").path
            do {
                let got = try await session.transfer.download(url: input.url, headers: input.headers, to: path, expectedSHA256: input.sha256)
                guard got.size == input.size else { throw DamagedInput(sha256: input.sha256, problem: "\(got.size) bytes, not \(input.size)") }
            } catch let error as ObjectStoreError where error.code == .integrity {
                throw DamagedInput(sha256: input.sha256, problem: error.message)
            } catch let error as ObjectStoreError where error.code == .notFound {
                throw DamagedInput(sha256: input.sha256, problem: "missing from the store")
            } catch let error as ObjectStoreError {
                throw AgentError.io("cannot read input \(input.kind.rawValue) \(input.ordinal) from the object store: \(error.message)")
            }
            inputs.append(JobFinalising.Input(kind: input.kind, frames: input.frames, path: path, size: input.size, sha256: input.sha256,
                                              renditions: input.renditions))
        }
        let output = directory.appendingPathComponent("output.\(plan.export.fileType.rawValue)").path
        let outcome = try await ThreadBridge.runOnDedicatedThread(name: "reel-finalise-\(assignment.task)") { [inputs] in
            try JobFinalising.finalise(plan, inputs: inputs, to: output)
        }.get()
        if specification.wantsPoster == true {
            // A poster is for people: one that cannot be made never fails the job.
            if let jpeg = try? await ThreadBridge.runOnDedicatedThread(name: "reel-poster-\(assignment.task)", {
                try JobFinalising.posterFromOutput(output, plan: plan)
            }).get() {
                do { try await session.poster(assignment, jpeg: jpeg) } catch { logger.debug("poster not sent", metadata: ["error": "\(error)"]) }
            }
        }
        return FinalisedOutput(path: output, outcome: outcome)
    }

    enum FinaliseOutcome: Sendable { case done(Result<FinalisedOutput, any Error>), abandoned(AbandonReason) }

    /// Runs `work` while heartbeating the lease (`supervise`); an abandonment cancels it.
    private func finaliseSupervised(_ assignment: TaskAssignment, control: RenderControl, lease: LeaseExpiry, logger: Logger,
                                    work: @escaping @Sendable () async throws -> FinalisedOutput) async -> FinaliseOutcome {
        await withTaskGroup(of: FinaliseOutcome.self) { group in
            group.addTask { .done(await Result { try await work() }) }
            group.addTask {
                switch await supervise(assignment, control: control, lease: lease, logger: logger) {
                case .abandoned(let reason): .abandoned(reason)
                case .rendered: .abandoned(.shutdown)
                }
            }
            let first = await group.next()!
            if case .abandoned = first { control.cancel() }
            group.cancelAll()
            while await group.next() != nil {}
            return first
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

/// Sends a finalised output straight to the object store (`DirectUpload`, the results' code):
/// in parts through presigned part URLs when it is larger than the coordinator's part size
/// (`FINALPARTS`), else through the presigned `PUT` of the job's output key (`FINALURL`, also
/// what a coordinator that predates `FINALPARTS` is asked); then the coordinator checks it and
/// completes the finalise (`FINALDONE`). An upload that fails for a passing reason (the store
/// unreachable after the transfer's retries: `ERR internal`; parts found missing: `ERR
/// not_found`; parts of other bytes, the upload aborted: `ERR checksum_mismatch`) is tried again
/// a few times, and `FINALPARTS` resumes it: only the parts the store lacks are sent again.
struct DirectOutputUpload {
    let session: CoordinatorSession
    /// Attempts in all; between them the transfer's `RetryPolicy` delays.
    var attempts = 3

    func send(_ output: TaskExecution.FinalisedOutput, for assignment: TaskAssignment) async throws {
        let outcome = output.outcome
        let blob = DirectBlob(output: output.path, sha256: outcome.sha256, total: outcome.size,
                              loudness: outcome.loudnessSummary, for: assignment)
        for attempt in 1...attempts {
            do {
                guard try await DirectUpload(session: session).send(blob) else {
                    throw ReelProtocolError(.noDirect, "the coordinator hands out no URLs for the output")
                }
                return
            } catch let error as ReelProtocolError where attempt < attempts && !session.isClosed
                        && [.internal, .notFound, .checksumMismatch].contains(error.code) {
                try await Task.sleep(for: session.transfer.retry.delay(afterAttempt: attempt, random: Double.random(in: 0..<1)))
            }
        }
    }
}

extension CoordinatorSession {
    /// `INPUTBAD`: an input of the held finalise did not hash to `sha256`.
    func inputBad(_ task: TaskAssignment, sha256: String) async throws -> LeaseReply {
        try leaseReply(try await client.request(.inputBad(task: task.task, epoch: task.epoch, sha256: sha256), timeout: requestTimeout), "INPUTBAD")
    }
}
