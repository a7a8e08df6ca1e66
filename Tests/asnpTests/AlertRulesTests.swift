import AppStoreModels
import AppStoreTestSupport
import CoreMetrics
import Foundation
import KafkaClient
import NotificationStore
import PipelineContract
import Prometheus
import Testing
import Yams

@testable import Ingress
@testable import Worker

/// Deploy/prometheus/alerts.rules.yml (the runbook's alerts): promtool accepts it and its unit tests pass, the
/// production PrometheusRule carries the same groups, and every metric and label it names is one the code exports.
@Suite(
    "Deploy/prometheus/alerts.rules.yml: promtool checks and tests it; it names only what the code exports",
    .tags(.process)
)
struct AlertRulesTests {
    static let prometheus = Fixtures.packageRoot.appendingPathComponent("Deploy/prometheus")
    static let rulesFile = prometheus.appendingPathComponent("alerts.rules.yml")
    static let testsFile = prometheus.appendingPathComponent("alerts.rules.test.yml")
    static let prometheusRuleFile = Fixtures.packageRoot.appendingPathComponent(
        "Deploy/kubernetes/overlays/production/prometheus-rule.yaml"
    )

    @Test("promtool check rules accepts the rules file")
    func promtoolCheck() async throws {
        let (status, output) = try await Self.promtool(["check", "rules", Self.rulesFile.path])
        #expect(status == 0, "\(output)")
        #expect(output.contains("SUCCESS: \(try Self.rules().count) rules found"), "\(output)")
    }

    @Test("promtool test rules passes, and the tests make every alert fire")
    func promtoolTest() async throws {
        let (status, output) = try await Self.promtool(["test", "rules", Self.testsFile.path])
        #expect(status == 0, "\(output)")
        #expect(output.contains("SUCCESS"), "\(output)")
        let tests = try #require(try Self.yaml(Self.testsFile)["tests"] as? [[String: Any]])
        var fired: Set<String> = []
        for test in tests {
            for evaluation in test["alert_rule_test"] as? [[String: Any]] ?? [] {
                guard let alerts = evaluation["exp_alerts"] as? [Any], !alerts.isEmpty else { continue }
                fired.insert(try #require(evaluation["alertname"] as? String))
            }
        }
        let alerts = Set(try Self.rules().compactMap { $0["alert"] as? String })
        #expect(alerts.count >= 12)
        #expect(fired == alerts, "alerts no test makes fire: \(alerts.subtracting(fired).sorted())")
    }

    @Test("the production PrometheusRule carries exactly the rules file's groups")
    func prometheusRuleMatches() throws {
        let rule = try Self.yaml(Self.prometheusRuleFile)
        #expect(rule["apiVersion"] as? String == "monitoring.coreos.com/v1")
        #expect(rule["kind"] as? String == "PrometheusRule")
        let spec = try #require(rule["spec"] as? [String: Any])
        let groups = try #require(try Self.yaml(Self.rulesFile)["groups"])
        #expect(
            NSDictionary(dictionary: ["groups": groups]).isEqual(to: spec),
            "prometheus-rule.yaml's spec differs from alerts.rules.yml's groups: copy them over"
        )
        let kustomization = try Self.yaml(
            Fixtures.packageRoot.appendingPathComponent("Deploy/kubernetes/overlays/production/kustomization.yaml")
        )
        #expect((kustomization["resources"] as? [String])?.contains("prometheus-rule.yaml") == true)
        let prometheusConfig = try Self.yaml(Self.prometheus.appendingPathComponent("prometheus.yml"))
        #expect(prometheusConfig["rule_files"] as? [String] == ["alerts.rules.yml"])
        let compose = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("Deploy/docker-compose.yml"),
            encoding: .utf8
        )
        #expect(compose.contains("./prometheus/alerts.rules.yml:/etc/prometheus/alerts.rules.yml:ro"))
    }

    @Test("every alert has a severity, a summary and a description, and names only exported metrics and labels")
    func namesAreExported() throws {
        let exported = ExportedMetrics.labelsByName()
        #expect(exported["asnp_worker_failed_batches_total"] == ["stage", "code"])
        #expect(exported["asnp_ingress_unverifiable_total"] == ["app", "environment", "version"])
        #expect(exported["asnp_history_turns_total"] == ["app", "environment", "outcome"])
        for rule in try Self.rules() {
            let name = try #require(rule["alert"] as? String)
            let expression = try #require(rule["expr"] as? String)
            #expect(rule["for"] is String, "\(name): a for: duration")
            let severity = (rule["labels"] as? [String: Any])?["severity"] as? String
            #expect(severity == "page" || severity == "ticket", "\(name)")
            let annotations = try #require(rule["annotations"] as? [String: String], "\(name)")
            #expect(annotations["summary"]?.isEmpty == false, "\(name)")
            #expect(annotations["description"]?.isEmpty == false, "\(name)")
            // Metric names, in the expression and the annotations.
            // A histogram's series by its name.
            let metrics = Set(
                (expression + " " + annotations.values.joined(separator: " ")).matches(of: /asnp_[a-z_]+/)
                    .map { String($0.output).replacing(/_(bucket|sum|count)$/, with: "") }
            )
            #expect(!metrics.isEmpty, "\(name)")
            for metric in metrics.sorted() {
                #expect(exported[metric] != nil, "\(name): \(metric) is not exported")
            }
            // Labels in selectors and in by (...)/on (...): the named metrics' own, or the scrape's.
            var allowed: Set<String> = ["instance", "job"]
            for metric in metrics { allowed.formUnion(exported[metric] ?? []) }
            var labels: Set<String> = []
            for selector in expression.matches(of: /\{([^}]*)\}/) {
                for matcher in selector.output.1.matches(of: /([a-z_]+)\s*(=~|!~|!=|=)/) {
                    labels.insert(String(matcher.output.1))
                }
            }
            for grouping in expression.matches(of: /\b(?:by|on)\s*\(([^)]*)\)/) {
                for label in grouping.output.1.split(separator: ",") {
                    labels.insert(label.trimmingCharacters(in: .whitespaces))
                }
            }
            labels.remove("")
            labels.remove("le")
            for label in labels.sorted() {
                #expect(allowed.contains(label), "\(name): no metric it names has the label \(label)")
            }
        }
    }

    /// Alertmanager's receivers show runbook_url as a link: a URL, from the one base an operator sets (the production
    /// overlay's runbook.yaml, which kustomize writes into the PrometheusRule), to a heading Docs/runbook.md has.
    @Test(
        """
        every runbook_url is the runbook base and a heading of Docs/runbook.md; kustomize writes the production \
        overlay's base into every rule; no annotation names a repository path instead
        """
    )
    func runbookLinks() throws {
        let overlay = Fixtures.packageRoot.appendingPathComponent("Deploy/kubernetes/overlays/production")
        let runbookBase = try Self.yaml(overlay.appendingPathComponent("runbook.yaml"))
        #expect(runbookBase["kind"] as? String == "ConfigMap")
        let metadata = try #require(runbookBase["metadata"] as? [String: Any])
        #expect(
            (metadata["annotations"] as? [String: String])?["config.kubernetes.io/local-config"] == "true",
            "the base is kustomize's input, never applied to the cluster"
        )
        let base = try #require((runbookBase["data"] as? [String: String])?["base"])
        #expect(base.hasPrefix("https://") && !base.contains("#"), "\(base)")

        let kustomization = try Self.yaml(overlay.appendingPathComponent("kustomization.yaml"))
        #expect((kustomization["resources"] as? [String])?.contains("runbook.yaml") == true)
        let replacements = try #require(kustomization["replacements"] as? [[String: Any]])
        let replacement = try #require(
            replacements.first { ($0["source"] as? [String: String])?["name"] == metadata["name"] as? String }
        )
        #expect(
            replacement["source"] as? [String: String] == [
                "kind": "ConfigMap", "name": "asnp-runbook", "fieldPath": "data.base",
            ]
        )
        let target = try #require((replacement["targets"] as? [[String: Any]])?.first)
        #expect((target["select"] as? [String: String])?["kind"] == "PrometheusRule")
        #expect(target["fieldPaths"] as? [String] == ["spec.groups.*.rules.*.annotations.runbook_url"])
        // The part before the anchor is replaced, the anchor kept.
        let options = try #require(target["options"] as? [String: Any])
        #expect(options["delimiter"] as? String == "#" && options["index"] as? Int == 0)

        let runbook = try String(
            contentsOf: Fixtures.packageRoot.appendingPathComponent("Docs/runbook.md"),
            encoding: .utf8
        )
        let anchors = Set(
            runbook.split(separator: "\n").filter { $0.hasPrefix("#") }.map { heading in
                String(
                    heading.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces).lowercased()
                        .filter { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" }
                        .replacing(" ", with: "-")
                )
            }
        )
        #expect(anchors.contains("alerts-worth-having"))
        // The rules file (docker-compose's Prometheus reads it as it is) and the PrometheusRule carry the same base.
        let rules = try Self.rules()
        #expect(!rules.isEmpty)
        for rule in rules {
            let name = try #require(rule["alert"] as? String)
            let annotations = try #require(rule["annotations"] as? [String: String], "\(name)")
            let url = try #require(annotations["runbook_url"], "\(name)")
            let parts = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
            #expect(parts.count == 2 && parts[0] == base, "\(name): \(url) does not start with \(base)#")
            #expect(anchors.contains(String(parts.last ?? "")), "\(name): \(url) names no heading of Docs/runbook.md")
            for (key, value) in annotations where key != "runbook_url" {
                #expect(!value.contains("Docs/"), "\(name): \(key) names a repository path; the link is runbook_url")
            }
        }
    }

    @Test("the SLO alerts' bucket bounds are buckets the worker writes, spelled as it writes them (le=\"60.0\")")
    func sloBuckets() throws {
        let metrics = WorkerMetrics()
        for stage in WorkerMetrics.FreshnessStage.allCases {
            metrics.freshness(stage, stage.labelNames.map { ($0, "x") }).record(.seconds(1))
        }
        var bytes: [UInt8] = []
        metrics.registry.emit(into: &bytes)
        let exposition = String(decoding: bytes, as: UTF8.self)
        let expressions = try Self.rules().compactMap { $0["expr"] as? String }.joined(separator: "\n")
        let bounds = Set(
            expressions.matches(of: /(asnp_[a-z_]+)_bucket\{le="([^"]+)"\}/).map { "\($0.output.1)|\($0.output.2)" }
        )
        #expect(bounds.count == 2, "\(bounds)")
        for bound in bounds {
            let parts = bound.split(separator: "|").map(String.init)
            let written = exposition.split(separator: "\n").contains { line in
                line.hasPrefix("\(parts[0])_bucket{") && line.contains("le=\"\(parts[1])\"")
            }
            #expect(written, "\(parts[0]) has no bucket le=\"\(parts[1])\"")
        }
    }

    @Test("the route matchers select the ingress's notification routes as it labels them, never the health routes")
    func routeMatchers() throws {
        let expressions = try Self.rules().compactMap { $0["expr"] as? String }.joined(separator: "\n")
        let patterns = expressions.matches(of: /route=~"([^"]+)"/).map { String($0.output.1) }
        #expect(!patterns.isEmpty)
        // The labels RequestMetricsMiddleware gives (Hummingbird's endpoint paths; IngressFaultTests checks one).
        let notifications = [
            "/v2/notifications/{environment}", "/v1/notifications/{environment}/{app}",
            "/{pathToken}/v2/notifications/{environment}",
        ]
        for pattern in patterns {
            // PromQL anchors its regular expressions.
            let regex = try Regex("^(?:\(pattern))$")
            for route in notifications { #expect(route.wholeMatch(of: regex) != nil, "\(pattern) takes \(route)") }
            for route in ["/health/ready", "/metrics", "unmatched"] {
                #expect(route.wholeMatch(of: regex) == nil, "\(pattern) leaves out \(route)")
            }
        }
    }

    @Test("the rejection alert leaves out exactly the statuses the configuration alert covers")
    func configurationStatusesExcluded() throws {
        let rule = try #require(try Self.rules().first { $0["alert"] as? String == "AsnpWorkerRejectionsJump" })
        let expression = try #require(rule["expr"] as? String)
        let exclusions = expression.matches(of: /status!~"([^"]*)"/).map {
            Set($0.output.1.split(separator: "|").map(String.init))
        }
        #expect(exclusions.count >= 3)
        for excluded in exclusions {
            #expect(excluded == VerifierDirectory.configurationStatuses)
        }
    }

    // MARK: - Helpers

    /// Runs promtool with its standard error in the output, so a failure shows why.
    static func promtool(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let (status, output) = try await runProgram("sh", ["-c", "promtool \"$@\" 2>&1", "promtool"] + arguments)
        return (status, String(decoding: output, as: UTF8.self))
    }

    static func yaml(_ url: URL) throws -> [String: Any] {
        try #require(try Yams.load(yaml: try String(contentsOf: url, encoding: .utf8)) as? [String: Any], "\(url)")
    }

    static func rules() throws -> [[String: Any]] {
        let groups = try #require(try yaml(rulesFile)["groups"] as? [[String: Any]])
        return groups.flatMap { $0["rules"] as? [[String: Any]] ?? [] }
    }
}
