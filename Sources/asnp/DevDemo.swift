// `asnp dev` is a development tool: built with the DevelopmentTools trait (the default), left out of the image.
#if DevelopmentTools
import AppStoreSigning
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NotificationStore
import ServiceLifecycle

/// `asnp dev --demo`: realistic signed notifications posted through the real ingress once it listens (with
/// Apple-style duplicate retries and one tampered body), then a summary of what the pipeline made of them.
struct DevDemo: Service {
    /// Signed bodies, each subscription's events in order.
    let bodies: [String]
    let ingressURL: String
    let store: NotificationStore
    /// Yields once the ingress listens.
    let listening: AsyncStream<Void>
    let configPath: String

    func run() async throws {
        for await _ in listening { break }
        let retries = Array(bodies.shuffled().prefix(bodies.count / 10))
        let tampered = NotificationSigner.tampered(bodies[0])
        let posts = bodies + retries + [tampered]
        Self.say("demo: posting \(bodies.count) notifications, \(retries.count) duplicate retries and 1 tampered body")
        let accepted = try await post(posts)
        Self.say("demo: \(accepted) of \(posts.count) answered 200")

        // Wait for the workers: every notification stored, the tampered body rejected.
        let deadline = ContinuousClock.now.advanced(by: .seconds(120))
        var counts = try await store.counts()
        while counts.notifications < bodies.count || counts.rejected < 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            counts = try await store.counts()
        }
        let states = counts.subscriptionsByLastType.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        let rejections = counts.rejectedByStatus.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        Self.say(
            """
            demo: stored \(counts.notifications) notifications of \(counts.subscriptions) subscriptions \
            (duplicates dropped), rejected \(counts.rejected) (\(rejections.joined(separator: ", ")))
            demo: subscriptions by latest notification: \(states.joined(separator: ", "))
            demo: look closer with  asnp status --config \(configPath)  or  asnp subscription show 2000000000 \
            --config \(configPath)
            """
        )
        try? await gracefulShutdown()
    }

    /// Posts the bodies, eight at a time, with a progress line every tenth; the number answered 200.
    private func post(_ bodies: [String]) async throws -> Int {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            var accepted = 0
            var done = 0
            var next = 0
            func start() {
                guard next < bodies.count else { return }
                let body = bodies[next]
                next += 1
                group.addTask {
                    var request = HTTPClientRequest(url: ingressURL)
                    request.method = .POST
                    request.body = .bytes(ByteBuffer(string: body))
                    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
                    return response.status.code == 200
                }
            }
            for _ in 0..<8 { start() }
            while let ok = try await group.next() {
                accepted += ok ? 1 : 0
                done += 1
                if done % max(1, bodies.count / 10) == 0 { Self.say("demo: posted \(done)/\(bodies.count)") }
                start()
            }
            return accepted
        }
    }

    /// Writes a line at once: print's buffer would hold it back when the output is a file or a pipe.
    static func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
#endif
