import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP proxy in front of the test S3 server that passes each request and its answer
/// through byte for byte (one request per connection: it asks the server to close after
/// answering), except that it breaks off the first `cuts` answers after `cutAfter` bytes, as a
/// dropped connection would. It records every request's head, so a test sees the `Range` a
/// resumed download asked for.
///
/// A client reaches the server through it by signing for the proxy's address (an `S3Client` or a
/// presigned URL whose endpoint is `endpoint`): the server checks the signature against the
/// `Host` it receives, which is the proxy's.
///
/// At a cut it calls `onCut` and, when `holdAtCut`, waits for `release()` before closing, so a
/// test can change the object between the two halves of a download without sleeping.
final class CuttingProxy: Sendable {
    struct Settings {
        var cutAfter: Int
        var cuts = 1
        var holdAtCut = false
        /// Removes the `Range` header from requests (a server that ignores it, answering 200).
        var stripRange = false
    }

    private struct State {
        var requests: [String] = []
        var cutsLeft: Int
        var onCut: (@Sendable () -> Void)?
    }

    let port: Int
    private let upstreamPort: Int
    private let settings: Settings
    private let listener: Int32
    private let state: Mutex<State>
    private let releaseSignal = DispatchSemaphore(value: 0)

    var endpoint: String { "http://127.0.0.1:\(port)" }
    /// The head (request line and headers) of each request, in arrival order.
    var requests: [String] { state.withLock { $0.requests } }

    func onCut(_ body: @escaping @Sendable () -> Void) { state.withLock { $0.onCut = body } }
    func release() { releaseSignal.signal() }

    init(upstream: URL, _ settings: Settings) throws {
        upstreamPort = upstream.port ?? 80
        self.settings = settings
        state = Mutex(State(cutsLeft: settings.cuts))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket() failed") }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { close(fd); throw Failure("cannot listen on 127.0.0.1") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops accepting (connections in progress finish on their own).
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        releaseSignal.signal()
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(port.bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            Thread { [self] in serve(client) }.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        // The request head (these requests have no body: GETs).
        var head: [UInt8] = []
        var byte = [UInt8](repeating: 0, count: 1)
        while !head.ends(with: Array("\r\n\r\n".utf8)) {
            guard recv(client, &byte, 1, 0) == 1 else { return }
            head.append(byte[0])
        }
        var lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        lines.removeAll { $0.lowercased().hasPrefix("connection:") }
        if settings.stripRange { lines.removeAll { $0.lowercased().hasPrefix("range:") } }
        lines.append("Connection: close")
        let text = lines.joined(separator: "\r\n") + "\r\n\r\n"
        let cut = state.withLock { state -> Bool in
            state.requests.append(text)
            guard state.cutsLeft > 0 else { return false }
            state.cutsLeft -= 1
            return true
        }

        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard upstream >= 0 else { return }
        defer { close(upstream) }
        var address = Self.loopback(port: UInt16(upstreamPort))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return }
        let request = Array(text.utf8)
        guard send(upstream, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return }

        var forwarded = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let limit = cut ? min(buffer.count, settings.cutAfter - forwarded) : buffer.count
            if limit <= 0 { break }
            let n = recv(upstream, &buffer, limit, 0)
            if n <= 0 { return }
            var sent = 0
            while sent < n {
                let m = buffer[sent..<n].withUnsafeBytes { send(client, $0.baseAddress, n - sent, Int32(MSG_NOSIGNAL)) }
                if m <= 0 { return }
                sent += m
            }
            forwarded += n
        }
        // Cut: tell the test, wait for it if asked, then drop the connection mid-answer.
        state.withLock { $0.onCut }?()
        if settings.holdAtCut { releaseSignal.wait() }
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
