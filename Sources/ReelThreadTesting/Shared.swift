import Foundation
import Synchronization

/// A value that several threads read and change, behind a lock: what a test's worker threads,
/// callbacks or lanes record for the test to check afterwards.
public final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    public init(_ value: Value) { self.value = Mutex(value) }
    public func update(_ body: (inout Value) -> Void) { value.withLock { body(&$0) } }
    public var current: Value { value.withLock { $0 } }
}

/// Values collected from several threads, in the order they arrived.
public typealias Collector<Element: Sendable> = Shared<[Element]>

extension Shared {
    public convenience init<Element>() where Value == [Element] { self.init([]) }
    public func append<Element>(_ element: Element) where Value == [Element] { update { $0.append(element) } }
    public func append<Element>(contentsOf elements: [Element]) where Value == [Element] {
        update { $0.append(contentsOf: elements) }
    }
    public var values: Value { current }
}

/// Runs `body(i)` on `count` real threads at once and waits for all of them.
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread { body(index); group.leave() }.start()
    }
    group.wait()
}
