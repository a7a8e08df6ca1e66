import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// Waits for a process of the pipeline started by a benchmark or a test to say it is ready.
package enum ReadinessProbe {
    /// Polls an ingress's `/health/ready` on its status port on 127.0.0.1 until it answers 200 or `limit` passes;
    /// whether it did.
    package static func waitUntilReady(statusPort: Int, client: HTTPClient, within limit: Duration) async throws -> Bool
    {
        let deadline = ContinuousClock.now.advanced(by: limit)
        while ContinuousClock.now < deadline {
            let reply = try? await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(statusPort)/health/ready"),
                timeout: .seconds(2)
            )
            if reply?.status == .ok { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return false
    }
}
