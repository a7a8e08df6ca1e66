import AppStoreTestSupport
import Foundation
import Testing
import Yams

/// kubernetes-validate (DeployFilesTests) has no schema for custom resources; these are checked here against the
/// schemas of their operators' CRDs, vendored in Tests/DeployValidation/crds, by an independent validator (Python's
/// `jsonschema`) with the API server's rules: unknown fields refused, kustomize's patches (and components) merged
/// first.
@Suite("Deploy/kubernetes: every custom resource validates against its operator's CRD schema", .tags(.process))
struct DeployCustomResourceTests {
    static let validator = Fixtures.packageRoot.appendingPathComponent(
        "Tests/DeployValidation/validate_custom_resources.py"
    )
    static let kubernetes = Fixtures.packageRoot.appendingPathComponent("Deploy/kubernetes")

    /// Kind/name of every document under Deploy/kubernetes whose API group is not one of Kubernetes' own.
    static func customResources() throws -> Set<String> {
        var result: Set<String> = []
        let files = try #require(FileManager.default.subpaths(atPath: kubernetes.path))
        for file in files where file.hasSuffix(".yaml") && !file.hasSuffix("kustomization.yaml") {
            let text = try String(contentsOf: kubernetes.appendingPathComponent(file), encoding: .utf8)
            for case let document as [String: Any] in try Yams.load_all(yaml: text) {
                guard let apiVersion = document["apiVersion"] as? String, let kind = document["kind"] as? String,
                    let metadata = document["metadata"] as? [String: Any], let name = metadata["name"] as? String
                else { continue }
                let group = apiVersion.split(separator: "/").dropLast().joined(separator: "/")
                if group.contains(".") && !group.hasSuffix(".k8s.io") {
                    result.insert("\(kind)/\(name)")
                }
            }
        }
        return result
    }

    @Test(
        """
        every custom resource (KEDA, Prometheus Operator, Strimzi, Gateway API, GKE's and the AWS Load Balancer \
        Controller's), alone and with kustomize's patches and the cloud component merged, passes its CRD's schema \
        with unknown fields refused
        """
    )
    func everyCustomResourceValidates() async throws {
        let run = try await runProgram("python3", [Self.validator.path, Self.kubernetes.path])
        let report = String(decoding: run.output, as: UTF8.self)
        #expect(run.status == 0, "\(report)")
        let summary = try #require(report.split(separator: "\n").last { $0.hasPrefix("validated ") }, "\(report)")
        let kinds = [
            "ScaledObject", "TriggerAuthentication", "PrometheusRule", "PodMonitor", "KafkaTopic", "Gateway",
            "HTTPRoute",
            "HealthCheckPolicy", "LoadBalancerConfiguration", "TargetGroupConfiguration",
        ]
        for kind in kinds {
            #expect(summary.contains("\(kind)/"), "\(kind) not validated: \(report)")
        }
        #expect(summary.contains("ScaledObject/asnp-worker (base)"), "\(report)")
        #expect(summary.contains("ScaledObject/asnp-worker (production, patched)"), "\(report)")
        // With the GKE component the overlay lists: its patch of the Gateway merged.
        #expect(summary.contains("Gateway/asnp-public (production, patched)"), "\(report)")
        let expected = try Self.customResources()
        #expect(expected.count >= 9)
        for resource in expected.sorted() {
            #expect(summary.contains("\(resource) ("), "\(resource) not validated: \(report)")
        }
    }

    @Test("the production overlay with the EKS component in place of GKE's validates, its Gateway patch merged")
    func eksComponentValidates() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "asnp-eks-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: Self.kubernetes, to: directory)
        let kustomization = directory.appendingPathComponent("overlays/production/kustomization.yaml")
        let text = try String(contentsOf: kustomization, encoding: .utf8)
        #expect(text.contains("  - ../../components/gke\n"))
        try text.replacingOccurrences(of: "  - ../../components/gke\n", with: "  - ../../components/eks\n")
            .write(to: kustomization, atomically: true, encoding: .utf8)

        let run = try await runProgram("python3", [Self.validator.path, directory.path])
        let report = String(decoding: run.output, as: UTF8.self)
        #expect(run.status == 0, "\(report)")
        #expect(report.contains("Gateway/asnp-public (production, patched)"), "\(report)")
    }

    @Test(
        """
        the validator fails on an unknown field (HPA's minReplicas in a ScaledObject), a wrong type (a number as \
        a PodMonitor's port name), a Gateway API rule (a listener terminating TLS without a certificate) and a custom \
        resource kind with no vendored schema
        """
    )
    func validatorCatchesMistakes() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "asnp-custom-resources-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let scaledObject = try String(
            contentsOf: Self.kubernetes.appendingPathComponent("base/worker-scaledobject.yaml"),
            encoding: .utf8
        )
        #expect(scaledObject.contains("\n  minReplicaCount: "))
        try scaledObject.replacingOccurrences(
            of: "\n  minReplicaCount: ",
            with: "\n  minReplicas: 3\n  minReplicaCount: "
        )
        .write(to: directory.appendingPathComponent("worker-scaledobject.yaml"), atomically: true, encoding: .utf8)
        let podMonitors = try String(
            contentsOf: Self.kubernetes.appendingPathComponent("overlays/production/pod-monitors.yaml"),
            encoding: .utf8
        )
        // The first PodMonitor is the ingress's.
        let statusPort = try #require(podMonitors.range(of: "- port: status\n"))
        try podMonitors.replacingCharacters(in: statusPort, with: "- port: 9090\n")
            .write(to: directory.appendingPathComponent("pod-monitors.yaml"), atomically: true, encoding: .utf8)
        let gateway = try String(
            contentsOf: Self.kubernetes.appendingPathComponent("overlays/production/gateway.yaml"),
            encoding: .utf8
        )
        let certificate = "        certificateRefs:\n          - { kind: Secret, name: asnp-ingress-tls }\n"
        #expect(gateway.contains(certificate))
        try gateway.replacingOccurrences(of: certificate, with: "")
            .write(to: directory.appendingPathComponent("gateway.yaml"), atomically: true, encoding: .utf8)
        try """
        apiVersion: monitoring.coreos.com/v1
        kind: ServiceMonitor
        metadata:
          name: asnp-ingress
        spec:
          selector: {}
          endpoints: [{ port: http }]

        """.write(to: directory.appendingPathComponent("service-monitor.yaml"), atomically: true, encoding: .utf8)

        let run = try await runProgram("python3", [Self.validator.path, directory.path])
        let report = String(decoding: run.output, as: UTF8.self)
        #expect(run.status != 0, "\(report)")
        #expect(
            report.contains("ScaledObject/asnp-worker: $.spec.minReplicas: unknown field \"minReplicas\""),
            "\(report)"
        )
        #expect(
            report.contains(
                "PodMonitor/asnp-ingress: $.spec.podMetricsEndpoints[0].port: 9090 is not of type 'string'"
            ),
            "\(report)"
        )
        #expect(
            report.contains("ServiceMonitor/asnp-ingress: $: no vendored CRD schema for ServiceMonitor"),
            "\(report)"
        )
        #expect(
            report.contains(
                "Gateway/asnp-public: $.spec.listeners[0].tls: certificateRefs or options must be specified when mode "
                    + "is Terminate"
            ),
            "\(report)"
        )
        #expect(!report.contains("PodMonitor/asnp-worker"), "only the broken documents are reported: \(report)")
        #expect(!report.contains("HTTPRoute/"), "only the broken documents are reported: \(report)")
        #expect(!report.contains("validated "), "\(report)")
    }
}
