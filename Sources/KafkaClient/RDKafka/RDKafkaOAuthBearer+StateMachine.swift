extension RDKafkaOAuthBearer {
    /// Whether a token request runs, and whether the handle still takes tokens. Pure; generic over the request's
    /// task so that it is unit-tested without one.
    struct StateMachine<Request> {
        enum State {
            /// Waiting for librdkafka to ask.
            case idle
            /// A request runs (its task, once started).
            case requesting(Request?)
            /// The handle is being destroyed: nothing reaches it any more.
            case detached
        }

        private(set) var state = State.idle

        /// librdkafka asked for a token: whether to start a request. Not while one runs (librdkafka asks once per
        /// token, so a second ask means nothing new) nor once detached.
        mutating func refreshRequested() -> Bool {
            guard case .idle = state else { return false }
            state = .requesting(nil)
            return true
        }

        /// The request asked for is running as `request`.
        mutating func started(_ request: Request) {
            guard case .requesting = state else { return }
            state = .requesting(request)
        }

        /// The request ended: whether its outcome may be handed to the handle.
        mutating func finished() -> Bool {
            guard case .requesting = state else { return false }
            state = .idle
            return true
        }

        /// The handle goes away: the request to cancel, if one runs.
        mutating func detach() -> Request? {
            defer { state = .detached }
            if case .requesting(let request) = state { return request }
            return nil
        }
    }
}
