import Foundation
import Synchronization

/// A long-running child process (coordinator, agent) started with posix_spawn, its output
/// going to a log file; killed and reaped on `stop` or deinit. Tests look at it from several
/// tasks, so whether it was reaped, and how it ended, is kept behind a mutex.
final class BackgroundProcess: Sendable {
    let pid: pid_t
    let log: String
    /// nil until reaped; then the exit status (-1 when killed by a signal).
    private let ending = Mutex<Int32??>(nil)
    /// The exit status once reaped (-1 when killed by a signal).
    var exitStatus: Int32? { ending.withLock { $0 ?? nil } }

    /// - Parameter stdout: where standard output goes, when not into `log` with stderr.
    init(_ argv: [String], log: String, stdout: String? = nil, environment: [String: String] = [:]) throws {
        self.log = log
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout ?? log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        let env = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        let cEnv: [UnsafeMutablePointer<CChar>?] = env.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) }; cEnv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, argv[0], &actions, nil, cArgs, cEnv) == 0 else {
            throw Media.Failure(description: "cannot start \(argv[0])")
        }
        self.pid = pid
    }

    /// Whether the process has exited (reaps it if so).
    var hasExited: Bool {
        ending.withLock { ending in
            guard ending == nil else { return true }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                ending = .some((status & 0x7F) == 0 ? (status >> 8) & 0xFF : -1)
            }
            return ending != nil
        }
    }

    /// Waits (polling) until the process exits or `timeout` passes; returns whether it exited.
    func waitForExit(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !hasExited && Date() < deadline { usleep(50_000) }
        return hasExited
    }

    /// Sends `signal` and waits (up to `timeout`) for the process to exit; SIGKILL after that.
    func stop(_ signal: Int32 = SIGTERM, timeout: TimeInterval = 20) {
        guard !hasExited else { return }
        kill(pid, signal)
        let deadline = Date().addingTimeInterval(timeout)
        while !hasExited && Date() < deadline { usleep(20_000) }
        if !hasExited {
            kill(pid, SIGKILL)
            ending.withLock { ending in
                guard ending == nil else { return }
                var s: Int32 = 0
                waitpid(pid, &s, 0)
                ending = .some(-1)
            }
        }
    }

    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    deinit { stop(SIGKILL, timeout: 5) }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
func freeLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}
