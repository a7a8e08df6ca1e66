import AppStoreModels
import AppStoreTestSupport
import Foundation
import KafkaClient
import PipelineContract
import PipelineServices
import Testing

/// The contract's documents name settings, headers, header values and prefixes; each is held here to the code that
/// has it, so that a document cannot cite a setting or a value the code does not have (Docs/contract/README.md).
@Suite("Docs/contract and Docs/output-topics.md name only settings, headers and values the code has", .tags(.process))
struct ContractNamesTests {
    static let docs = Fixtures.packageRoot.appendingPathComponent("Docs")

    /// What a downstream team reads as the contract.
    static let contractFiles = [
        "contract/README.md", "contract/asyncapi.yaml", "output-topics.md", "contract/decoded-v2/1.schema.json",
        "contract/decoded-v1/1.schema.json", "contract/subscription-state/1.schema.json",
        "contract/dead-letter/1.schema.json",
    ]

    @Test("Every setting the contract names is one the ingress or the worker reads")
    func settingNames() async throws {
        let settings = try await PipelineSettings.load(file: nil, environment: DeployFilesTests.minimalEnvironment)
        _ = try settings.ingressRole()
        _ = try settings.workerRole()
        let read = settings.keysRead.all
        // A dotted name in a section the settings have (`kafka.`, `worker.`...) is a setting; topic names, event
        // types and Kafka's own properties are in no such section.
        let sections = Set(read.compactMap { $0.split(separator: ".").first.map(String.init) })
        var named: Set<String> = []
        for file in Self.contractFiles {
            let dotted = Self.codeSpans(try Self.text(file)).filter {
                $0.wholeMatch(of: /[a-z]+(\.[A-Za-z0-9]+)+/) != nil
            }
            for span in dotted {
                guard let section = span.split(separator: ".").first, sections.contains(String(section)) else {
                    continue
                }
                named.insert(span)
                #expect(read.contains(span), "\(file) names the setting \(span), which neither service reads")
            }
        }
        #expect(named.isSuperset(of: ["kafka.bootstrapServers", "kafka.topics.decoded", "kafka.topics.deadLetter"]))
    }

    @Test("Each topic setting's documented default is the topic the code uses without it, and is a channel address")
    func topicDefaults() async throws {
        var pairs: [(file: String, setting: String, topic: String)] = []
        for match in try Self.text("contract/asyncapi.yaml").matches(of: /setting `([^`]+)`\s+\(default `([^`]+)`\)/) {
            pairs.append(("contract/asyncapi.yaml", String(match.1), String(match.2)))
        }
        for match in try Self.text("contract/README.md").matches(of: /\| `([^`]+)` \(`(kafka\.topics\.[A-Za-z]+)`/) {
            pairs.append(("contract/README.md", String(match.2), String(match.1)))
        }
        #expect(pairs.count == 6, "three channels in asyncapi.yaml, three rows in README.md's table")
        let defaults = try await Self.topics([:])
        for pair in pairs {
            let renamed = try await Self.topics([PipelineSettings.environmentName(of: pair.setting): "renamed"])
            let moved = defaults.indices.filter { defaults[$0] != renamed[$0] }
            #expect(moved.count == 1, "\(pair.file): \(pair.setting) renames exactly one topic")
            #expect(moved.map { defaults[$0] } == [pair.topic], "\(pair.file): \(pair.setting)'s default")
        }
        let channels = try #require(try await Self.asyncAPI()["channels"] as? [String: [String: Any]])
        #expect(Set(channels.values.compactMap { $0["address"] as? String }) == Set(PipelineTopics.outputs))
    }

    @Test(
        """
        The headers asyncapi.yaml lists for each message are those OutputEvent writes: all of them with every \
        optional attribute, the required ones without; each value its fixed value or matching its pattern
        """
    )
    func messageHeaders() async throws {
        let document = try await Self.asyncAPI()
        let messages = try #require(Self.value(document, "components", "messages") as? [String: [String: Any]])
        let events = Self.events()
        #expect(Set(events.map(\.message)) == Set(messages.keys), "every message of asyncapi.yaml built here")
        for event in events {
            let schema = Self.headersSchema(messages[event.message]?["headers"] as? [String: Any] ?? [:], in: document)
            let full = Dictionary(event.full.headers.map { ($0.key, $0.stringValue ?? "") }) { first, _ in first }
            #expect(Set(full.keys) == Set(schema.properties.keys), "\(event.message): the headers written and listed")
            #expect(Set(event.minimal.headers.map(\.key)) == schema.required, "\(event.message): the required ones")
            for (name, value) in full.sorted(by: { $0.key < $1.key }) {
                let property = schema.properties[name] ?? [:]
                if let fixed = property["const"] as? String {
                    #expect(value == fixed, "\(event.message).\(name)")
                }
                if let pattern = property["pattern"] as? String {
                    #expect(value.contains(try Regex(pattern)), "\(event.message).\(name): \(value) !~ \(pattern)")
                }
                if let minimum = property["minLength"] as? Int {
                    #expect(value.count >= minimum, "\(event.message).\(name)")
                }
            }
        }
    }

    @Test("The asnp-source values the documents name are the sources the pipeline writes")
    func sourceValues() async throws {
        let written = Set(RawNotificationHeaders.Source.all.map(\.rawValue))
        let property = try #require(
            Self.value(
                try await Self.asyncAPI(),
                "components",
                "schemas",
                "deadLetterHeadersCommon",
                "properties",
                "asnp-source"
            ) as? [String: Any]
        )
        #expect(Set(property["examples"] as? [String] ?? []) == written, "asyncapi.yaml's examples")
        #expect(Set(Self.codeSpans(property["description"] as? String ?? "")) == written, "asyncapi.yaml")
        for file in ["output-topics.md", "ingress.md"] {
            let line = try #require(
                try Self.text(file).split(separator: "\n").first { $0.contains("`asnp-source`") },
                "\(file) names asnp-source"
            )
            // The values follow the header's name, up to the end of the sentence or the table row.
            let name = try #require(line.range(of: "`asnp-source`"))
            let after = line[name.upperBound...].prefix { $0 != ";" }
            let values = Self.codeSpans(String(after)).filter { $0.wholeMatch(of: /[a-z]+/) != nil }
            #expect(Set(values) == written, "\(file): \(line)")
        }
    }

    @Test(
        """
        ce_source: the description names exactly the environments the pattern admits, and every environment \
        workers verify makes a source the pattern admits
        """
    )
    func sourceEnvironments() async throws {
        let document = try await Self.asyncAPI()
        let schema = try #require(Self.value(document, "components", "schemas", "appStoreSource") as? [String: Any])
        let pattern = try #require(schema["pattern"] as? String)
        let alternatives = try #require(pattern.firstMatch(of: /\(([A-Za-z|]+)\)\$$/)).1
        let admitted = alternatives.split(separator: "|").map(String.init)
        // Apple's environment names are capitalised words (V1's `PROD` is not one).
        func environments(_ text: String) -> Set<String> {
            Set(Self.codeSpans(text).filter { $0.wholeMatch(of: /[A-Z][a-z][A-Za-z]*/) != nil })
        }
        #expect(environments(schema["description"] as? String ?? "") == Set(admitted), "asyncapi.yaml")
        let readme = try Self.text("contract/README.md")
        let bullet = try #require(readme.firstMatch(of: #/\n  - `ce_source`: `appstore/[\s\S]*?\n  - /#))
        #expect(environments(String(bullet.0)) == Set(admitted), "README.md: \(bullet.0)")

        let statePattern = try #require(
            Self.value(
                document,
                "components",
                "messages",
                "subscriptionState",
                "headers",
                "properties",
                "ce_source",
                "pattern"
            ) as? String
        )
        for environment in [AppStoreEnvironment.production, .sandbox] {
            let decoded = OutputEvent.DecodedAttributes(
                notificationUUID: UUID(),
                version: 2,
                notificationType: "DID_RENEW",
                environment: environment.rawValue,
                bundleID: "com.example.notes"
            )
            #expect(decoded.source.contains(try Regex(pattern)), "\(decoded.source)")
            let state = OutputEvent.StateAttributes(
                originalTransactionID: "5000000003",
                lastNotificationUUID: UUID(),
                lastSignedDate: Date(timeIntervalSince1970: 1_793_613_600),
                environment: environment.rawValue,
                bundleID: "com.example.notes"
            )
            #expect(state.source.contains(try Regex(statePattern)), "\(state.source)")
        }
    }

    @Test("The prose names only the header names, event types, schema URNs and sandbox prefix the code has")
    func proseNames() throws {
        let headerNames = Set(Self.events().flatMap { $0.full.headers.map(\.key) })
        let types: Set = [OutputEvent.EventType.subscriptionState, OutputEvent.EventType.rejected]
        let uris = Set(OutputEvent.Schema.allCases.map(\.uri))
        let typePrefixes = [1, 2].map {
            OutputEvent.DecodedAttributes(notificationUUID: UUID(), version: $0, notificationType: "").type
        }
        for file in Self.contractFiles {
            for span in Self.codeSpans(try Self.text(file)) {
                if span.wholeMatch(of: /(ce_[a-z]+|asnp-[a-z-]+)/) != nil {
                    #expect(headerNames.contains(span), "\(file) names the header \(span)")
                }
                if span.wholeMatch(of: /asnp\.[a-z.]+/) != nil {
                    #expect(types.contains(span), "\(file) names the ce_type \(span)")
                }
                if span.wholeMatch(of: /urn:asnp:contract:[a-z0-9-]+:[0-9]+/) != nil {
                    #expect(uris.contains(span), "\(file) names the schema \(span)")
                }
                if span.hasPrefix("com.apple.appstore") {
                    #expect(typePrefixes.contains { span.hasPrefix($0) }, "\(file) names the ce_type \(span)")
                }
            }
        }
        // Docs/store.md and verification.md state the same rule for the environment column.
        var prefixes = 0
        for file in Self.contractFiles + ["store.md", "verification.md"] {
            for span in Self.codeSpans(try Self.text(file)) where span.hasPrefix("SANDBOX") {
                prefixes += 1
                let prefix = span.trimmingCharacters(in: CharacterSet(charactersIn: "…"))
                #expect(prefix == ExternalPurchaseToken.sandboxIdentifierPrefix, "\(file) names \(span)")
                #expect(ExternalPurchaseToken(externalPurchaseId: prefix + "1").inferredEnvironment == .sandbox)
            }
        }
        #expect(prefixes >= 3)
    }

    @Test("The duplicate rules, one per topic, read alike in README.md, output-topics.md and asyncapi.yaml")
    func duplicateRules() async throws {
        func table(_ file: String) throws -> [Substring] {
            let lines = try Self.text(file).split(separator: "\n")
            guard let start = lines.firstIndex(where: { $0.hasPrefix("| topic | rule |") }) else { return [] }
            return Array(lines[start...].prefix { $0.hasPrefix("|") })
        }
        let readme = try table("contract/README.md")
        #expect(readme.count == 5, "the header row, its separator and a row per topic")
        #expect(
            readme.dropFirst(2).map { $0.split(separator: "|").first?.trimmingCharacters(in: .whitespaces) } == [
                "decoded", "state", "dead letters",
            ]
        )
        #expect(try table("output-topics.md") == readme)
        let channels = try #require(Self.value(try await Self.asyncAPI(), "channels") as? [String: [String: Any]])
        for (channel, rule) in [
            ("decoded", "Deduplicate on `ce_id`"), ("deadLetter", "Deduplicate on `ce_id`"),
            ("subscriptionState", "Never deduplicate"),
        ] {
            #expect((channels[channel]?["description"] as? String)?.contains(rule) == true, "\(channel): \(rule)")
        }
    }

    // MARK: - Reading the documents

    static func text(_ file: String) throws -> String {
        try String(contentsOf: docs.appendingPathComponent(file), encoding: .utf8)
    }

    /// Every span between backticks, on one line.
    static func codeSpans(_ text: String) -> [String] {
        text.matches(of: /`([^`\n]+)`/).map { String($0.1) }
    }

    /// asyncapi.yaml as JSON, read by PyYAML (what the contract validator reads it with).
    static func asyncAPI() async throws -> [String: Any] {
        let script =
            "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1], encoding='utf-8')), sys.stdout)"
        let run = try await runProgram(
            "python3",
            ["-c", script, docs.appendingPathComponent("contract/asyncapi.yaml").path]
        )
        try #require(run.status == 0, "python3 with PyYAML reads asyncapi.yaml")
        return try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
    }

    static func value(_ object: Any, _ path: String...) -> Any? {
        path.reduce(object as Any?) { ($0 as? [String: Any])?[$1] }
    }

    /// A headers schema of asyncapi.yaml with its `$ref`s followed and its `allOf` merged.
    struct HeadersSchema {
        var properties: [String: [String: Any]] = [:]
        var required: Set<String> = []
    }

    static func headersSchema(_ schema: [String: Any], in document: [String: Any]) -> HeadersSchema {
        let schema = resolve(schema, in: document)
        var result = HeadersSchema()
        for part in schema["allOf"] as? [[String: Any]] ?? [] {
            let inner = headersSchema(part, in: document)
            result.required.formUnion(inner.required)
            for (name, property) in inner.properties {
                result.properties[name, default: [:]].merge(property) { $1 }
            }
        }
        result.required.formUnion(schema["required"] as? [String] ?? [])
        for (name, property) in schema["properties"] as? [String: Any] ?? [:] {
            result.properties[name, default: [:]].merge(resolve(property as? [String: Any] ?? [:], in: document)) {
                $1
            }
        }
        return result
    }

    /// `schema` with a local `$ref` replaced by what it points to (the `$ref`'s siblings win, as AsyncAPI reads them).
    static func resolve(_ schema: [String: Any], in document: [String: Any]) -> [String: Any] {
        guard let reference = schema["$ref"] as? String, reference.hasPrefix("#/") else { return schema }
        let path = reference.dropFirst(2).split(separator: "/").map(String.init)
        var resolved = resolve(
            path.reduce(document as Any?) { ($0 as? [String: Any])?[$1] } as? [String: Any] ?? [:],
            in: document
        )
        for (key, value) in schema where key != "$ref" { resolved[key] = value }
        return resolved
    }

    // MARK: - What the code has

    /// The topics under the settings in `environment`: raw, decoded, state, dead letters.
    static func topics(_ environment: [String: String]) async throws -> [String] {
        let settings = try await PipelineSettings.load(
            file: nil,
            environment: DeployFilesTests.minimalEnvironment.merging(environment) { $1 }
        )
        let output = try settings.outputTopics()
        return [try settings.rawTopic(), output.decoded, output.subscriptionState, output.deadLetter]
    }

    /// Each message of asyncapi.yaml as OutputEvent builds it: with every optional attribute, and with none.
    static func events() -> [(message: String, full: KafkaProducerMessage, minimal: KafkaProducerMessage)] {
        let signedDate = Date(timeIntervalSince1970: 1_793_613_600)
        let v2 = OutputEvent.DecodedAttributes(
            notificationUUID: UUID(uuidString: "0b6a1c2e-4d5f-4a6b-8c7d-9e0f1a2b3c4d")!,
            version: 2,
            notificationType: "DID_RENEW",
            subtype: "BILLING_RECOVERY",
            signedDate: signedDate,
            environment: "Sandbox",
            bundleID: "com.example.notes",
            originalTransactionID: "5000000003"
        )
        var bareV2 = v2
        bareV2.subtype = nil
        bareV2.originalTransactionID = nil
        // V1 has no signed date; its id is a version-8 UUID from the body's digest.
        var v1 = v2
        v1.version = 1
        v1.notificationUUID = UUID(uuidString: "0b6a1c2e-4d5f-8a6b-8c7d-9e0f1a2b3c4d")!
        v1.subtype = nil
        v1.signedDate = nil
        var bareV1 = v1
        bareV1.originalTransactionID = nil
        // Every optional attribute includes the trace context, with vendors' state.
        let trace = OutputEvent.Trace(
            traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            tracestate: "asnp=1"
        )
        func decoded(_ attributes: OutputEvent.DecodedAttributes, traced: Bool) -> KafkaProducerMessage {
            OutputEvent.decoded(
                attributes,
                json: "{}",
                key: "5000000003",
                topic: PipelineTopics.decoded,
                trace: traced ? trace : nil
            )
        }
        func state(traced: Bool) -> KafkaProducerMessage {
            OutputEvent.subscriptionState(
                OutputEvent.StateAttributes(
                    originalTransactionID: "5000000003",
                    lastNotificationUUID: v2.notificationUUID,
                    lastSignedDate: signedDate,
                    environment: "Sandbox",
                    bundleID: "com.example.notes"
                ),
                json: "{}",
                topic: PipelineTopics.subscriptionState,
                trace: traced ? trace : nil
            )
        }
        let raw = RawNotificationHeaders(
            version: 2,
            environment: .sandbox,
            app: "notes",
            receivedAt: signedDate,
            requestID: "r-1",
            source: .replay
        )
        func letter(_ body: String, consumed: [(name: String, value: String)], traced: Bool) -> KafkaProducerMessage {
            OutputEvent.deadLetter(
                body: Array(body.utf8),
                status: "VERIFICATION_FAILURE",
                reason: "the signature does not verify",
                receivedAt: signedDate,
                consumedHeaders: Dictionary(uniqueKeysWithValues: consumed.map { ($0.name, $0.value) }),
                source: KafkaTopicPartitionOffset(topic: PipelineTopics.raw, partition: 3, offset: 1042),
                key: nil,
                topic: PipelineTopics.deadLetter,
                trace: traced ? trace : nil
            )
        }
        return [
            ("decodedV2", decoded(v2, traced: true), decoded(bareV2, traced: false)),
            ("decodedV1", decoded(v1, traced: true), decoded(bareV1, traced: false)),
            ("subscriptionState", state(traced: true), state(traced: false)),
            (
                "deadLetterJson", letter("{}", consumed: raw.fields, traced: true),
                letter("{}", consumed: [], traced: false)
            ),
            (
                "deadLetterBinary", letter("not json", consumed: raw.fields, traced: true),
                letter("not json", consumed: [], traced: false)
            ),
        ]
    }
}
