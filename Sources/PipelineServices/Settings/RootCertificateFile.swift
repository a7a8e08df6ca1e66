import AppStoreVerification
import ArgumentParser
import Foundation
import SwiftASN1
import X509

/// Reads trusted root certificates from a file in DER or PEM (one or more `CERTIFICATE` blocks).
package enum RootCertificateFile {
    /// The roots in the files at `paths`, or Apple Root CA - G3 (built in) when there are none.
    package static func trustedRoots(paths: [String]) throws -> [Certificate] {
        guard !paths.isEmpty else { return [AppleRootCertificates.appleRootCAG3] }
        return try paths.flatMap { try load(path: $0) }
    }

    package static func load(path: String) throws -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read the root certificate file \(path)")
        }
        do {
            if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN") {
                let documents = try PEMDocument.parseMultiple(pemString: text)
                    .filter { $0.discriminator == "CERTIFICATE" }
                guard !documents.isEmpty else {
                    throw ValidationError("the root certificate file \(path) holds no PEM CERTIFICATE block")
                }
                return try documents.map { try Certificate(pemDocument: $0) }
            }
            return [try Certificate(derEncoded: Array(data))]
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("the root certificate file \(path) is not a DER or PEM certificate: \(error)")
        }
    }
}
