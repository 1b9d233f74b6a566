/// What a batch render did with each row, written beside its outputs as `manifest.json` (read
/// back to resume the batch) and `manifest.csv` (the same table, for a spreadsheet).
///
/// Every row has an entry: its number and line in the rows file, the hash of its values, its
/// output, its status, and once rendered the output's duration and size, the agents' time and
/// how many of its chunks were reused from earlier renders; a failed or invalid row's error.
/// Pure: encoding and decoding only (the command line writes the files).
public struct BatchManifest: Hashable, Sendable {
    public static let formatVersion = 1

    public enum Status: String, Hashable, Sendable, CaseIterable {
        /// Not rendered yet (or stopped before it finished).
        case pending
        /// Rendered; its output is in place.
        case done
        /// Rendered and failed; `error` says why.
        case failed
        /// Its values (or its output's name) are wrong, so it was not rendered; `error` says what to fix.
        case invalid
    }

    public struct Entry: Hashable, Sendable {
        /// The data row (1-based).
        public var row: Int
        /// The rows file's line it starts on.
        public var line: Int
        /// `RowValues.sha256` of its values; nil for an invalid row.
        public var valuesSHA256: String?
        /// Its output path as the pattern gives it; nil when it could not be made.
        public var output: String?
        public var status: Status
        /// Seconds the output lasts.
        public var durationSeconds: Double?
        /// The output's size.
        public var bytes: Int64?
        /// Seconds agents spent on its tasks (`JobStatus.agentSeconds`): a reused chunk costs none.
        public var agentSeconds: Double?
        /// Of `chunks`, how many were taken from earlier renders instead of rendered.
        public var reusedChunks: Int?
        /// Its render tasks (video chunks and the audio).
        public var chunks: Int?
        /// The farm's job that rendered it.
        public var job: Int64?
        public var error: String?

        public init(row: Int, line: Int, valuesSHA256: String? = nil, output: String? = nil, status: Status,
                    durationSeconds: Double? = nil, bytes: Int64? = nil, agentSeconds: Double? = nil, reusedChunks: Int? = nil,
                    chunks: Int? = nil, job: Int64? = nil, error: String? = nil) {
            self.row = row; self.line = line; self.valuesSHA256 = valuesSHA256; self.output = output; self.status = status
            self.durationSeconds = durationSeconds; self.bytes = bytes; self.agentSeconds = agentSeconds
            self.reusedChunks = reusedChunks; self.chunks = chunks; self.job = job; self.error = error
        }
    }

    /// The template file as given on the command line.
    public var template: String
    /// SHA-256 of the template file's bytes: a manifest of another template resumes nothing.
    public var templateSHA256: String
    /// The rows file as given.
    public var rows: String
    /// The output pattern as given.
    public var output: String
    /// In row order.
    public var entries: [Entry]

    public init(template: String, templateSHA256: String, rows: String, output: String, entries: [Entry]) {
        self.template = template; self.templateSHA256 = templateSHA256; self.rows = rows; self.output = output; self.entries = entries
    }

    /// How many entries have each status.
    public func count(_ status: Status) -> Int { entries.filter { $0.status == status }.count }

    // MARK: - manifest.json

    /// The JSON document, one entry per line.
    public var json: String {
        func string(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        func integer<I: BinaryInteger>(_ i: I?) -> JSONValue { i.map { .number(String($0)) } ?? .null }
        func seconds(_ d: Double?) -> JSONValue { d.map { .number(Self.decimal($0, places: 6)) } ?? .null }
        let entries: [JSONValue] = entries.map { e in
            .object(JSONObject([
                .init(key: "row", value: integer(e.row)), .init(key: "line", value: integer(e.line)),
                .init(key: "valuesSHA256", value: string(e.valuesSHA256)), .init(key: "output", value: string(e.output)),
                .init(key: "status", value: .string(e.status.rawValue)), .init(key: "durationSeconds", value: seconds(e.durationSeconds)),
                .init(key: "bytes", value: integer(e.bytes)), .init(key: "agentSeconds", value: seconds(e.agentSeconds)),
                .init(key: "reusedChunks", value: integer(e.reusedChunks)), .init(key: "chunks", value: integer(e.chunks)),
                .init(key: "job", value: integer(e.job)), .init(key: "error", value: string(e.error)),
            ]))
        }
        let header: [(String, JSONValue)] = [
            ("formatVersion", integer(Self.formatVersion)), ("template", .string(template)), ("templateSHA256", .string(templateSHA256)),
            ("rows", .string(rows)), ("output", .string(output)),
        ]
        // One entry a line: a manifest of thousands of rows stays readable and diffable.
        var text = "{\n"
        for (key, value) in header { text += "  \(JSONWriter.quoted(key)): \(JSONWriter.compact(value)),\n" }
        text += "  \"entries\": [" + (entries.isEmpty ? "" : "\n    " + entries.map(JSONWriter.compact).joined(separator: ",\n    ") + "\n  ") + "]\n}\n"
        return text
    }

    /// Why `bytes` are not a manifest this version of Reel reads.
    public struct ReadError: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Reads a `manifest.json`.
    public static func parse(_ bytes: [UInt8]) -> Result<BatchManifest, ReadError> {
        let document: JSONValue
        do { document = try JSONParser.parse(bytes) } catch { return .failure(ReadError(description: "it is not JSON (\(error))")) }
        guard case .object(let o) = document else { return .failure(ReadError(description: "it is not a JSON object")) }
        guard case .number(let version)? = o["formatVersion"], Int(version) == formatVersion else {
            return .failure(ReadError(description: "it is not a batch manifest of format version \(formatVersion)"))
        }
        guard case .string(let template)? = o["template"], case .string(let templateSHA256)? = o["templateSHA256"],
              case .string(let rows)? = o["rows"], case .string(let output)? = o["output"], case .array(let items)? = o["entries"] else {
            return .failure(ReadError(description: "it lacks template, templateSHA256, rows, output or entries"))
        }
        var entries: [Entry] = []
        for (index, item) in items.enumerated() {
            guard case .object(let e) = item, case .number(let row)? = e["row"], let rowNumber = Int(row),
                  case .number(let line)? = e["line"], let lineNumber = Int(line),
                  case .string(let statusText)? = e["status"], let status = Status(rawValue: statusText) else {
                return .failure(ReadError(description: "entries[\(index)] lacks its row, line or status"))
            }
            func string(_ key: String) -> String? { if case .string(let s)? = e[key] { s } else { nil } }
            func number(_ key: String) -> String? { if case .number(let n)? = e[key] { n } else { nil } }
            entries.append(Entry(row: rowNumber, line: lineNumber, valuesSHA256: string("valuesSHA256"), output: string("output"), status: status,
                                 durationSeconds: number("durationSeconds").flatMap(Double.init), bytes: number("bytes").flatMap { Int64($0) },
                                 agentSeconds: number("agentSeconds").flatMap(Double.init), reusedChunks: number("reusedChunks").flatMap { Int($0) },
                                 chunks: number("chunks").flatMap { Int($0) }, job: number("job").flatMap { Int64($0) }, error: string("error")))
        }
        return .success(BatchManifest(template: template, templateSHA256: templateSHA256, rows: rows, output: output, entries: entries))
    }

    // MARK: - manifest.csv

    public static let csvColumns = ["row", "line", "values_sha256", "output", "status", "duration_seconds", "bytes", "agent_seconds",
                                    "reused_chunks", "chunks", "job", "error"]

    /// The same table as CSV (RFC 4180, CRLF line ends), a header row first.
    public var csv: String {
        var lines = [CSV.line(Self.csvColumns)]
        for e in entries {
            lines.append(CSV.line([
                String(e.row), String(e.line), e.valuesSHA256 ?? "", e.output ?? "", e.status.rawValue,
                e.durationSeconds.map { Self.decimal($0, places: 6) } ?? "", e.bytes.map(String.init) ?? "",
                e.agentSeconds.map { Self.decimal($0, places: 6) } ?? "", e.reusedChunks.map(String.init) ?? "",
                e.chunks.map(String.init) ?? "", e.job.map(String.init) ?? "", e.error ?? "",
            ]))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// `x` rounded to `places` decimals, without trailing zeros or an exponent: `2`, `0.125`.
    static func decimal(_ x: Double, places: Int) -> String {
        guard x.isFinite else { return "0" }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let units = Int64((x * Double(scale)).rounded())
        let magnitude = units.magnitude
        let whole = magnitude / UInt64(scale), fraction = magnitude % UInt64(scale)
        let sign = units < 0 ? "-" : ""
        guard fraction != 0 else { return "\(sign)\(whole)" }
        var digits = String(fraction)
        digits = String(repeating: "0", count: places - digits.count) + digits
        while digits.last == "0" { digits.removeLast() }
        return "\(sign)\(whole).\(digits)"
    }
}

/// Which rows a batch run again need not render: those its previous manifest records as
/// done with the same values, whose output is still there with the recorded size. A manifest
/// written for another template (its bytes changed) resumes nothing: every row renders again.
public struct BatchResume: Sendable {
    public let previous: BatchManifest?
    public let templateSHA256: String

    public init(previous: BatchManifest?, templateSHA256: String) {
        self.previous = previous; self.templateSHA256 = templateSHA256
    }

    /// Whether there is a previous manifest but of another template.
    public var templateChanged: Bool { previous.map { $0.templateSHA256 != templateSHA256 } ?? false }

    /// The previous entry of the row that writes `output` with values `valuesSHA256`, if it
    /// need not render again: done, with the same hash, and its file holds `bytes` bytes
    /// (`bytesOnDisk(output)`: the file's size now, nil when it is missing). Renumbered as `row`/`line`.
    public func finished(row: Int, line: Int, output: String, valuesSHA256: String,
                         bytesOnDisk: (String) -> Int64?) -> BatchManifest.Entry? {
        guard let previous, !templateChanged,
              var entry = previous.entries.first(where: { $0.output == output && $0.status == .done }),
              entry.valuesSHA256 == valuesSHA256, let bytes = entry.bytes, bytesOnDisk(output) == bytes else { return nil }
        entry.row = row
        entry.line = line
        return entry
    }
}
