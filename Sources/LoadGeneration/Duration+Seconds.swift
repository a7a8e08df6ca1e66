package extension Duration {
    /// The duration in seconds, as the benchmarks' rates and reports divide by it.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
