import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// For the console tests of ReelConsoleTests and ReelCoordinatorTests (one copy for both).
///
/// A minimal HTTP/1.1 client over a blocking socket (`Connection: close`), so tests see the
/// server's bytes exactly, and can read the start of an endless event stream.
public struct TinyHTTP: Sendable {
    public struct Reply {
        public var status: Int
        public var headers: [String: String]
        public var body: String
        public var json: Any? { try? JSONSerialization.jsonObject(with: Data(body.utf8)) }
    }

    public struct Failure: Error, CustomStringConvertible { public var description: String }

    public let port: Int

    public init(port: Int) { self.port = port }

    /// Connects to 127.0.0.1:port, sends the request, and reads until the connection closes or
    /// `until` is satisfied by the bytes so far (then it stops reading), or the deadline passes.
    /// The blocking socket work runs on a Dispatch thread, never on the concurrency pool the
    /// server under test needs.
    public func raw(_ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil,
             deadline: TimeInterval = 30, until: (@Sendable (String) -> Bool)? = nil) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    try rawBlocking(method, path, headers: headers, body: body, deadline: deadline, until: until)
                })
            }
        }
    }

    private func rawBlocking(_ method: String, _ path: String, headers: [String: String], body: String?,
                             deadline: TimeInterval, until: ((String) -> Bool)?) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "cannot connect to 127.0.0.1:\(port)") }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + (body ?? "")
        let bytes = Array(text.utf8)
        guard send(fd, bytes, bytes.count, 0) == bytes.count else { throw Failure(description: "send failed") }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let end = Date().addingTimeInterval(deadline)
        while Date() < end {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n == 0 { break }
            if n < 0 { if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }; break }
            received += buffer[0..<n]
            if let until, until(String(decoding: received, as: UTF8.self)) { break }
        }
        return String(decoding: received, as: UTF8.self)
    }

    public func request(_ method: String, _ path: String, token: String? = nil, body: String? = nil) async throws -> Reply {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if body != nil { headers["Content-Type"] = "application/json" }
        return try Self.parse(try await raw(method, path, headers: headers, body: body))
    }

    public static func parse(_ text: String) throws -> Reply {
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure(description: "no HTTP response: \(text.prefix(200))") }
        let head = text[..<split.lowerBound].components(separatedBy: "\r\n")
        guard let statusLine = head.first, statusLine.hasPrefix("HTTP/1.1 "),
              let status = Int(statusLine.dropFirst(9).prefix(3)) else { throw Failure(description: "bad status line: \(head.first ?? "")") }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = String(text[split.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return Reply(status: status, headers: headers, body: body)
    }

    /// Undoes chunked transfer encoding (ASCII/UTF-8 bodies; sizes are in bytes).
    public static func dechunk(_ text: String) -> String {
        var bytes = Array(text.utf8)[...]
        var out: [UInt8] = []
        while let lineEnd = bytes.firstIndex(of: UInt8(ascii: "\r")) {
            let sizeText = String(decoding: bytes[bytes.startIndex..<lineEnd], as: UTF8.self).split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText, radix: 16), size > 0 else { break }
            let start = lineEnd + 2
            guard start + size <= bytes.endIndex else { out += bytes[start...]; break }
            out += bytes[start..<start + size]
            bytes = bytes[(start + size + 2)...]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
