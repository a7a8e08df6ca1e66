// `asnp dev` is a development tool: built with the DevelopmentTools trait (the default), left out of the image.
#if DevelopmentTools
import AppStoreSigning
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NotificationStore
import ServiceLifecycle

/// `asnp dev --demo`: realistic signed notifications posted through the real ingress once it listens (with
/// Apple-style duplicate retries and one tampered body), then a summary of what the pipeline made of them.
struct DevDemo: Service {
    /// Signed bodies, each subscription's events in order.
    let bodies: [String]
    let ingressURL: String
    /// The read API's base URL and key, when it runs.
    let api: (url: String, key: String)?
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
        if let api { try await ask(api, for: "2000000000") }
        try? await gracefulShutdown()
    }

    /// Asks the read API whether subscription `id` gives access, as an app backend would, and says what it answered.
    private func ask(_ api: (url: String, key: String), for id: String) async throws {
        let url = "\(api.url)/v1/subscriptions/\(id)?environment=Sandbox"
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Authorization", value: "Bearer \(api.key)")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 20)
        let answer = (try? JSONSerialization.jsonObject(with: Data(buffer: body))) as? [String: Any] ?? [:]
        let access = answer["has_access"].map { "has_access \($0 as? Bool == true)" } ?? "no answer"
        let until = (answer["entitled_until"] as? String).map { ", entitled until \($0)" } ?? ""
        Self.say(
            """
            demo: the read API answered \(response.status.code) for subscription \(id): \(access)\(until)
            demo: ask it yourself with  curl -H 'Authorization: Bearer \(api.key)' '\(url)'
            """
        )
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
