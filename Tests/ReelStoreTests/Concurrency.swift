import Foundation

/// Collects values from several threads.
final class Collector<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value] = []
    func append(_ value: Value) { lock.lock(); storage.append(value); lock.unlock() }
    func append(contentsOf values: [Value]) { lock.lock(); storage.append(contentsOf: values); lock.unlock() }
    var values: [Value] { lock.lock(); defer { lock.unlock() }; return storage }
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
