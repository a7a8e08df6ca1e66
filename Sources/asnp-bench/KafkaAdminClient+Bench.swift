import KafkaClient

extension KafkaAdminClient {
    /// Messages ever written to `topic`: its high watermarks summed (the mock's retention deletes messages but does
    /// not lower them).
    func messagesWritten(to topic: String) async throws(KafkaError) -> Int {
        try await watermarks(of: topic).values.reduce(0) { $0 + Int($1.high) }
    }
}
