// swift-tools-version:6.1
// Benchmarks for AppStoreNotificationPipeline, kept in their own package so that ordo-one/benchmark and its
// dependencies (malloc-interposer, hdrhistogram, TextTable, ...) never enter the main package's graph.
// Run from this directory: `swift package benchmark`.
import PackageDescription

let package = Package(
    name: "AppStoreNotificationPipelineBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "AppStoreNotificationPipeline", path: ".."),
        .package(
            url: "https://github.com/ordo-one/benchmark.git",
            from: "1.38.1",
            traits: ["MallocInterposer"]
        ),
        .package(url: "https://github.com/apple/swift-certificates.git", .upToNextMinor(from: "1.21.1")),
    ],
    targets: [
        .executableTarget(
            name: "VerifyBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "AppStoreModels", package: "AppStoreNotificationPipeline"),
                .product(name: "AppStoreVerification", package: "AppStoreNotificationPipeline"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Benchmarks/VerifyBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        )
    ]
)
