/// Settings of the read API (`api.*`; Config/README.md lists them with their environment names).
package struct ReadAPIConfiguration: Sendable, Hashable {
    /// The address the API binds. Default `0.0.0.0`.
    package var host = "0.0.0.0"
    /// The API's port; 0 picks a free one (tests). Default 8081.
    package var port = 8081
    /// The keys file (JSON, from a Kubernetes secret): the keys' SHA-256 hashes and what each may read
    /// (``APIKeyring``). Required.
    package var keysFile: String
    /// How often the keys file is read again, so that a rotated secret takes effect without a restart. Default 30 s.
    package var keysReloadInterval: Duration = .seconds(30)
    /// Each key's sustained requests per second on one replica, unless its entry says otherwise. Default 50.
    package var requestsPerSecond: Double = 50
    /// Each key's burst: requests it may make at once after a quiet spell, unless its entry says otherwise.
    /// Default 100.
    package var burst: Double = 100
    /// Notifications on a page when the request names no `limit`. Default 50.
    package var defaultPageSize = 50
    /// The largest `limit` a request may name. Default 200.
    package var maximumPageSize = 200
    /// The most purchases a customer's answer lists (each consumable bought is a purchase of its own); its access
    /// per subscription group always counts them all. Default 1000.
    package var maximumCustomerPurchases = 1000
    /// A connection idle this long is closed. Default 60 s.
    package var idleTimeout: Duration = .seconds(60)

    /// The defaults, reading keys from `keysFile`.
    package init(keysFile: String) {
        self.keysFile = keysFile
    }

    /// Throws ``ReadAPIError/Code/invalidConfiguration`` naming the first setting out of range.
    package func validate() throws(ReadAPIError) {
        func invalid(_ key: String, _ reason: String) -> ReadAPIError {
            ReadAPIError(code: .invalidConfiguration, reason: "api.\(key) \(reason)")
        }
        guard (0...65_535).contains(port) else { throw invalid("port", "must be a port number (0 picks a free one)") }
        guard requestsPerSecond > 0, burst >= 1 else {
            throw invalid("requestsPerSecond", "must be positive, and api.burst at least 1")
        }
        guard defaultPageSize >= 1, maximumPageSize >= defaultPageSize else {
            throw invalid("defaultPageSize", "must be at least 1 and at most api.maxPageSize")
        }
        guard maximumCustomerPurchases >= 1 else { throw invalid("maxCustomerPurchases", "must be at least 1") }
        guard keysReloadInterval > .zero, idleTimeout > .zero else {
            throw invalid("keysReloadSeconds", "and api.idleTimeoutSeconds must be positive")
        }
    }
}
