// swift-tools-version:6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "AppStoreNotificationPipeline",
    platforms: [.macOS(.v15)],
    products: [
        // What operators run: every role of the pipeline and its tools. The image ships this alone.
        .executable(name: "asnp", targets: ["asnp"]),
        // Benchmarks and load generation; starts the `asnp` built beside it.
        .executable(name: "asnp-bench", targets: ["asnp-bench"]),
        // The libraries another package may use: Apple's notification shapes, and verifying them as Apple does.
        // Every other target is this package's own (`package` access).
        .library(name: "AppStoreModels", targets: ["AppStoreModels"]),
        .library(name: "AppStoreVerification", targets: ["AppStoreVerification"]),
    ],
    traits: [
        .trait(
            name: "DevelopmentTools",
            description: """
                `asnp dev`: the whole pipeline on one machine (a local PostgreSQL, the Kafka mock) and its demo, which \
                signs with the test PKI (AppStoreSigning). On by default; the image builds without it, so what \
                production runs links no test PKI.
                """
        ),
        .default(enabledTraits: ["DevelopmentTools"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        // Minor-pinned: the verifier uses the FixedExpiryValidationTime SPI, which carries no stability promise.
        .package(url: "https://github.com/apple/swift-certificates.git", .upToNextMinor(from: "1.21.1")),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // The ingress's notification requests: HTTP/1 parts as swift-http-types, on the event loop (ADR 0014).
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // OTLP over HTTP only: the gRPC exporter's packages would be built for nothing (about 0.5 min of a fresh
        // debug build with HTTP alone, several minutes with gRPC; ADR 0018).
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        // Tests only: reading Deploy/'s YAML.
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        // Decoded shapes of everything Apple sends; depends on nothing of ours.
        .target(
            name: "AppStoreModels",
            swiftSettings: strictSettings
        ),
        // JWS + x5c verification against Apple's roots, V1 shared-secret checks.
        .target(
            name: "AppStoreVerification",
            dependencies: [
                "AppStoreModels",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSettings
        ),
        // A test PKI shaped like Apple's and a signer for notifications: tests, `asnp dev --demo`, load generation,
        // benchmarks. No product: nothing outside this package signs with it.
        .target(
            name: "AppStoreSigning",
            dependencies: [
                "AppStoreModels",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSettings
        ),
        // librdkafka (Debian's librdkafka-dev) and its mock cluster, as a C module; only KafkaClient imports it.
        .systemLibrary(
            name: "CRDKafka",
            pkgConfig: "rdkafka",
            providers: [.apt(["librdkafka-dev"])]
        ),
        // A thin Swift layer over librdkafka: producer, consumer group, admin, mock cluster. Knows no App Store.
        .target(
            name: "KafkaClient",
            dependencies: [
                "CRDKafka",
                // OAUTHBEARER tokens by the client-credentials grant, requested by this layer itself: Debian's
                // librdkafka has no libcurl for its own (Docs/kafka.md#oauthbearer-without-libcurl).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // Bodies packed for the store, each JWS header once (PackedBody), and rebuilt byte for byte: pure, no
        // PostgreSQL.
        .target(
            name: "NotificationBodies",
            dependencies: [
                "AppStoreModels",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // postgres-nio's pool as a service needs it, knowing no table: a deadline on every operation, a shutdown
        // that ends, failures classified, the migrations runner, the connection settings (libpq's URL and TLS files,
        // PostgresConfiguration) made into postgres-nio's configuration, arrays with NULLs (NullableArray), what text
        // and jsonb cannot hold (PostgresText), and every postgres-nio 1.33.2 workaround; its state one pure
        // StateMachine.
        .target(
            name: "PostgresRuntime",
            dependencies: [
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The App Store schema as the runtime migrates it: every migration in order, the subscription state rules
        // (generated columns and the merge), the UTC months the bodies are partitioned by, the SQL the store's
        // statements share with them.
        .target(
            name: "NotificationSchema",
            dependencies: ["PostgresRuntime"],
            swiftSettings: strictSettings
        ),
        // PostgreSQL: batched idempotent writes, subscription state, packed bodies, the outbox, the reconciler's
        // ledger, reads; on the runtime, over the schema.
        .target(
            name: "NotificationStore",
            dependencies: [
                "AppStoreModels",
                "NotificationBodies",
                "NotificationSchema",
                "PostgresRuntime",
                // Messages' coordinates (KafkaTopicPartitionOffset) are recorded with what was read from them. The
                // outbox holds typed rows; the worker builds the output events from them.
                "KafkaClient",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // What the services and downstream teams agree on: topic names, the raw topic's messages (headers, the
        // partition key and its in-place peek), the output events, the apps a pipeline serves.
        .target(
            name: "PipelineContract",
            dependencies: [
                "AppStoreModels",
                "KafkaClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The roles' spans exported over OTLP/HTTP (swift-otel): the only module that links an OpenTelemetry SDK;
        // the others record through swift-distributed-tracing's API alone.
        .target(
            name: "PipelineTracing",
            dependencies: [
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The thin HTTP receiver Apple posts to: body to the raw topic, 200 only after the broker acknowledged it.
        .target(
            name: "Ingress",
            dependencies: [
                "PipelineContract",
                "PipelineStatus",
                "KafkaClient",
                "AppStoreModels",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // A PostgreSQL server from Debian's programs in a directory of its own: `asnp dev` and the tests.
        .target(
            name: "LocalPostgres",
            dependencies: ["ChildProcesses"],
            swiftSettings: strictSettings
        ),
        // Child processes started with posix_spawn, every inherited descriptor closed (not Foundation's Process).
        .target(
            name: "ChildProcesses",
            swiftSettings: strictSettings
        ),
        // Health probes and the Prometheus scrape on a status port of their own, for the ingress, the worker and the
        // reconciler; the ingress's connection handling on shutdown.
        .target(
            name: "PipelineStatus",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Instrumentation", package: "swift-distributed-tracing"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The reconciler: an App Store Server API client and Get Notification History fed into the raw topic,
        // page by page, from a coverage ledger kept in PostgreSQL.
        .target(
            name: "HistorySync",
            dependencies: [
                "AppStoreModels", "PipelineContract", "KafkaClient", "NotificationStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),
        // `asnp api`: a customer's access and a subscription's state and notifications over HTTP, read from
        // PostgreSQL (a replica will do) for keys kept as hashes, each scoped to apps and environments.
        .target(
            name: "ReadAPI",
            dependencies: [
                "AppStoreModels",
                "NotificationSchema",
                "PipelineContract",
                "PipelineStatus",
                "PostgresRuntime",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),
        // The consumer group that verifies raw bodies, stores them and publishes the output topics.
        .target(
            name: "Worker",
            dependencies: [
                "PipelineContract",
                "KafkaClient",
                "AppStoreModels",
                "AppStoreVerification",
                "NotificationStore",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSettings
        ),
        // What the command-line tools share: exit codes, database options, text reports, child processes.
        .target(
            name: "CommandSupport",
            dependencies: [
                "ChildProcesses",
                "NotificationStore",
                "PostgresRuntime",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // Notifications put back on the raw topic for the workers to verify again: rejected rows, offset ranges.
        .target(
            name: "PipelineReplay",
            dependencies: [
                "KafkaClient",
                "NotificationStore",
                "PipelineContract",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // What the operators' commands report, apart from parsing and printing: the store's counts, a
        // subscription, retention, the reconciler's ledgers, verification results, output events as JSON lines.
        .target(
            name: "PipelineReports",
            dependencies: [
                "AppStoreModels",
                "AppStoreVerification",
                "CommandSupport",
                "KafkaClient",
                "NotificationStore",
                "PipelineContract",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The wiring: settings (environment + file) and one builder per role, returning services ready for a
        // ServiceGroup. The commands parse arguments and run what these build; tests build the same in-process.
        .target(
            name: "PipelineServices",
            dependencies: [
                "AppStoreModels",
                "AppStoreVerification",
                "KafkaClient",
                "NotificationStore",
                "PostgresRuntime",
                "PipelineContract",
                "Ingress",
                "Worker",
                "PipelineStatus",
                "HistorySync",
                "PipelineTracing",
                "ReadAPI",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The `asnp` command: each role's service and the operators' tools. The roles' commands run what
        // PipelineServices builds; the tools use the store, Kafka and verification modules directly.
        .executableTarget(
            name: "asnp",
            dependencies: [
                "AppStoreModels",
                "AppStoreVerification",
                .target(name: "AppStoreSigning", condition: .when(traits: ["DevelopmentTools"])),
                "CommandSupport",
                "KafkaClient",
                "NotificationStore",
                "PostgresRuntime",
                "NotificationSchema",
                "PipelineContract",
                "PipelineReplay",
                "PipelineReports",
                "PipelineServices",
                "PipelineTracing",
                "PipelineStatus",
                "ReadAPI",
                .target(name: "LocalPostgres", condition: .when(traits: ["DevelopmentTools"])),
                "HistorySync",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSettings
        ),
        // The loads the benchmarks post and the tests reuse: signed workloads, the open-loop HTTP load generator,
        // wrk's reports, the chaos soak's schedule and checks, and how an e2e step is summed up. A library, so the
        // tests link it and not the bench executable.
        .target(
            name: "LoadGeneration",
            dependencies: [
                "AppStoreModels",
                "AppStoreSigning",
                "AppStoreVerification",
                "KafkaClient",
                "PipelineContract",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // `asnp-bench`: benchmarks against same-run baselines, the load generator's command and the chaos soak. No
        // test target depends on it: the tests run it as a process, as a user does.
        .executableTarget(
            name: "asnp-bench",
            dependencies: [
                "LoadGeneration",
                "AppStoreModels",
                "AppStoreVerification",
                "AppStoreSigning",
                "CommandSupport",
                "KafkaClient",
                "NotificationBodies",
                "NotificationStore",
                "PostgresRuntime",
                "PipelineContract",
                "Ingress",
                // `asnp-bench api`: its keys.
                "ReadAPI",
                // `asnp-bench soak`: a PostgreSQL server of its own, stopped and started; its children; body hashes.
                "LocalPostgres",
                "ChildProcesses",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSettings
        ),
        // Fixture loading and stand-in HTTP servers (LoopbackServer) shared by the test targets.
        .target(
            name: "AppStoreTestSupport",
            dependencies: [
                "AppStoreModels",
                .product(name: "Logging", package: "swift-log"),
                // LoopbackServer: the tests' stand-in HTTP servers.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/AppStoreTestSupport",
            swiftSettings: strictSettings
        ),
        // Apple's payloads decoded (V1 and V2, future values kept), the JWS and base64url helpers.
        .testTarget(
            name: "AppStoreModelsTests",
            dependencies: ["AppStoreModels", "AppStoreTestSupport"],
            swiftSettings: strictSettings
        ),
        // Verification's verdicts, against the test PKI and Apple's fixtures.
        // Verifiers configured as the fixtures were labelled, for every test target that verifies them.
        .target(
            name: "VerificationTestSupport",
            dependencies: [
                "AppStoreModels",
                "AppStoreVerification",
                "AppStoreTestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            path: "Tests/VerificationTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "AppStoreVerificationTests",
            dependencies: [
                "AppStoreModels",
                "AppStoreVerification",
                "AppStoreSigning",
                "AppStoreTestSupport",
                "VerificationTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: strictSettings
        ),
        // The Kafka layer against the mock cluster; OAUTHBEARER against a stand-in token endpoint.
        .testTarget(
            name: "KafkaClientTests",
            dependencies: [
                "KafkaClient",
                "AppStoreTestSupport",
                // The token endpoint stand-in of the OAUTHBEARER tests.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // A throwaway PostgreSQL server for the test targets that need one.
        .target(
            name: "StoreTestSupport",
            dependencies: [
                "NotificationStore", "PostgresRuntime", "AppStoreModels", "AppStoreTestSupport", "LocalPostgres",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/StoreTestSupport",
            swiftSettings: strictSettings
        ),
        // The runtime's state machine: every transition, and seeded random interleavings.
        .testTarget(
            name: "PostgresRuntimeTests",
            dependencies: [
                "PostgresRuntime",
                "AppStoreSigning",
                "AppStoreTestSupport",
            ],
            swiftSettings: strictSettings
        ),
        // Bodies for the tests of packing, signed with the test PKI and mutated as senders encode things, from a seed.
        .target(
            name: "NotificationBodiesTestSupport",
            dependencies: ["NotificationBodies", "AppStoreModels", "AppStoreSigning"],
            path: "Tests/NotificationBodiesTestSupport",
            swiftSettings: strictSettings
        ),
        // Packing and rebuilding bodies: every fixture byte for byte, stored forms of every format, corrupt forms.
        .testTarget(
            name: "NotificationBodiesTests",
            dependencies: [
                "NotificationBodies",
                "NotificationBodiesTestSupport",
                "AppStoreModels",
                "AppStoreSigning",
                "AppStoreTestSupport",
            ],
            swiftSettings: strictSettings
        ),
        // The store against a throwaway PostgreSQL: migrations, batch writes, state, packed bodies, retention, faults.
        // The rig the tests of the pipeline's parts run on in their own process: the Kafka mock with the pipeline's
        // topics, a migrated database, a producer and a store, services stopped within a limit.
        .target(
            name: "PipelineTestSupport",
            dependencies: [
                "AppStoreTestSupport",
                "StoreTestSupport",
                "KafkaClient",
                "NotificationStore",
                "PostgresRuntime",
                "PipelineContract",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/PipelineTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "NotificationStoreTests",
            dependencies: [
                "NotificationStore",
                "NotificationBodies",
                "PostgresRuntime",
                "NotificationSchema",
                "NotificationBodiesTestSupport",
                "KafkaClient",
                "PipelineContract",
                "AppStoreModels",
                "AppStoreVerification",
                "AppStoreSigning",
                "AppStoreTestSupport",
                "VerificationTestSupport",
                "StoreTestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The partition key, timestamps and the output events.
        .testTarget(
            name: "PipelineContractTests",
            dependencies: [
                "PipelineContract",
                "KafkaClient",
                "AppStoreModels",
                "AppStoreSigning",
                "AppStoreTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The ingress over HTTP against the mock cluster: routes, statuses, abuse limits, faults, its codec.
        .testTarget(
            name: "IngressTests",
            dependencies: [
                "Ingress",
                "PipelineContract",
                "PipelineStatus",
                "KafkaClient",
                "AppStoreModels",
                "AppStoreSigning",
                "AppStoreTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The worker against the mock cluster and a throwaway PostgreSQL.
        .testTarget(
            name: "WorkerTests",
            dependencies: [
                "Worker",
                "StoreTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                "PipelineContract",
                "KafkaClient",
                "NotificationStore",
                "PostgresRuntime",
                "AppStoreModels",
                "AppStoreVerification",
                "AppStoreTestSupport",
                "PipelineTestSupport",
                "AppStoreSigning",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictSettings
        ),
        // The read API over HTTP against a throwaway PostgreSQL filled by the store's writer: every endpoint, keys,
        // scopes, rate limits, conditional requests; every answer validated against Docs/contract/openapi.yaml.
        .testTarget(
            name: "ReadAPITests",
            dependencies: [
                "ReadAPI",
                "AppStoreModels",
                "AppStoreSigning",
                "AppStoreTestSupport",
                "AppStoreVerification",
                "NotificationStore",
                "PipelineContract",
                "PipelineStatus",
                "PostgresRuntime",
                "StoreTestSupport",
                "VerificationTestSupport",
                "KafkaClient",
                "LocalPostgres",
                "ChildProcesses",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "PipelineTracing",
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: strictSettings
        ),
        // A stand-in for Apple's Get Notification History endpoint, for the reconciler's tests.
        .target(
            name: "HistoryTestSupport",
            dependencies: [
                "AppStoreModels",
                "AppStoreTestSupport",
                "PipelineStatus",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            path: "Tests/HistoryTestSupport",
            swiftSettings: strictSettings
        ),
        // The reconciler against the stand-in history endpoint, the mock cluster and a throwaway PostgreSQL.
        .testTarget(
            name: "HistorySyncTests",
            dependencies: [
                "HistorySync", "HistoryTestSupport", "AppStoreModels", "AppStoreSigning", "StoreTestSupport",
                "NotificationStore", "PostgresRuntime", "KafkaClient", "PipelineContract", "PipelineServices",
                "PipelineStatus", "AppStoreTestSupport", "PipelineTracing",
                "PipelineTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // Both executables' commands, the pipeline's processes under faults, the generated CLI reference (Docs/cli.md),
        // Deploy/'s files and alert rules.
        .testTarget(
            name: "PipelineReplayTests",
            dependencies: [
                "PipelineReplay",
                "AppStoreTestSupport",
                "PipelineTestSupport",
                "AppStoreModels",
                "NotificationStore",
                "KafkaClient",
                "PipelineContract",
                "StoreTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "PipelineReportsTests",
            dependencies: [
                "PipelineReports",
                "CommandSupport",
                "NotificationStore",
                "KafkaClient",
                "PipelineContract",
                "AppStoreModels",
                "AppStoreVerification",
                "AppStoreSigning",
                "AppStoreTestSupport",
                "VerificationTestSupport",
                "StoreTestSupport",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "asnpTests",
            dependencies: [
                "asnp",
                "LoadGeneration",
                "CommandSupport",
                "PipelineServices",
                "PipelineTracing",
                "PipelineTestSupport",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "AppStoreModels",
                "AppStoreVerification",
                "PipelineContract",
                "Ingress",
                "Worker",
                "PipelineStatus",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Configuration", package: "swift-configuration"),
                "AppStoreTestSupport",
                "AppStoreSigning",
                "StoreTestSupport",
                // The children the tests start (ChildProcess, OutputPipe).
                "ChildProcesses",
                "NotificationStore",
                "PostgresRuntime",
                "NotificationSchema",
                "KafkaClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                "HistorySync",
                "HistoryTestSupport",
                "ReadAPI",
                .product(name: "Yams", package: "Yams"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
