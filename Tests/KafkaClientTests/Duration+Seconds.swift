extension Duration {
    /// The duration in seconds, for the group reports' times.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
