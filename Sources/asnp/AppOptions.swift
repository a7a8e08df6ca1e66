import AppStoreModels
import AppStoreVerification
import ArgumentParser
import Foundation
import PipelineServices
import X509

/// The options that describe the app notifications are checked against, shared by the commands that verify.
struct AppOptions: ParsableArguments {
    @Option(
        name: .customLong("root-cert"),
        help: ArgumentHelp(
            "A trusted root certificate (DER or PEM); repeatable. Default: Apple Root CA - G3, built in.",
            valueName: "path"
        )
    )
    var rootCertificatePaths: [String] = []

    @Option(help: "The app's bundle identifier.")
    var bundleId: String

    @Option(help: "The app's Apple identifier (required for Production).")
    var appAppleId: Int64?

    @Option(help: "The environment notifications must come from: Sandbox, Production, Xcode or LocalTesting.")
    var environment: AppStoreEnvironment

    @Option(name: .customLong("shared-secret"), help: "A V1 shared secret; repeatable, for rotation.")
    var sharedSecrets: [String] = []

    @Option(
        name: .customLong("shared-secret-file"),
        help: ArgumentHelp(
            "A file of V1 shared secrets, one a line; repeatable. Keeps secrets out of the process list.",
            valueName: "path"
        )
    )
    var sharedSecretFiles: [String] = []

    func validate() throws {
        let known: [AppStoreEnvironment] = [.sandbox, .production, .xcode, .localTesting]
        guard known.contains(environment) else {
            throw ValidationError("--environment must be one of Sandbox, Production, Xcode, LocalTesting")
        }
        if environment == .production, appAppleId == nil {
            throw ValidationError("--app-apple-id is required with --environment Production")
        }
    }

    /// The trusted roots: the files given, or Apple's root.
    func trustedRoots() throws -> [Certificate] {
        try RootCertificateFile.trustedRoots(paths: rootCertificatePaths)
    }

    /// A notification verifier for these options, with its own chain verifier.
    func makeVerifier() throws -> NotificationVerifier {
        let policy: VerificationPolicy
        do {
            policy = try VerificationPolicy(bundleId: bundleId, appAppleId: appAppleId, environment: environment)
        } catch {
            throw ValidationError(String(describing: error))
        }
        let chainVerifier = ChainVerifier(configuration: .init(trustedRoots: try trustedRoots()))
        return NotificationVerifier(
            configuration: .init(policy: policy, sharedSecrets: try allSharedSecrets()),
            chainVerifier: chainVerifier
        )
    }
}

extension AppOptions {
    /// The secrets given on the command line and in the secret files.
    func allSharedSecrets() throws -> [String] {
        let fromFiles = try sharedSecretFiles.flatMap { path -> [String] in
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("cannot read the shared secret file \(path)")
            }
            return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        }
        return sharedSecrets + fromFiles
    }
}

extension AppStoreEnvironment: ExpressibleByArgument {
    /// An environment named on the command line (public: the conformance of a public type is public).
    public init?(argument: String) {
        // Accept Apple's spelling in any case, so `sandbox` from a route or a shell works too.
        let known: [AppStoreEnvironment] = [.sandbox, .production, .xcode, .localTesting]
        guard let match = known.first(where: { $0.rawValue.lowercased() == argument.lowercased() }) else {
            return nil
        }
        self = match
    }
}
