import Testing
import ReelProtocol
import ReelThreadTesting

/// `--coordinator a:7400,b:7400` (and `REEL_COORDINATOR`): the list of a farm's coordinators,
/// and the order agents and clients try them in.
@Suite("Lists of coordinators", .blocking)
struct CoordinatorListTests {
    @Test func aListParsesInOrderWithoutDuplicates() {
        #expect(HostPort.list(parsing: "a:7400") == [HostPort(host: "a", port: 7400)])
        #expect(HostPort.list(parsing: "a:7400, [::1]:7401 ,b:7402,a:7400")
                == [HostPort(host: "a", port: 7400), HostPort(host: "::1", port: 7401), HostPort(host: "b", port: 7402)])
    }

    @Test("an empty entry or one that is not HOST:PORT refuses the whole list",
          arguments: ["", ",", "a:7400,", "a:7400,,b:7400", "a:7400,b", "a:7400,::1:7400", "a:7400,b:0"])
    func refused(text: String) {
        #expect(HostPort.list(parsing: text) == nil)
    }

    @Test func theOneThatAnsweredIsTriedFirstAndAFailureMovesOn() {
        let a = HostPort(host: "a", port: 1), b = HostPort(host: "b", port: 2), c = HostPort(host: "c", port: 3)
        let endpoints = CoordinatorEndpoints([a, b, c])
        #expect(endpoints.inTryOrder == [a, b, c])
        endpoints.failed(a)
        #expect(endpoints.inTryOrder == [b, c, a], "a failed: the next connection tries b first")
        endpoints.failed(c)
        #expect(endpoints.inTryOrder == [b, c, a], "a failure of one that is not first changes nothing")
        endpoints.succeeded(c)
        #expect(endpoints.inTryOrder == [c, a, b])
        endpoints.failed(c)
        #expect(endpoints.inTryOrder == [a, b, c], "wraps around")
    }
}
