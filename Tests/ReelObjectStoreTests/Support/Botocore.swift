import Foundation

/// Runs `botocore_sigv4.py` (beside this target's sources): botocore signs the cases it is given,
/// independently of Reel's signer. botocore is installed by ops/install-deps.sh.
enum Botocore {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("botocore_sigv4.py").path
    }

    /// Sends `cases` (JSON objects) to the script and returns its results, one per case.
    static func sign(_ cases: [[String: Any]]) throws -> [[String: Any]] {
        let input = try JSONSerialization.data(withJSONObject: cases)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        nonisolated(unsafe) var errors = Data()
        nonisolated(unsafe) var output = Data()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errors = stderr.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { output = stdout.fileHandleForReading.readDataToEndOfFile() }
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        group.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "python3 \(script) exited \(process.terminationStatus) (is botocore installed? run ops/install-deps.sh): "
                          + String(decoding: errors, as: UTF8.self))
        }
        guard let results = try JSONSerialization.jsonObject(with: output) as? [[String: Any]], results.count == cases.count else {
            throw Failure(description: "botocore_sigv4.py answered something other than \(cases.count) results")
        }
        return results
    }
}
