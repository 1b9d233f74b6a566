import Testing
import ReelProtocol
import ReelThreadTesting

/// `HostPort`: the one `HOST:PORT` parser, for `--listen`/`--metrics`/`--http` (`.listen`) and
/// `--coordinator`/`REEL_COORDINATOR` (`.connect`).
@Suite("HOST:PORT addresses", .blocking)
struct HostPortTests {
    static let purposes: [HostPort.Purpose] = [.listen, .connect]

    @Test("host:port and [IPv6]:port parse alike for both purposes", arguments: [
        ("render-01:7400", "render-01", 7400), ("10.77.0.1:7400", "10.77.0.1", 7400), ("10.0.0.5:1", "10.0.0.5", 1),
        ("render-hq:65535", "render-hq", 65_535), ("[::1]:7400", "::1", 7400), ("[fe80::1]:7401", "fe80::1", 7401),
    ])
    func parses(text: String, host: String, port: Int) {
        for purpose in Self.purposes {
            #expect(HostPort(parsing: text, for: purpose) == HostPort(host: host, port: port), "\(purpose)")
        }
    }

    @Test("a missing or malformed port, a port out of range, an empty or odd host are refused", arguments: [
        "", "render-01", "render-01:", ":7400", "[]:7400", "host:65536", "host:99999", "host:-1", "host:+1", "host:74x",
        "host: 1", "h st:1", "a/b:1", "[::1]7400", "[::1]:", "[::1", "[::1]:x",
    ], purposes)
    func refuses(text: String, purpose: HostPort.Purpose) {
        #expect(HostPort(parsing: text, for: purpose) == nil)
    }

    @Test("port 0 picks a free port when listening; there is no port 0 to connect to")
    func portZero() {
        #expect(HostPort(parsing: "127.0.0.1:0", for: .listen) == HostPort(host: "127.0.0.1", port: 0))
        #expect(HostPort(parsing: "[::]:0", for: .listen) == HostPort(host: "::", port: 0))
        #expect(HostPort(parsing: "127.0.0.1:0", for: .connect) == nil)
        #expect(HostPort.Purpose.listen.ports == 0...65_535)
        #expect(HostPort.Purpose.connect.ports == 1...65_535)
    }

    @Test("an IPv6 literal without brackets: the last colon separates the port when listening, refused when connecting",
          arguments: [("::1:7400", "::1", 7400), (":::7400", "::", 7400), ("a:b:1", "a:b", 1)])
    func bareIPv6(text: String, host: String, port: Int) {
        #expect(HostPort(parsing: text, for: .listen) == HostPort(host: host, port: port))
        #expect(HostPort(parsing: text, for: .connect) == nil)
    }

    @Test("description writes IPv6 literals in brackets and parses back to the same address")
    func description() {
        #expect(HostPort(host: "::1", port: 7400).description == "[::1]:7400")
        #expect(HostPort(host: "a", port: 1).description == "a:1")
        for address in [HostPort(host: "::1", port: 7400), HostPort(host: "render-01", port: 65_535)] {
            for purpose in Self.purposes {
                #expect(HostPort(parsing: address.description, for: purpose) == address)
            }
        }
    }

    @Test("the default port is the documented 7400")
    func defaultPort() {
        #expect(HostPort.defaultPort == 7400)
    }
}
