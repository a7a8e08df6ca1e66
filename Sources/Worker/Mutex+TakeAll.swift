import Synchronization

extension Mutex where Value: ExpressibleByArrayLiteral {
    /// What was gathered since the last take (reports other tasks left for the run loop), leaving it empty.
    borrowing func takeAll() -> Value {
        withLock { value in
            defer { value = [] }
            return value
        }
    }
}
