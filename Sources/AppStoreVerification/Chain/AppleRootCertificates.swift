import SwiftASN1
import X509

/// Apple's root certificates, built in so a fresh deployment trusts exactly what the App Store signs with.
public enum AppleRootCertificates {
    /// The SHA-256 fingerprint of ``appleRootCAG3``, as Apple publishes it.
    package static let appleRootCAG3SHA256Fingerprint =
        "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79"

    /// The DER bytes of Apple Root CA - G3 (ECC P-384), the root of every App Store signing chain.
    ///
    /// Copied from https://www.apple.com/certificateauthority/AppleRootCA-G3.cer; its fingerprint is pinned by a test.
    package static let appleRootCAG3DER: [UInt8] = Base64Standard.decode(
        """
        MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwSQXBwbGUgUm9v
        dCBDQSAtIEczMSYwJAYDVQQLDB1BcHBsZSBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTETMBEGA1UE
        CgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcNMTQwNDMwMTgxOTA2WhcNMzkwNDMwMTgxOTA2
        WjBnMRswGQYDVQQDDBJBcHBsZSBSb290IENBIC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRpZmlj
        YXRpb24gQXV0aG9yaXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqG
        SM49AgEGBSuBBAAiA2IABJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtfTjjTuxxE
        tX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqXl5dvMVztK517IDvYuVTZXpmkOlEKMaNC
        MEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySrMA8GA1UdEwEB/wQFMAMBAf8wDgYDVR0P
        AQH/BAQDAgEGMAoGCCqGSM49BAMDA2gAMGUCMQCD6cHEFl4aXTQY2e3v9GwOAEZLuN+yRhHFD/3m
        eoyhpmvOwgPUnPWTxnS4at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkL
        F1vLUagM6BgD56KyKA==
        """.filter { !$0.isWhitespace }
    )!

    /// Apple Root CA - G3 as a certificate: the default trusted root.
    public static let appleRootCAG3: Certificate = {
        // The bytes are a constant pinned by a test, so parsing cannot fail at run time.
        try! Certificate(derEncoded: appleRootCAG3DER)
    }()
}
