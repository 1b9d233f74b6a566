import Foundation
import Logging
import Synchronization

/// Keeps every log record in memory, so a test can assert what was logged, or wait for what a
/// service says it did (three refused connection attempts, say) instead of sleeping.
public final class LogCapture: Sendable {
    public struct Record: Sendable { public var level: Logger.Level; public var message: String; public var metadata: Logger.Metadata }
    private let stored = Mutex<[Record]>([])
    public var records: [Record] { stored.withLock { $0 } }
    func append(_ record: Record) { stored.withLock { $0.append(record) } }

    public init() {}

    /// How many records so far contain `text` in their message.
    public func count(_ text: String) -> Int { records.filter { $0.message.contains(text) }.count }

    public var logger: Logger {
        Logger(label: "capture") { _ in Handler(capture: self) }
    }

    struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            capture.append(Record(level: event.level, message: event.message.description,
                                  metadata: metadata.merging(event.metadata ?? [:]) { $1 }))
        }
    }
}
