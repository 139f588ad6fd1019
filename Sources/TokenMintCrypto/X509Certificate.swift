public import TokenMintCore
import Foundation

// The public API. The OpenSSL calls are in X509_libcrypto.swift.

/// An X.509 certificate, parsed by OpenSSL: enough to check attestation
/// statements (a signature made with the certificate's key, and a chain to
/// trusted roots).
public struct X509Certificate: Sendable {
    let box: Box

    /// Parses DER; all bytes must belong to the certificate.
    public init(derRepresentation der: [UInt8]) throws(TokenMintError) {
        guard !der.isEmpty, der.count <= 64 * 1024 else { throw TokenMintError(.crypto.invalidEncoding, "certificate empty or larger than 64 KiB") }
        box = try X509Certificate.openSSLParse(der)
    }

    /// Whether `signature` over `message` verifies with the certificate's
    /// public key: ECDSA (DER) or RSA PKCS#1 v1.5 with `hash`, or Ed25519.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], hash: HashFunction) -> Bool {
        openSSLIsValidSignature(signature, for: message, hash: hash)
    }

    /// The DER of each `-----BEGIN CERTIFICATE-----` block of `pem`, each
    /// parsed (text between blocks is ignored).
    /// - Throws: `crypto.invalidEncoding` for no certificate, a block that
    ///   does not end, or one that is not a certificate.
    public static func derCertificates(pem: String) throws(TokenMintError) -> [[UInt8]] {
        var certificates: [[UInt8]] = []
        var rest = Substring(pem)
        while let begin = rest.range(of: "-----BEGIN CERTIFICATE-----") {
            guard let end = rest[begin.upperBound...].range(of: "-----END CERTIFICATE-----") else {
                throw TokenMintError(.crypto.invalidEncoding, "PEM: a certificate block does not end")
            }
            let body = rest[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
            guard let der = try? Base64URL.decodeStandard(body), (try? X509Certificate(derRepresentation: der)) != nil else {
                throw TokenMintError(.crypto.invalidEncoding, "PEM: certificate \(certificates.count + 1) does not parse")
            }
            certificates.append(der)
            rest = rest[end.upperBound...]
        }
        guard !certificates.isEmpty else { throw TokenMintError(.crypto.invalidEncoding, "PEM: no certificate") }
        return certificates
    }

    /// Whether the certificate's key is an EC key on P-256 (what FIDO U2F
    /// attestation certificates carry).
    public var hasP256Key: Bool { openSSLCurveName == "prime256v1" }

    /// The value of the extension `oid` (dotted decimal, e.g.
    /// `1.2.840.113635.100.8.2`): the DER inside its `extnValue` OCTET
    /// STRING; nil when the certificate has no such extension.
    public func extensionValue(oid: String) -> [UInt8]? {
        openSSLExtensionValue(oid: oid)
    }

    /// Whether the certificate's subject public key is `key` (EC point, RSA
    /// modulus and exponent, or Ed25519 bytes compared exactly).
    public func hasPublicKey(_ key: ECDSA.PublicKey) -> Bool {
        openSSLCurveName == key.curve.openSSLName && openSSLEncodedPublicKey == key.x963Representation
    }

    /// Whether the certificate's subject public key is the RSA key `key`.
    public func hasPublicKey(_ key: RSA.PublicKey) -> Bool {
        guard let info = openSSLSubjectPublicKeyInfo, let mine = try? RSA.PublicKey(derRepresentation: info) else { return false }
        return mine == key
    }

    /// Whether the certificate's subject public key is the Ed25519 key `key`.
    public func hasPublicKey(_ key: Ed25519.PublicKey) -> Bool {
        openSSLRawEdwardsKey(type: "ED25519") == key.rawRepresentation
    }

    /// The certificate's version as written in it (3 for X.509 v3).
    public var version: Int { openSSLVersion }

    /// Whether the certificate's subject is the empty name (as TPM
    /// attestation identity key certificates have).
    public var hasEmptySubject: Bool { openSSLSubjectEntryCount == 0 }

    /// Whether the certificate is issued to the DNS name `hostname`
    /// (OpenSSL's `X509_check_host`: subject alternative names, or the
    /// subject's common name when it has none; no partial wildcards).
    public func matches(hostname: String) -> Bool {
        openSSLMatches(hostname: hostname)
    }

    /// Whether the certificate chains to one of `roots`, optionally through
    /// `intermediates`, under OpenSSL's path validation, with every
    /// certificate valid at `time` (Unix seconds; nil for now). Only `roots`
    /// anchor a path: a self-signed certificate among `intermediates` does not.
    public func chains(to roots: [X509Certificate], through intermediates: [X509Certificate] = [], at time: Int64? = nil) -> Bool {
        openSSLChains(to: roots, through: intermediates, at: time)
    }

    /// Whether `time` (Unix seconds; nil for now) is within the
    /// certificate's validity period (notBefore ≤ time < notAfter).
    public func isValid(at time: Int64? = nil) -> Bool { openSSLIsValid(at: time) }

    /// The subject public key as a PEM SubjectPublicKeyInfo.
    public func publicKeyPEM() throws(TokenMintError) -> String { try openSSLPublicKeyPEM() }

    /// Whether the certificate may sign: true when it has no key usage
    /// extension, or one that asserts digitalSignature (RFC 5280 §4.2.1.3).
    public var allowsDigitalSignature: Bool {
        // KeyUsage ::= BIT STRING: 03 len unused-bits first-byte…; digitalSignature is bit 0 (0x80).
        guard let value = extensionValue(oid: "2.5.29.15") else { return true }
        guard value.count >= 4, value[0] == 0x03, Int(value[1]) == value.count - 2 else { return false }
        return value[3] & 0x80 != 0
    }
}
