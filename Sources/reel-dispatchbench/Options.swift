/// Walks `arguments` as `--flag value` pairs in order, calling `handle` with each flag and a
/// function that reads its value (the next argument; an error when there is none). The two
/// benchmarks' parsers (`DispatchBench.parse`, `HerdBench.parse`) say what each flag means.
func forEachOption(_ arguments: [String], _ handle: (_ flag: String, _ value: () throws -> String) throws -> Void) throws {
    var i = 0
    while i < arguments.count {
        let flag = arguments[i]
        try handle(flag) {
            i += 1
            guard i < arguments.count else { throw BenchError("\(flag) needs a value") }
            return arguments[i]
        }
        i += 1
    }
}
