import AppStoreModels
import AppStoreTestSupport
import ArgumentParser
import AsyncHTTPClient
import CommandSupport
import CoreMetrics
import Foundation
import HTTPTypes
import HistoryTestSupport
import KafkaClient
import Logging
import NIOCore
import NIOHTTP1
import NotificationStore
import PipelineContract
import PipelineServices
import PipelineStatus
import PostgresRuntime
import Prometheus
import ReadAPI
import ServiceLifecycle
import Testing
import Yams

@testable import Ingress
@testable import Worker
@testable import asnp

/// Deploy/ cannot run here (no container engine, no cluster), so these tests hold it to the code: every file parses,
/// every container runs a command asnp has with settings asnp accepts and reads, and the ports, probe paths, metric
/// names, consumer group and topics it names are the ones the code uses.
@Suite(
    "Deploy/: the Dockerfile, docker-compose, Kubernetes manifests and dashboards agree with the code",
    .tags(.process)
)
struct DeployFilesTests {
    static let deploy = Fixtures.packageRoot.appendingPathComponent("Deploy")

    @Test("every YAML and JSON file in Deploy/ and Config/ parses")
    func everyFileParses() throws {
        var parsed = 0
        for directory in ["Deploy", "Config"] {
            let root = Fixtures.packageRoot.appendingPathComponent(directory)
            let files = try #require(FileManager.default.subpaths(atPath: root.path))
            for file in files.sorted() {
                let path = root.appendingPathComponent(file).path
                if file.hasSuffix(".yaml") || file.hasSuffix(".yml") {
                    let documents = try Array(Yams.load_all(yaml: try String(contentsOfFile: path, encoding: .utf8)))
                    #expect(!documents.isEmpty && documents.allSatisfy { $0 is [String: Any] }, "\(file)")
                    parsed += 1
                } else if file.hasSuffix(".json") {
                    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path)))
                    #expect(object is [String: Any], "\(file)")
                    parsed += 1
                }
            }
        }
        #expect(parsed >= 20)
    }

    @Test("the Dockerfile builds the asnp product with CI's bootstrap, and runs it as a non-root user on its ports")
    func dockerfile() async throws {
        let text = try Self.text("Dockerfile")
        #expect(text.contains("RUN ASNP_BOOTSTRAP_TEST_TOOLS=0 scripts/bootstrap"))
        #expect(
            text.contains("swift build -c release --force-resolved-versions --product asnp --disable-default-traits")
        )
        // The pinned dependencies resolved in a layer before any source is copied: a source change reuses it.
        let resolve = try #require(
            text.range(
                of: "COPY Package.swift Package.resolved ./\nRUN swift package resolve --force-resolved-versions"
            )
        )
        let sources = try #require(text.range(of: "COPY Sources/"))
        #expect(resolve.upperBound < sources.lowerBound)
        #expect(text.contains("USER 10001"))
        #expect(text.contains("ENTRYPOINT [\"/usr/local/bin/asnp\"]"))
        let exposed = try #require(text.split(separator: "\n").first { $0.hasPrefix("EXPOSE ") })
        let defaults = try await PipelineSettings.load(file: nil, environment: Self.minimalEnvironment)
        let ingressPort = try defaults.ingressRole().ingress.port
        let statusPort = try defaults.workerRole().status.port
        #expect(exposed == "EXPOSE \(ingressPort) \(statusPort)")
        let manifest = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("Package.swift"),
            encoding: .utf8
        )
        #expect(manifest.contains(".executable(name: \"asnp\""))
    }

    /// BuildKit reads `<Dockerfile>.dockerignore` beside the Dockerfile: a COPY source it excludes is missing from
    /// the build context, and the build fails at that COPY.
    @Test("every file the Dockerfile copies from the context exists and is not excluded by Dockerfile.dockerignore")
    func dockerfileInputsReachTheBuild() throws {
        let patterns = try Self.text("Dockerfile.dockerignore").split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
            .map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        #expect(!patterns.isEmpty)
        var sources: [String] = []
        for line in try Self.text("Dockerfile").split(separator: "\n") where line.hasPrefix("COPY ") {
            let words = line.split(separator: " ").dropFirst().map(String.init)
            guard !words.contains(where: { $0.hasPrefix("--from=") }) else { continue }
            sources += words.dropLast().filter { !$0.hasPrefix("--") }
                .map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        }
        #expect(sources.contains("Package.resolved"), "the pinned versions reach the build")
        for source in sources {
            let path = Fixtures.packageRoot.appendingPathComponent(source).path
            #expect(FileManager.default.fileExists(atPath: path), "COPY \(source): no such file")
            // A pattern excludes the path itself and everything below it (fnmatch, as the ignore file's patterns).
            let excluding = patterns.filter { pattern in
                fnmatch(pattern, source, 0) == 0 || source.hasPrefix(pattern + "/")
            }
            #expect(excluding.isEmpty, "COPY \(source) is excluded by Dockerfile.dockerignore's \(excluding)")
        }
    }

    /// Registries, scanners and `docker inspect` read the OCI labels; `asnp --version` in a container reads the commit
    /// the image sets (ADR 0017). The build context has no .git, so both come in as build arguments.
    @Test(
        """
        the image is labelled with its release, commit, source, license, title, description and build time, from \
        build arguments Deploy/README.md passes; its binary knows the commit, and carries the license
        """
    )
    func imageLabels() throws {
        let text = try Self.text("Dockerfile")
        // The runtime stage: after the last FROM, continuation lines joined.
        let runtime = try #require(text.components(separatedBy: "\nFROM ").last).replacing("\\\n", with: " ")
        let lines = runtime.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let arguments = Set(lines.filter { $0.hasPrefix("ARG ") }.map { $0.dropFirst(4).prefix { $0 != "=" } })
        #expect(arguments == ["VERSION", "COMMIT", "CREATED", "SOURCE"])
        let label = try #require(lines.first { $0.hasPrefix("LABEL ") })
        let labels = Dictionary(
            label.matches(of: /([a-z.]+)="([^"]*)"/).map { (String($0.output.1), String($0.output.2)) },
            uniquingKeysWith: { first, _ in first }
        )
        #expect(
            labels.filter { $0.key != "org.opencontainers.image.description" }
                == [
                    "org.opencontainers.image.title": "asnp",
                    "org.opencontainers.image.version": "$VERSION",
                    "org.opencontainers.image.revision": "$COMMIT",
                    "org.opencontainers.image.created": "$CREATED",
                    "org.opencontainers.image.source": "$SOURCE",
                    "org.opencontainers.image.licenses": "Apache-2.0",
                ]
        )
        #expect(labels["org.opencontainers.image.description"]?.isEmpty == false)
        #expect(lines.contains("ENV \(BuildVersion.commitVariable)=$COMMIT"))
        // The label's license is the repository's, and the image carries its text.
        let license = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("LICENSE"),
            encoding: .utf8
        )
        #expect(license.hasPrefix("                                 Apache License\n"))
        #expect(license.contains("Version 2.0, January 2004"))
        #expect(lines.contains("COPY LICENSE /usr/share/doc/asnp/LICENSE"))
        // A VERSION argument must be the binary's own release: the builder checks it against `asnp --version`.
        #expect(
            text.contains(#"test "$VERSION" = unknown || test "$(/out/asnp --version | cut -d ' ' -f 1)" = "$VERSION""#)
        )
        // The documented build command names the release and the commit.
        let readme = try Self.text("README.md")
        let command = try #require(
            readme.firstMatch(of: /docker build -f Deploy\/Dockerfile(?:[^\n]*\\\n)*[^\n]*/).map { String($0.output) }
        )
        #expect(command.contains(#"--build-arg VERSION="$(cat VERSION)""#), "\(command)")
        #expect(command.contains(#"--build-arg COMMIT="$(git rev-parse HEAD)""#), "\(command)")
        #expect(command.contains("--build-arg CREATED="), "\(command)")
    }

    @Test("docker-compose: each asnp service runs a command asnp has, and sets only settings that command reads")
    func composeServices() async throws {
        let compose = try Self.yaml("docker-compose.yml")[0]
        let services = try #require(compose["services"] as? [String: Any])
        var commands: [String: String] = [:]
        for (name, value) in services {
            let service = try #require(value as? [String: Any])
            guard (service["image"] as? String)?.hasPrefix("asnp") == true else { continue }
            let build = try #require(service["build"] as? [String: Any], "\(name)")
            #expect(build["dockerfile"] as? String == "Deploy/Dockerfile")
            let command = try #require((service["command"] as? [String])?.first, "\(name)")
            commands[name] = command
            let environment = (service["environment"] as? [String: Any] ?? [:]).mapValues(Self.composeValue)
            try await Self.expectAccepted(
                command: command,
                environment: environment,
                ownVariables: Set(environment.keys),
                in: "compose \(name)"
            )
        }
        #expect(commands == ["migrate": "migrate", "ingress": "ingress", "worker": "worker"])
        let worker = try #require(services["worker"] as? [String: Any])
        #expect((worker["deploy"] as? [String: Any])?["replicas"] as? Int == 2)
        // The public port on every interface; the status port (probes, /metrics) on the host's loopback only.
        let ingress = try #require(services["ingress"] as? [String: Any])
        let ingressEnvironment = (ingress["environment"] as? [String: Any] ?? [:]).mapValues(Self.composeValue)
        let ingressRole = try await PipelineSettings.load(
            file: nil,
            environment: Self.minimalEnvironment.merging(ingressEnvironment) { $1 }
        ).ingressRole()
        #expect(
            ingress["ports"] as? [String]
                == [
                    "\(ingressRole.ingress.port):\(ingressRole.ingress.port)",
                    "127.0.0.1:9091:\(ingressRole.status.port)",
                ]
        )
        // The broker writes where its volume is (the image's default log.dirs is under /tmp).
        let kafka = try #require(services["kafka"] as? [String: Any])
        let logDirectory = try #require((kafka["environment"] as? [String: Any])?["KAFKA_LOG_DIRS"] as? String)
        #expect((kafka["volumes"] as? [String])?.contains("kafka-data:\(logDirectory)") == true)
    }

    @Test("Kubernetes (base and production): containers, settings, secrets, ports and probes agree with asnp")
    func kubernetesWorkloads() async throws {
        let base = try Self.envFile("kubernetes/base/settings.env")
        let production = base.merging(try Self.envFile("kubernetes/overlays/production/settings.env")) { $1 }
        let baseDocuments = try Self.yamlDocuments(under: "kubernetes/base")
        let productionDocuments = try baseDocuments + Self.yamlDocuments(under: "kubernetes/overlays/production")
        // The production overlay with each cloud's component (its settings merged, as kustomize merges them).
        let clouds = try Self.components.map { component in
            (
                production.merging(try Self.envFile("kubernetes/components/\(component)/settings.env")) { $1 },
                productionDocuments
            )
        }
        var seen: Set<String> = []
        for (settings, documents) in [(base, baseDocuments), (production, productionDocuments)] + clouds {
            // The ConfigMap serves every role: each of its variables must be read by one of them.
            var readByAnyRole: Set<String> = []
            for document in documents {
                guard let pod = Self.podSpec(document) else { continue }
                let name = try #require((document["metadata"] as? [String: Any])?["name"] as? String)
                for container in try #require(pod["containers"] as? [[String: Any]]) {
                    // Kustomize's images: rewrites 'asnp'; the one other image is the production overlay's pooler.
                    guard container["image"] as? String == "asnp" else {
                        #expect(container["image"] as? String == "pgbouncer", "\(name)")
                        continue
                    }
                    let command = try #require((container["args"] as? [String])?.first)
                    seen.insert("\(name) \(command)")
                    let own = Set((container["env"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
                    readByAnyRole.formUnion(
                        try await Self.expectAccepted(
                            command: command,
                            environment: try Self.environment(of: container, settings: settings),
                            ownVariables: own,
                            in: name
                        )
                    )
                    try await Self.expectPortsAndProbes(of: container, command: command, settings: settings)
                }
            }
            for variable in settings.keys.sorted() {
                #expect(readByAnyRole.contains(variable), "asnp-settings sets \(variable), which no role reads")
            }
        }
        #expect(
            seen == [
                "asnp-migrate migrate", "asnp-ingress ingress", "asnp-worker worker", "asnp-history history",
                "asnp-retention retention", "asnp-api api",
            ]
        )
    }

    @Test(
        """
        production drops bodies past retention daily: a CronJob runs asnp retention --apply, never two at once, \
        with the retention its settings set
        """
    )
    func retentionCronJob() async throws {
        let documents = try Self.yamlDocuments(under: "kubernetes/overlays/production")
        let cronJob = try #require(documents.first { $0["kind"] as? String == "CronJob" })
        #expect(Self.value(cronJob, "metadata", "name") as? String == "asnp-retention")
        #expect(Self.value(cronJob, "spec", "concurrencyPolicy") as? String == "Forbid")
        let schedule = try #require(Self.value(cronJob, "spec", "schedule") as? String)
        #expect(schedule.split(separator: " ").suffix(3) == ["*", "*", "*"], "daily: \(schedule)")
        let container = try #require((Self.podSpec(cronJob)?["containers"] as? [[String: Any]])?.first)
        let arguments = try #require(container["args"] as? [String])
        let command = try #require(try ASNP.parseAsRoot(arguments) as? RetentionCommand, "\(arguments)")
        #expect(command.apply && !command.dryRun && command.retainMonths == nil)
        // Without a retention, `asnp retention --apply` refuses to run (exit 2): the overlay's settings give one.
        let settings = try Self.envFile("kubernetes/base/settings.env")
            .merging(try Self.envFile("kubernetes/overlays/production/settings.env")) { $1 }
        let loaded = try await PipelineSettings.load(
            file: nil,
            environment: try Self.environment(of: container, settings: settings)
        )
        #expect(try loaded.int("retention.retainBodyMonths") == 13)
        #expect(try Self.envFile("kubernetes/base/settings.env")["RETENTION_RETAIN_BODY_MONTHS"] == nil)
    }

    @Test(
        """
        Kubernetes applies as it is: no autoscaled Deployment sets replicas; every pod meets Pod Security "restricted" \
        (non-root, seccomp RuntimeDefault, no privilege escalation, all capabilities dropped); every probe's timeout \
        exceeds the ingress's readiness wait; scaling in is damped; the worker's verification threads follow its CPU \
        limit
        """
    )
    func kubernetesAppliesAsItIs() throws {
        let documents =
            try Self.yamlDocuments(under: "kubernetes/base")
            + Self.yamlDocuments(under: "kubernetes/overlays/production")
        let autoscaled = Set(
            documents.filter { ["HorizontalPodAutoscaler", "ScaledObject"].contains($0["kind"] as? String) }
                .compactMap { Self.value($0, "spec", "scaleTargetRef", "name") as? String }
        )
        #expect(autoscaled == ["asnp-ingress", "asnp-worker", "asnp-api"])
        let settings = try Self.envFile("kubernetes/base/settings.env")
            .merging(try Self.envFile("kubernetes/overlays/production/settings.env")) { $1 }
        let readinessWait =
            settings["INGRESS_READINESS_TIMEOUT_SECONDS"].flatMap(Double.init)
            ?? Double(IngressConfiguration(apps: []).readinessTimeout.components.seconds)
        var pods = 0
        for document in documents {
            guard let pod = Self.podSpec(document) else { continue }
            let name = try #require(Self.value(document, "metadata", "name") as? String)
            if autoscaled.contains(name) {
                #expect(Self.value(document, "spec", "replicas") == nil, "\(name): its autoscaler owns the count")
            }
            pods += 1
            #expect(Self.value(pod, "securityContext", "runAsNonRoot") as? Bool == true, "\(name)")
            #expect(
                Self.value(pod, "securityContext", "seccompProfile", "type") as? String == "RuntimeDefault",
                "\(name)"
            )
            let containers =
                (pod["containers"] as? [[String: Any]] ?? []) + (pod["initContainers"] as? [[String: Any]] ?? [])
            for container in containers {
                let security = container["securityContext"] as? [String: Any] ?? [:]
                #expect(security["allowPrivilegeEscalation"] as? Bool == false, "\(name)")
                #expect(Self.value(security, "capabilities", "drop") as? [String] == ["ALL"], "\(name)")
                for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                    guard let settings = container[probe] as? [String: Any] else { continue }
                    // Kubernetes' default timeout is 1 s.
                    let timeout = Double(settings["timeoutSeconds"] as? Int ?? 1)
                    #expect(timeout > readinessWait, "\(name) \(probe): \(timeout) s")
                }
            }
        }
        #expect(pods == 7, "ingress, worker, migrate, history, pgbouncer, retention, api")

        // Scaling in is damped: each change of the workers' count is a rebalance.
        let workerScaling = try #require(documents.first { $0["kind"] as? String == "ScaledObject" })
        let workerScaleDown = Self.value(
            workerScaling,
            "spec",
            "advanced",
            "horizontalPodAutoscalerConfig",
            "behavior",
            "scaleDown"
        )
        #expect(
            (Self.value(workerScaleDown as? [String: Any] ?? [:], "stabilizationWindowSeconds") as? Int ?? 0) >= 300
        )
        let ingressScaling = try #require(documents.first { $0["kind"] as? String == "HorizontalPodAutoscaler" })
        #expect(
            (Self.value(ingressScaling, "spec", "behavior", "scaleDown", "stabilizationWindowSeconds") as? Int ?? 0)
                >= 300
        )
        // Verification threads follow the worker's CPU limit, not the node's cores.
        let worker = try #require(
            documents.first {
                $0["kind"] as? String == "Deployment" && Self.value($0, "metadata", "name") as? String == "asnp-worker"
            }
        )
        let container = try #require(
            (Self.value(worker, "spec", "template", "spec", "containers") as? [[String: Any]])?.first
        )
        #expect(Self.value(container, "resources", "limits", "cpu") != nil)
        let parallelism = (container["env"] as? [[String: Any]] ?? []).first {
            $0["name"] as? String == "WORKER_PARALLELISM"
        }
        #expect(Self.value(parallelism ?? [:], "valueFrom", "resourceFieldRef", "resource") as? String == "limits.cpu")
    }

    @Test("workers scale on the lag of the group and topic they consume, up to the raw topic's partitions")
    func workerScaling() async throws {
        let settings = try await PipelineSettings.load(
            file: nil,
            environment: Self.minimalEnvironment.merging(try Self.envFile("kubernetes/base/settings.env")) { $1 }
        )
        let worker = try settings.workerRole().worker
        let rawTopic = try #require(worker.consumer.topics.first)
        let base = try #require(try Self.yaml("kubernetes/base/worker-scaledobject.yaml").first)
        let production = try #require(try Self.yaml("kubernetes/overlays/production/worker-scaling.yaml").first)
        for scaledObject in [base, production] {
            let trigger = try #require((Self.value(scaledObject, "spec", "triggers") as? [[String: Any]])?.first)
            let metadata = try #require(trigger["metadata"] as? [String: Any])
            #expect(trigger["type"] as? String == "kafka")
            #expect(metadata["consumerGroup"] as? String == worker.consumer.groupID)
            #expect(metadata["topic"] as? String == rawTopic)
            #expect(metadata["bootstrapServersFromEnv"] as? String == "KAFKA_BOOTSTRAP_SERVERS")
        }
        // docker-compose's topics and the base share a partition count; production's come from kafka-topics/.
        let compose = try Self.text("docker-compose.yml")
        #expect(compose.contains("--partitions \(Self.value(base, "spec", "maxReplicaCount") as? Int ?? -1)"))
        let topics = try Self.yaml("kubernetes/kafka-topics/kafka-topics.yaml")
        let raw = try #require(topics.first { Self.value($0, "metadata", "name") as? String == rawTopic })
        #expect(
            Self.value(raw, "spec", "partitions") as? Int == Self.value(production, "spec", "maxReplicaCount") as? Int
        )
        let names = Set(topics.compactMap { Self.value($0, "metadata", "name") as? String })
        let outputs = worker.outputTopics
        #expect(names == [rawTopic, outputs.decoded, outputs.subscriptionState, outputs.deadLetter])
        let state = try #require(
            topics.first { Self.value($0, "metadata", "name") as? String == outputs.subscriptionState }
        )
        #expect(Self.value(state, "spec", "config", "cleanup.policy") as? String == "compact")
    }

    @Test(
        "the dashboard has namespace and job variables, and every query selects by both (staging and production apart)"
    )
    func dashboardVariables() throws {
        let dashboard = try #require(
            try JSONSerialization.jsonObject(with: Data(Self.text("grafana/asnp-dashboard.json").utf8))
                as? [String: Any]
        )
        let variables = try #require(Self.value(dashboard, "templating", "list") as? [[String: Any]])
        #expect(Set(variables.compactMap { $0["name"] as? String }).isSuperset(of: ["namespace", "job"]))
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let expressions = panels.flatMap {
            ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String }
        }
        #expect(expressions.count >= 15)
        for expression in expressions {
            let selectors = expression.matches(of: /asnp_[a-z_]+(\{[^}]*\})?/)
            #expect(!selectors.isEmpty, "\(expression)")
            for selector in selectors {
                let matchers = selector.output.1.map(String.init) ?? ""
                #expect(
                    matchers.contains(#"namespace=~"$namespace""#) && matchers.contains(#"job=~"$job""#),
                    "\(selector.output.0) in \(expression)"
                )
            }
        }
    }

    @Test(
        "every metric the dashboard and Prometheus queries name is one the ingress, the worker or the reconciler exports"
    )
    func metricNames() throws {
        let exported = Set(ExportedMetrics.labelsByName().keys)
        #expect(exported.contains("asnp_worker_consumer_lag_messages"))
        #expect(exported.contains("asnp_ingress_requests_total"))
        #expect(exported.contains("asnp_store_oldest_body_timestamp_seconds"))
        let dashboard = try Self.text("grafana/asnp-dashboard.json")
        let named = Set(dashboard.matches(of: /asnp_[a-z_]+/).map { String($0.output) })
        #expect(named.count >= 15)
        for name in named.sorted() {
            let base = name.replacing(/_(bucket|sum|count)$/, with: "")
            #expect(exported.contains(name) || exported.contains(base), "\(name) is not exported")
        }
        let prometheus = try Self.yaml("prometheus/prometheus.yml")[0]
        let jobs = try #require(prometheus["scrape_configs"] as? [[String: Any]])
        #expect(jobs.allSatisfy { $0["metrics_path"] as? String == "/metrics" })
        let targets = jobs.compactMap { (Self.value($0, "static_configs") as? [[String: Any]])?.first?["targets"] }
        #expect(targets.first as? [String] == ["ingress:9090"], "the ingress's status port")
        #expect((jobs.last?["dns_sd_configs"] as? [[String: Any]])?.first?["port"] as? Int == 9090)
    }

    @Test(
        "the probe paths the manifests use answer on the status server (the ingress's, the worker's, the reconciler's)"
    )
    func probePaths() async throws {
        let paths = ["/health/live", "/health/ready", "/metrics"]
        let listening = AsyncStream<Int>.makeStream()
        let logger = Logger(label: "test.deploy") { _ in SwiftLogNoOpLogHandler() }
        let server = StatusServer(
            configuration: StatusServerConfiguration(host: "127.0.0.1", port: 0),
            registry: PrometheusCollectorRegistry(),
            logger: logger,
            live: { nil },
            ready: { nil },
            onListening: { listening.continuation.yield($0) }
        )
        // Shut down gracefully, not cancelled: a cancelled server with a connection just accepted stops the process
        // (swift-nio#3481, "Deinited NIOAsyncWriter without calling finish()").
        let services = ServiceGroup(services: [server], logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            var ports = listening.stream.makeAsyncIterator()
            let port = try #require(await ports.next())
            for path in paths {
                // A limit for an answer that never comes: the whole suite on a busy 2-core machine twice took more
                // than 10 s to answer one of these.
                let response = try await HTTPClient.shared.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"),
                    timeout: .seconds(60)
                )
                #expect(response.status == .ok, "\(path)")
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
        }
    }

    // MARK: - Reading the files

    /// The kustomize components of the production overlay's cloud (Deploy/kubernetes/components): it lists one.
    static let components = ["gke", "eks"]

    /// What every role needs and the manifests may leave to the environment of a cluster.
    static let minimalEnvironment = [
        "KAFKA_BOOTSTRAP_SERVERS": "kafka:9092",
        "APPS_NAMES": "notes",
        "APPS_NOTES_BUNDLE_ID": "com.example.notes",
        "DATABASE_URL": "postgres://asnp@db:5432/asnp",
    ]

    /// Loads the role's settings from `environment` alone, and expects each of `ownVariables` to be one the role
    /// reads; returns the variables it read.
    @discardableResult
    static func expectAccepted(
        command: String,
        environment: [String: String],
        ownVariables: Set<String>,
        in place: String
    ) async throws -> Set<String> {
        #expect(ASNP.configuration.subcommands.contains { $0._commandName == command }, "\(place): \(command)")
        if command == "migrate" {
            // `asnp migrate` takes the database URL only.
            #expect(ownVariables == ["DATABASE_URL"], "\(place)")
            #expect(throws: Never.self) { try NotificationStoreConfiguration(url: environment["DATABASE_URL"] ?? "") }
            return ["DATABASE_URL"]
        }
        var read: Set<String> = []
        try await withSecretFiles(environment) { environment in
            let settings = try await PipelineSettings.load(file: nil, environment: environment)
            switch command {
            case "ingress": _ = try settings.ingressRole()
            case "worker": _ = try settings.workerRole()
            case "history": _ = try settings.historyRole(appName: nil)
            case "api": _ = try settings.apiRole()
            case "retention":
                // With DATABASE_URL and no --config, `asnp retention` takes the database from the URL, as `asnp
                // migrate` does, and its retention from the settings.
                #expect(throws: Never.self) {
                    try NotificationStoreConfiguration(url: environment["DATABASE_URL"] ?? "")
                }
                read.insert("DATABASE_URL")
                _ = try settings.int("retention.retainBodyMonths")
            default: Issue.record("\(place): no settings check for \(command)")
            }
            read.formUnion(settings.keysRead.all.map(PipelineSettings.environmentName(of:)))
        }
        for variable in ownVariables.sorted() {
            #expect(read.contains(variable), "\(place) sets \(variable), which asnp \(command) never reads")
        }
        return read
    }

    static func expectPortsAndProbes(of container: [String: Any], command: String, settings: [String: String])
        async throws
    {
        let ports = container["ports"] as? [[String: Any]] ?? []
        guard command != "migrate", command != "retention" else {
            #expect(ports.isEmpty)
            return
        }
        // Every role serves its probes and /metrics on its status port; the ingress its notification routes, and the
        // read API its routes, on a port of its own.
        let (statusPort, publicPort) = try await withSecretFiles(minimalEnvironment.merging(settings) { $1 }) {
            environment -> (Int, Int?) in
            let loaded = try await PipelineSettings.load(file: nil, environment: environment)
            switch command {
            case "ingress":
                let role = try loaded.ingressRole()
                return (role.status.port, role.ingress.port)
            case "history":
                // Only the periodic sync serves its status endpoints.
                #expect((container["args"] as? [String])?.contains("--every") == true)
                return (try loaded.historyRole(appName: nil).status.port, nil)
            case "api":
                let role = try loaded.apiRole()
                return (role.status.port, role.api.port)
            default: return (try loaded.workerRole().status.port, nil)
            }
        }
        let named = Dictionary(
            ports.map { ($0["name"] as? String ?? "", $0["containerPort"] as? Int ?? -1) },
            uniquingKeysWith: { first, _ in first }
        )
        var expected = ["status": statusPort]
        if let publicPort { expected["http"] = publicPort }
        #expect(named == expected, "\(command)")
        for (probe, path) in [("livenessProbe", "/health/live"), ("readinessProbe", "/health/ready")] {
            let httpGet = try #require(value(container, probe, "httpGet") as? [String: Any], "\(command) \(probe)")
            #expect(httpGet["path"] as? String == path)
            #expect(httpGet["port"] as? String == "status")
        }
    }

    /// A container's environment: the settings ConfigMap it loads, then its own variables (secrets as placeholders).
    static func environment(of container: [String: Any], settings: [String: String]) throws -> [String: String] {
        var environment: [String: String] = [:]
        for source in container["envFrom"] as? [[String: Any]] ?? [] {
            #expect(value(source, "configMapRef", "name") as? String == "asnp-settings")
            environment.merge(settings) { $1 }
        }
        for variable in container["env"] as? [[String: Any]] ?? [] {
            let name = try #require(variable["name"] as? String)
            if let literal = variable["value"] as? String {
                environment[name] = literal
            } else if let field = value(variable, "valueFrom", "resourceFieldRef") as? [String: Any] {
                // The downward API: the container's own limit, in whole units of the divisor, rounded up.
                let resource = try #require(field["resource"] as? String)
                let path = resource.split(separator: ".").map(String.init)
                let limit = try #require(value(container, ["resources"] + path))
                #expect(field["divisor"] as? String == "1", "\(name): whole cores")
                environment[name] = String(Int(try #require(Double("\(limit)")).rounded(.up)))
            } else {
                let secret = try #require(value(variable, "valueFrom", "secretKeyRef") as? [String: Any])
                #expect(secret["name"] as? String == "asnp-secrets")
                environment[name] =
                    ["database-url", "api-database-url"].contains(secret["key"] as? String ?? "")
                    ? "postgres://asnp:secret@db.example:5432/asnp?sslmode=verify-full" : "placeholder"
            }
        }
        return environment
    }

    /// Mounted secrets (`..._FILE=/run/secrets/asnp/...`) exist only in the pod: each becomes a temporary file for
    /// the time of `body` (settings read secret files when asked for them, not when loaded).
    static func withSecretFiles<Result>(
        _ environment: [String: String],
        _ body: ([String: String]) async throws -> Result
    ) async throws -> Result {
        var result = environment
        var files: [URL] = []
        defer { for file in files { try? FileManager.default.removeItem(at: file) } }
        for (name, path) in environment where name.hasSuffix("_FILE") {
            #expect(path.hasPrefix("/run/secrets/asnp/"), "\(name)")
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("asnp-secret-\(UUID().uuidString)")
            // A .p8 must hold a real key; other secrets are any text.
            let content =
                path.hasSuffix(".p8")
                ? FakeAppStoreServer(bundleID: "placeholder", history: []).privateKeyPEM
                : "placeholder-secret-0123456789\n"
            try Data(content.utf8).write(to: file)
            files.append(file)
            result[name] = file.path
        }
        return try await body(result)
    }

    @Test(
        "every whole Kubernetes resource passes kubernetes-validate --strict: the API's schemas, unknown fields refused"
    )
    func kubernetesValidate() async throws {
        let directories =
            ["kubernetes/base", "kubernetes/overlays/production", "kubernetes/kafka-topics"]
            + Self.components.map { "kubernetes/components/\($0)" }
        var files: [String] = []
        for directory in directories {
            // kustomize's patches are partial resources, checked after merging by the tests above.
            let patches = Set(
                try Self.text("\(directory)/kustomization.yaml").matches(of: /- path: (\S+)/).map {
                    String($0.output.1)
                }
            )
            let names = try FileManager.default.contentsOfDirectory(
                atPath: Self.deploy.appendingPathComponent(directory).path
            )
            files += names.filter { $0.hasSuffix(".yaml") && $0 != "kustomization.yaml" && !patches.contains($0) }
                .sorted().map { Self.deploy.appendingPathComponent("\(directory)/\($0)").path }
        }
        #expect(files.count >= 10)
        let run = try await runProgram("python3", ["-m", "kubernetes_validate", "--strict"] + files)
        let report = String(decoding: run.output, as: UTF8.self)
        #expect(run.status == 0, "\(report)")
        #expect(!report.contains("ERROR"), "\(report)")
        // Every Deployment, Job, Service, autoscaler and budget was checked (custom resources have no schema there).
        #expect(report.matches(of: /passed for resource/).count >= 8, "\(report)")
    }

    @Test(
        """
        a new version never serves before its migration: every pod using the database waits in an init container \
        (asnp migrate --check --wait) for the schema; the migration Job is recreated per sync by Argo CD and Flux
        """
    )
    func migrationBeforeRollout() throws {
        let documents =
            try Self.yamlDocuments(under: "kubernetes/base")
            + Self.yamlDocuments(under: "kubernetes/overlays/production")
        var waiting: Set<String> = []
        for document in documents where document["kind"] as? String == "Deployment" {
            let name = try #require(Self.value(document, "metadata", "name") as? String)
            let pod = try #require(Self.value(document, "spec", "template", "spec") as? [String: Any])
            let containers = pod["containers"] as? [[String: Any]] ?? []
            let usesDatabase = containers.contains { container in
                (container["env"] as? [[String: Any]] ?? []).contains { $0["name"] as? String == "DATABASE_URL" }
            }
            guard usesDatabase else { continue }
            let initContainers = pod["initContainers"] as? [[String: Any]] ?? []
            let wait = try #require(
                initContainers.first {
                    ($0["args"] as? [String])?.starts(with: ["migrate", "--check", "--wait"]) == true
                },
                "\(name) waits for the schema"
            )
            // A command asnp takes, with the database from the same secret as the container's.
            let arguments = try #require(wait["args"] as? [String])
            let parsed = try ASNP.parseAsRoot(arguments)
            #expect(parsed is MigrateCommand, "\(arguments)")
            let env = wait["env"] as? [[String: Any]] ?? []
            #expect(
                env.contains { Self.value($0, "valueFrom", "secretKeyRef", "key") as? String == "database-url" },
                "\(name)"
            )
            waiting.insert(name)
        }
        #expect(waiting == ["asnp-worker", "asnp-history"])
        let job = try #require(documents.first { $0["kind"] as? String == "Job" })
        let annotations = try #require(Self.value(job, "metadata", "annotations") as? [String: String])
        #expect(annotations["argocd.argoproj.io/hook"] == "PreSync")
        #expect(annotations["argocd.argoproj.io/hook-delete-policy"] == "BeforeHookCreation")
        #expect(annotations["kustomize.toolkit.fluxcd.io/force"] == "enabled")
    }

    @Test(
        "the production overlay's PodMonitors scrape /metrics on a named port of every Deployment that serves metrics"
    )
    func podMonitors() throws {
        let documents =
            try Self.yamlDocuments(under: "kubernetes/base")
            + Self.yamlDocuments(under: "kubernetes/overlays/production")
        let kustomization = try Self.text("kubernetes/overlays/production/kustomization.yaml")
        #expect(kustomization.contains("- pod-monitors.yaml"))
        let monitors = documents.filter { $0["kind"] as? String == "PodMonitor" }
        var monitored: Set<String> = []
        for monitor in monitors {
            let selector = try #require(Self.value(monitor, "spec", "selector", "matchLabels") as? [String: String])
            let deployment = try #require(
                documents.first { document in
                    document["kind"] as? String == "Deployment"
                        && selector.allSatisfy {
                            Self.value(document, "spec", "template", "metadata", "labels", $0.key) as? String
                                == $0.value
                        }
                },
                "\(selector) selects a Deployment's pods"
            )
            let name = try #require(Self.value(deployment, "metadata", "name") as? String)
            monitored.insert(name)
            let containers = try #require(
                Self.value(deployment, "spec", "template", "spec", "containers") as? [[String: Any]]
            )
            let ports = Set(
                containers.flatMap { ($0["ports"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String } }
            )
            let endpoints = try #require(Self.value(monitor, "spec", "podMetricsEndpoints") as? [[String: Any]])
            for endpoint in endpoints {
                #expect(ports.contains(endpoint["port"] as? String ?? ""), "\(name): \(endpoint)")
                #expect(endpoint["path"] as? String == "/metrics", "\(name)")
            }
            // Without the operator, the pods' annotations name the same port and path.
            let annotations = Self.value(deployment, "spec", "template", "metadata", "annotations") as? [String: String]
            let scrapedPort =
                containers.flatMap { $0["ports"] as? [[String: Any]] ?? [] }
                .first { $0["name"] as? String == endpoints.first?["port"] as? String }?["containerPort"] as? Int
            #expect(annotations?["prometheus.io/scrape"] == "true", "\(name)")
            #expect(annotations?["prometheus.io/port"] == scrapedPort.map(String.init), "\(name)")
            #expect(annotations?["prometheus.io/path"] == "/metrics", "\(name)")
        }
        // Each exports metrics (ExportedMetrics lists them; the dashboard and alert tests check which).
        #expect(monitored == ["asnp-ingress", "asnp-worker", "asnp-history", "asnp-api"])
    }

    /// The pod template's spec of a Deployment, Job or CronJob (its jobs'); nil for other kinds.
    static func podSpec(_ document: [String: Any]) -> [String: Any]? {
        switch document["kind"] as? String {
        case "Deployment", "Job": value(document, "spec", "template", "spec") as? [String: Any]
        case "CronJob": value(document, "spec", "jobTemplate", "spec", "template", "spec") as? [String: Any]
        default: nil
        }
    }

    static func text(_ path: String) throws -> String {
        try String(contentsOf: deploy.appendingPathComponent(path), encoding: .utf8)
    }

    static func yaml(_ path: String) throws -> [[String: Any]] {
        try Yams.load_all(yaml: try text(path)).map { try #require($0 as? [String: Any], "\(path)") }
    }

    static func yamlDocuments(under directory: String) throws -> [[String: Any]] {
        let files = try FileManager.default.contentsOfDirectory(atPath: deploy.appendingPathComponent(directory).path)
        return try files.filter { $0.hasSuffix(".yaml") && $0 != "kustomization.yaml" }.sorted()
            .flatMap { try yaml("\(directory)/\($0)") }
    }

    /// `KEY=value` lines (kustomize's `envs:` files).
    static func envFile(_ path: String) throws -> [String: String] {
        var values: [String: String] = [:]
        for line in try text(path).split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        return values
    }

    /// A compose value as the container sees it: `${VAR:-default}` is its default.
    static func composeValue(_ value: Any) -> String {
        let text = "\(value)"
        guard let match = text.firstMatch(of: /^\$\{[A-Z_]+:-(.*)\}$/) else { return text }
        return String(match.output.1)
    }

    static func value(_ object: [String: Any], _ keys: String...) -> Any? {
        value(object, keys)
    }

    static func value(_ object: [String: Any], _ keys: [String]) -> Any? {
        var current: Any? = object
        for key in keys { current = (current as? [String: Any])?[key] }
        return current
    }
}
