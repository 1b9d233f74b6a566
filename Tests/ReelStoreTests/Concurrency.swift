import Foundation
import Synchronization

/// Collects values from several threads.
final class Collector<Value: Sendable>: Sendable {
    private let storage = Mutex<[Value]>([])
    func append(_ value: Value) { storage.withLock { $0.append(value) } }
    func append(contentsOf values: [Value]) { storage.withLock { $0.append(contentsOf: values) } }
    var values: [Value] { storage.withLock { $0 } }
}

/// Runs `body(i)` on `count` real threads at once and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread { body(index); group.leave() }.start()
    }
    group.wait()
}
