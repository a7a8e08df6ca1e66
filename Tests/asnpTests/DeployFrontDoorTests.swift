import AppStoreTestSupport
import Foundation
import PipelineServices
import PipelineStatus
import Testing

@testable import Ingress

/// The front door of Deploy/kubernetes (Docs/front-door.md): the Gateway and HTTPRoute of the production overlay, each
/// cloud's component (Deploy/kubernetes/components), the NetworkPolicies and the spread of the pods, held to the code
/// (the ingress's routes, ports, allow-list) since no cluster runs here. kubernetes-validate and the CRD schemas check
/// their shape (DeployFilesTests, DeployCustomResourceTests).
@Suite(
    "Deploy/kubernetes: the front door, the network policies and the spread of the pods agree with the code",
    .tags(.process)
)
struct DeployFrontDoorTests {
    static let production = "kubernetes/overlays/production"

    static func documents(_ directories: [String]) throws -> [[String: Any]] {
        try directories.flatMap { try DeployFilesTests.yamlDocuments(under: $0) }
    }

    static func document(_ documents: [[String: Any]], kind: String, name: String) throws -> [String: Any] {
        try #require(
            documents.first {
                $0["kind"] as? String == kind && DeployFilesTests.value($0, "metadata", "name") as? String == name
            },
            "\(kind)/\(name)"
        )
    }

    /// The ingress's settings in production with `component`'s merged, as kustomize merges them.
    static func ingressSettings(component: String) async throws -> IngressRoleSettings {
        let settings = try DeployFilesTests.envFile("kubernetes/base/settings.env")
            .merging(try DeployFilesTests.envFile("\(production)/settings.env")) { $1 }
            .merging(try DeployFilesTests.envFile("kubernetes/components/\(component)/settings.env")) { $1 }
        return try await DeployFilesTests.withSecretFiles(DeployFilesTests.minimalEnvironment.merging(settings) { $1 })
        {
            try await PipelineSettings.load(file: nil, environment: $0).ingressRole()
        }
    }

    @Test(
        """
        the HTTPRoute sends only Apple's notification paths (behind the path token) to the ingress Service's public \
        port; /metrics and the probes match no rule, and the Service leaves the status port out
        """
    )
    func routeSendsOnlyNotifications() async throws {
        let documents = try Self.documents(["kubernetes/base", Self.production])
        let route = try Self.document(documents, kind: "HTTPRoute", name: "asnp-notifications")
        let rules = try #require(DeployFilesTests.value(route, "spec", "rules") as? [[String: Any]])
        // Production sets a path token (INGRESS_PATH_TOKEN_FILE): the route names it where the operator put it.
        let token = "placeholder-secret-0123456789"
        var prefixes: [String] = []
        for rule in rules {
            let backends = try #require(rule["backendRefs"] as? [[String: Any]])
            #expect(backends.count == 1)
            #expect(backends.first?["name"] as? String == "asnp-ingress")
            #expect(backends.first?["port"] as? Int == 80)
            for match in try #require(rule["matches"] as? [[String: Any]]) {
                // Path only: a method match is an extended feature not every load balancer has.
                #expect(Set(match.keys) == ["path"], "\(match)")
                #expect(DeployFilesTests.value(match, "path", "type") as? String == "PathPrefix")
                let prefix = try #require(DeployFilesTests.value(match, "path", "value") as? String)
                #expect(prefix.hasPrefix("/REPLACE-WITH-PATH-TOKEN/"), "\(prefix)")
                prefixes.append(prefix.replacing("REPLACE-WITH-PATH-TOKEN", with: token))
            }
        }
        #expect(prefixes.count == 2)
        // Each prefix leads to the ingress's notification routes, for both environments, with and without an app.
        for prefix in prefixes {
            for rest in ["/production", "/sandbox", "/sandbox/notes"] {
                #expect(NotificationRoute(path: (prefix + rest)[...], tokened: true) != nil, "\(prefix + rest)")
            }
        }
        // Gateway API's PathPrefix: whole segments of the request's path.
        func routed(_ path: String) -> Bool {
            prefixes.contains { path == $0 || path.hasPrefix($0 + "/") }
        }
        for path in ["/metrics", "/health/ready", "/health/live", "/\(token)/metrics", "/\(token)/health/ready", "/"] {
            #expect(!routed(path), "\(path) is routed")
        }
        #expect(routed("/\(token)/v2/notifications/production"))
        #expect(!routed("/\(token)/v2/notificationsX/production"))

        // The Service's port 80 is the container's public port, and the Service has no other.
        let ingress = try await Self.ingressSettings(component: "gke")
        let service = try Self.document(documents, kind: "Service", name: "asnp-ingress")
        let servicePorts = try #require(DeployFilesTests.value(service, "spec", "ports") as? [[String: Any]])
        #expect(servicePorts.count == 1)
        #expect(servicePorts.first?["port"] as? Int == 80)
        let targetPort = try #require(servicePorts.first?["targetPort"] as? String)
        let deployment = try Self.document(documents, kind: "Deployment", name: "asnp-ingress")
        let container = try #require(
            (DeployFilesTests.value(deployment, "spec", "template", "spec", "containers") as? [[String: Any]])?.first
        )
        let containerPorts = try #require(container["ports"] as? [[String: Any]])
        let target = containerPorts.first { $0["name"] as? String == targetPort }
        #expect(target?["containerPort"] as? Int == ingress.ingress.port)
        #expect(ingress.status.port != ingress.ingress.port)
    }

    @Test(
        """
        the Gateway terminates TLS on 443 for the route's hostname, with a certificate: a Secret (cert-manager's) on \
        GKE, ACM's through the LoadBalancerConfiguration on EKS, whose ALB admits Apple's range only
        """
    )
    func gatewayTerminatesTLS() throws {
        let documents = try Self.documents([Self.production])
        let gateway = try Self.document(documents, kind: "Gateway", name: "asnp-public")
        let route = try Self.document(documents, kind: "HTTPRoute", name: "asnp-notifications")
        let listeners = try #require(DeployFilesTests.value(gateway, "spec", "listeners") as? [[String: Any]])
        #expect(listeners.count == 1, "HTTPS only")
        let listener = try #require(listeners.first)
        #expect(listener["protocol"] as? String == "HTTPS")
        #expect(listener["port"] as? Int == 443)
        #expect(DeployFilesTests.value(listener, "tls", "mode") as? String == "Terminate")
        let certificates = DeployFilesTests.value(listener, "tls", "certificateRefs") as? [[String: Any]]
        #expect(certificates?.first?["kind"] as? String == "Secret")
        let parent = try #require((DeployFilesTests.value(route, "spec", "parentRefs") as? [[String: Any]])?.first)
        #expect(parent["name"] as? String == "asnp-public")
        #expect(parent["sectionName"] as? String == listener["name"] as? String)
        #expect(
            DeployFilesTests.value(route, "spec", "hostnames") as? [String] == [listener["hostname"] as? String ?? ""]
        )
        let annotations = DeployFilesTests.value(gateway, "metadata", "annotations") as? [String: String]
        #expect(annotations?["cert-manager.io/cluster-issuer"] != nil)

        // EKS: the ALB's listener certificate is ACM's, named by the Gateway's LoadBalancerConfiguration.
        let eksGateway = try #require(try DeployFilesTests.yaml("kubernetes/components/eks/gateway.yaml").first)
        let parameters = try #require(
            DeployFilesTests.value(eksGateway, "spec", "infrastructure", "parametersRef") as? [String: String]
        )
        let eks = try Self.documents(["kubernetes/components/eks"])
        let configuration = try Self.document(eks, kind: parameters["kind"] ?? "", name: parameters["name"] ?? "")
        let eksListener = try #require(
            (DeployFilesTests.value(eksGateway, "spec", "listeners") as? [[String: Any]])?.first
        )
        #expect(eksListener["name"] as? String == listener["name"] as? String)
        #expect(eksListener["hostname"] as? String == listener["hostname"] as? String)
        let albListener = try #require(
            (DeployFilesTests.value(configuration, "spec", "listenerConfigurations") as? [[String: Any]])?.first
        )
        #expect(albListener["protocolPort"] as? String == "HTTPS:\(eksListener["port"] as? Int ?? -1)")
        #expect((albListener["defaultCertificate"] as? String)?.hasPrefix("arn:aws:acm:") == true)
        #expect(DeployFilesTests.value(configuration, "spec", "scheme") as? String == "internet-facing")
        #expect(DeployFilesTests.value(configuration, "spec", "sourceRanges") as? [String] == ["17.0.0.0/8"])
    }

    @Test(
        """
        each cloud's load balancer checks the ingress's readiness on its status port; Apple's post through it \
        (X-Forwarded-For as the cloud writes it) is read as Apple's address and passes the allow-list, a direct one \
        does not
        """,
        arguments: [
            // GKE: the Google Front End connects from its range and appends "<client>,<the Gateway's address>".
            ("gke", "35.191.12.34", "17.58.100.1, 203.0.113.10"),
            // EKS: the ALB connects from its address in the VPC and appends the client.
            ("eks", "10.0.7.8", "17.58.100.1"),
        ]
    )
    func loadBalancerOfEachCloud(component: String, proxy: String, forwardedFor: String) async throws {
        let settings = try await Self.ingressSettings(component: component)
        let documents = try Self.documents(["kubernetes/components/\(component)"])
        switch component {
        case "gke":
            let policy = try Self.document(documents, kind: "HealthCheckPolicy", name: "asnp-ingress")
            let check = try #require(
                DeployFilesTests.value(policy, "spec", "default", "config", "httpHealthCheck") as? [String: Any]
            )
            #expect(check["portSpecification"] as? String == "USE_FIXED_PORT")
            #expect(check["port"] as? Int == settings.status.port)
            #expect(check["requestPath"] as? String == "/health/ready")
            #expect(DeployFilesTests.value(policy, "spec", "targetRef", "name") as? String == "asnp-ingress")
        default:
            let configuration = try Self.document(documents, kind: "TargetGroupConfiguration", name: "asnp-ingress")
            let defaults = try #require(
                DeployFilesTests.value(configuration, "spec", "defaultConfiguration") as? [String: Any]
            )
            #expect(defaults["targetType"] as? String == "ip", "pods as targets, from the ALB's own addresses")
            #expect(
                DeployFilesTests.value(defaults, "healthCheckConfig", "healthCheckPort") as? String
                    == "\(settings.status.port)"
            )
            #expect(
                DeployFilesTests.value(defaults, "healthCheckConfig", "healthCheckPath") as? String == "/health/ready"
            )
        }
        let trusted = settings.ingress.trustedProxies
        let allowed = settings.ingress.allowedSources
        let client = ClientAddress.resolve(peer: proxy, forwardedFor: [forwardedFor], trustedProxies: trusted)
        #expect(client == "17.58.100.1")
        #expect(allowed.contains { $0.contains(client ?? "") })
        // Straight to a pod, or with a forged header from outside: the peer is the client, and not Apple.
        let direct = ClientAddress.resolve(peer: "198.51.100.7", forwardedFor: ["17.58.100.1"], trustedProxies: trusted)
        #expect(direct == "198.51.100.7")
        #expect(!allowed.contains { $0.contains(direct ?? "") })
        // The NetworkPolicy lets the load balancer's proxies reach both ports, and nobody else from outside.
        let policies = try NetworkPolicies(
            Self.documents(["kubernetes/base", Self.production, "kubernetes/components/\(component)"])
        )
        let ingress = try policies.pod("asnp-ingress")
        let worker = try policies.pod("asnp-worker")
        #expect(policies.allows(from: .address(proxy), to: ingress, port: settings.ingress.port))
        #expect(policies.allows(from: .address(proxy), to: ingress, port: settings.status.port))
        #expect(!policies.allows(from: .address("198.51.100.7"), to: ingress, port: settings.ingress.port))
        #expect(!policies.allows(from: .address(proxy), to: worker, port: settings.status.port))
    }

    @Test(
        """
        the namespace denies by default and allows the pipeline's flows: the load balancer to the ingress, Prometheus \
        to the status ports, Kafka from the ingress, workers and reconciler, PgBouncer from the database's clients \
        and PostgreSQL from it, DNS for all, Apple's API for the reconciler, app backends to the read API; and \
        nothing else tried here
        """
    )
    func networkPolicies() throws {
        let policies = try NetworkPolicies(
            Self.documents(["kubernetes/base", Self.production, "kubernetes/components/gke"])
        )
        // One policy selects every pod, both directions, and allows nothing: what no other policy allows is refused.
        let denyAll = policies.policies.contains { policy in
            let spec = policy["spec"] as? [String: Any] ?? [:]
            return (spec["podSelector"] as? [String: Any])?.isEmpty == true && spec["ingress"] == nil
                && spec["egress"] == nil && spec["policyTypes"] as? [String] == ["Ingress", "Egress"]
        }
        #expect(denyAll)

        let names = [
            "asnp-ingress", "asnp-worker", "asnp-history", "asnp-migrate", "asnp-retention", "asnp-pgbouncer",
            "asnp-api",
        ]
        let pods = try Dictionary(uniqueKeysWithValues: names.map { ($0, try policies.pod($0)) })
        let pgbouncer = try policies.pod("asnp-pgbouncer")
        let history = try policies.pod("asnp-history")
        let prometheus = NetworkPolicies.Endpoint.pod(
            namespace: "monitoring",
            labels: ["app.kubernetes.io/name": "prometheus"],
            ports: [:]
        )
        let kafka = NetworkPolicies.Endpoint.pod(
            namespace: "kafka",
            labels: ["strimzi.io/cluster": "kafka"],
            ports: [:]
        )
        let dns = NetworkPolicies.Endpoint.pod(namespace: "kube-system", labels: ["k8s-app": "kube-dns"], ports: [:])
        let stranger = NetworkPolicies.Endpoint.pod(namespace: "other", labels: ["app": "x"], ports: [:])
        let backend = NetworkPolicies.Endpoint.pod(namespace: "backends", labels: ["app": "billing"], ports: [:])
        let apple = NetworkPolicies.Endpoint.address("17.56.9.10")
        let postgres = NetworkPolicies.Endpoint.address("10.20.0.5")

        for name in names {
            let pod = try #require(pods[name])
            #expect(policies.allows(from: pod, to: dns, port: 53, protocol: "UDP"), "\(name) resolves names")
            #expect(policies.allows(from: pod, to: dns, port: 53), "\(name) resolves names over TCP")
            let usesKafka = ["asnp-ingress", "asnp-worker", "asnp-history"].contains(name)
            #expect(policies.allows(from: pod, to: kafka, port: 9093) == usesKafka, "\(name) to Kafka")
            let usesDatabase = ["asnp-worker", "asnp-history", "asnp-migrate", "asnp-retention", "asnp-api"].contains(
                name
            )
            #expect(
                policies.allows(from: pod, to: pgbouncer, port: 6432) == usesDatabase,
                "\(name) to PgBouncer"
            )
            #expect(policies.allows(from: pod, to: apple, port: 443) == (name == "asnp-history"), "\(name) to Apple")
            #expect(
                policies.allows(from: pod, to: postgres, port: 5432) == (name == "asnp-pgbouncer"),
                "\(name) to PostgreSQL"
            )
            let scraped = ["asnp-ingress", "asnp-worker", "asnp-history", "asnp-api"].contains(name)
            #expect(policies.allows(from: prometheus, to: pod, port: 9090) == scraped, "Prometheus to \(name)")
            #expect(!policies.allows(from: stranger, to: pod, port: 9090), "another namespace to \(name)")
            #expect(!policies.allows(from: stranger, to: pod, port: 8080), "another namespace to \(name)")
            #expect(!policies.allows(from: stranger, to: pod, port: 8081), "another namespace to \(name)")
            // App backends reach the read API's port, and nothing else of the pipeline.
            #expect(policies.allows(from: backend, to: pod, port: 8081) == (name == "asnp-api"), "backends to \(name)")
            #expect(!policies.allows(from: backend, to: pod, port: 9090), "backends to \(name)'s status port")
        }
        // Apple's API is public: the reconciler reaches no private address on 443 (the cluster's own services).
        #expect(!policies.allows(from: history, to: .address("10.1.2.3"), port: 443))
        #expect(!policies.allows(from: history, to: .address("169.254.169.254"), port: 443))
    }

    @Test(
        "the ingress and the workers spread over zones and nodes, each counting its own pods, never left Pending for it"
    )
    func topologySpread() throws {
        let documents = try Self.documents(["kubernetes/base"])
        for name in ["asnp-ingress", "asnp-worker"] {
            let deployment = try Self.document(documents, kind: "Deployment", name: name)
            let labels = try #require(
                DeployFilesTests.value(deployment, "spec", "template", "metadata", "labels") as? [String: String]
            )
            let constraints = try #require(
                DeployFilesTests.value(deployment, "spec", "template", "spec", "topologySpreadConstraints")
                    as? [[String: Any]]
            )
            #expect(
                constraints.compactMap { $0["topologyKey"] as? String }
                    == ["topology.kubernetes.io/zone", "kubernetes.io/hostname"],
                "\(name)"
            )
            for constraint in constraints {
                #expect(constraint["maxSkew"] as? Int == 1)
                #expect(constraint["whenUnsatisfiable"] as? String == "ScheduleAnyway")
                let selector = try #require(
                    DeployFilesTests.value(constraint, "labelSelector", "matchLabels") as? [String: String]
                )
                #expect(!selector.isEmpty && selector.allSatisfy { labels[$0.key] == $0.value }, "\(name)")
                #expect(constraint["matchLabelKeys"] as? [String] == ["pod-template-hash"])
            }
        }
    }
}

/// NetworkPolicy's semantics (https://kubernetes.io/docs/concepts/services-networking/network-policies/), as far as
/// these manifests use them: a pod selected by a policy of a direction is isolated in it, and then only what a rule
/// of such a policy allows passes; a connection needs the source's egress and the destination's ingress. Peers are
/// pod selectors (this namespace), namespace selectors (with pod selectors) and ipBlocks; ports by number or by the
/// destination's port name.
struct NetworkPolicies {
    static let namespace = "asnp"
    /// The labels of the other namespaces the tests place pods in, beyond their names: `backends` is where app
    /// backends calling the read API run (api.yaml's placeholder label).
    static let namespaceLabels = ["backends": ["asnp.example.com/api-client": "true"]]

    enum Endpoint {
        case pod(namespace: String, labels: [String: String], ports: [String: Int])
        case address(String)
    }

    let policies: [[String: Any]]
    let workloads: [[String: Any]]

    init(_ documents: [[String: Any]]) throws {
        policies = documents.filter { $0["kind"] as? String == "NetworkPolicy" }
        workloads = documents.filter { DeployFilesTests.podSpec($0) != nil }
        #expect(!policies.isEmpty)
    }

    /// The pods of the Deployment, Job or CronJob named `name`: their labels and named ports.
    func pod(_ name: String) throws -> Endpoint {
        let workload = try #require(
            workloads.first { DeployFilesTests.value($0, "metadata", "name") as? String == name },
            "\(name)"
        )
        let template: [String: Any]? =
            workload["kind"] as? String == "CronJob"
            ? DeployFilesTests.value(workload, "spec", "jobTemplate", "spec", "template") as? [String: Any]
            : DeployFilesTests.value(workload, "spec", "template") as? [String: Any]
        let labels = try #require(DeployFilesTests.value(template ?? [:], "metadata", "labels") as? [String: String])
        var ports: [String: Int] = [:]
        for container in DeployFilesTests.podSpec(workload)?["containers"] as? [[String: Any]] ?? [] {
            for port in container["ports"] as? [[String: Any]] ?? [] {
                if let name = port["name"] as? String, let number = port["containerPort"] as? Int {
                    ports[name] = number
                }
            }
        }
        return .pod(namespace: Self.namespace, labels: labels, ports: ports)
    }

    func allows(from source: Endpoint, to destination: Endpoint, port: Int, protocol protocolName: String = "TCP")
        -> Bool
    {
        passes(direction: "Egress", of: source, peer: destination, destination: destination, port, protocolName)
            && passes(direction: "Ingress", of: destination, peer: source, destination: destination, port, protocolName)
    }

    /// Whether the policies of this namespace let `endpoint` (if it is one of its pods) send or take the connection.
    private func passes(
        direction: String,
        of endpoint: Endpoint,
        peer: Endpoint,
        destination: Endpoint,
        _ port: Int,
        _ protocolName: String
    ) -> Bool {
        guard case .pod(let namespace, let labels, _) = endpoint, namespace == Self.namespace else { return true }
        let selecting = policies.filter { policy in
            let types = DeployFilesTests.value(policy, "spec", "policyTypes") as? [String] ?? ["Ingress"]
            return types.contains(direction)
                && Self.matches(DeployFilesTests.value(policy, "spec", "podSelector") as? [String: Any] ?? [:], labels)
        }
        guard !selecting.isEmpty else { return true }
        let rulesKey = direction == "Ingress" ? "ingress" : "egress"
        let peersKey = direction == "Ingress" ? "from" : "to"
        return selecting.contains { policy in
            (DeployFilesTests.value(policy, "spec", rulesKey) as? [[String: Any]] ?? []).contains { rule in
                let peers = rule[peersKey] as? [[String: Any]]
                let ports = rule["ports"] as? [[String: Any]]
                return (peers?.isEmpty ?? true || peers!.contains { Self.peer($0, matches: peer) })
                    && (ports?.isEmpty ?? true
                        || ports!.contains { Self.port($0, matches: port, protocolName, of: destination) })
            }
        }
    }

    private static func peer(_ selector: [String: Any], matches endpoint: Endpoint) -> Bool {
        switch endpoint {
        case .address(let address):
            guard let block = selector["ipBlock"] as? [String: Any], let cidr = block["cidr"] as? String else {
                return false
            }
            let except = (block["except"] as? [String] ?? []).compactMap(IPNetwork.init)
            return IPNetwork(cidr)?.contains(address) == true && !except.contains { $0.contains(address) }
        case .pod(let namespace, let labels, _):
            guard selector["ipBlock"] == nil else { return false }
            let podSelector = selector["podSelector"] as? [String: Any] ?? [:]
            guard let namespaceSelector = selector["namespaceSelector"] as? [String: Any] else {
                return namespace == Self.namespace && matches(podSelector, labels)
            }
            let namespaceLabels = ["kubernetes.io/metadata.name": namespace].merging(
                Self.namespaceLabels[namespace] ?? [:]
            ) { $1 }
            return matches(namespaceSelector, namespaceLabels) && matches(podSelector, labels)
        }
    }

    private static func port(_ rule: [String: Any], matches port: Int, _ protocolName: String, of destination: Endpoint)
        -> Bool
    {
        guard (rule["protocol"] as? String ?? "TCP") == protocolName else { return false }
        switch rule["port"] {
        case nil: return true
        case let number as Int: return number == port
        case let name as String:
            guard case .pod(_, _, let ports) = destination else { return false }
            return ports[name] == port
        default: return false
        }
    }

    /// A label selector: matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist); empty selects all.
    private static func matches(_ selector: [String: Any], _ labels: [String: String]) -> Bool {
        let exact = selector["matchLabels"] as? [String: String] ?? [:]
        guard exact.allSatisfy({ labels[$0.key] == $0.value }) else { return false }
        return (selector["matchExpressions"] as? [[String: Any]] ?? []).allSatisfy { expression in
            let key = expression["key"] as? String ?? ""
            let values = expression["values"] as? [String] ?? []
            switch expression["operator"] as? String {
            case "In": return labels[key].map(values.contains) ?? false
            case "NotIn": return !(labels[key].map(values.contains) ?? false)
            case "Exists": return labels[key] != nil
            case "DoesNotExist": return labels[key] == nil
            default: return false
            }
        }
    }
}
