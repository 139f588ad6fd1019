import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE
import TokenMintCBOR
import Foundation

// The certificate-based attestation formats beyond packed and fido-u2f:
// apple (WebAuthn §8.8) and android-key (§8.4).
extension RelyingPartyVerifier {
    /// The parsed `x5c` of a statement: the credential certificate and the rest.
    func certificates(_ statement: CBOR) throws(TokenMintError) -> (leaf: X509Certificate, intermediates: [X509Certificate]) {
        guard let chain = statement[.text("x5c")]?.arrayValue, !chain.isEmpty, chain.count <= 8 else {
            throw TokenMintError(.webAuthn.invalidAttestation, "x5c must be an array of 1 to 8 certificates")
        }
        var parsed: [X509Certificate] = []
        for entry in chain {
            guard let der = entry.bytesValue, let certificate = try? X509Certificate(derRepresentation: der) else {
                throw TokenMintError(.webAuthn.invalidAttestation, "a certificate in x5c does not parse")
            }
            parsed.append(certificate)
        }
        return (parsed[0], Array(parsed.dropFirst()))
    }

    /// Whether `certificate`'s public key is the credential's.
    func certificate(_ certificate: X509Certificate, holds key: COSEKey) -> Bool {
        switch key.material {
        case .ec(let ec): certificate.hasPublicKey(ec)
        case .rsa(let rsa): certificate.hasPublicKey(rsa)
        case .ed25519(let ed): certificate.hasPublicKey(ed)
        }
    }

    /// The cause of the error ``checkChain(_:_:)`` throws, which tells an
    /// unanchored chain from every other failure.
    struct UnanchoredChain: Error {}

    /// Throws unless `leaf` chains to a configured root through
    /// `intermediates`. Only the configured roots anchor a path: a
    /// self-signed certificate sent in x5c is one more untrusted certificate.
    func checkChain(_ leaf: X509Certificate, _ intermediates: [X509Certificate]) throws(TokenMintError) {
        if skipsChains {
            // No root to reach: every certificate must still be within its validity period.
            guard ([leaf] + intermediates).allSatisfy({ $0.isValid(at: policy.attestationTime) }) else {
                throw TokenMintError(.webAuthn.invalidAttestation, "an attestation certificate is not valid at the attestation time")
            }
            return
        }
        let roots = policy.attestationRoots.compactMap { try? X509Certificate(derRepresentation: $0) }
        guard leaf.chains(to: roots, through: intermediates, at: policy.attestationTime) else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the attestation certificate does not chain to a trusted root",
                                 underlying: UnanchoredChain())
        }
    }

    /// Apple anonymous attestation (§8.8): `{x5c}`; the credential
    /// certificate's extension 1.2.840.113635.100.8.2 holds
    /// `SEQUENCE { [1] OCTET STRING nonce }` with nonce = SHA-256(authData ‖
    /// clientDataHash); its key is the credential's; the chain ends at a
    /// configured root (Apple's WebAuthn root CA).
    func verifyApple(_ statement: CBOR, signed: [UInt8], credential: AuthenticatorData.AttestedCredential) throws(TokenMintError) {
        guard statement.mapValue?.count == 1 else { throw TokenMintError(.webAuthn.invalidAttestation, "an apple attStmt is {x5c}") }
        let (leaf, intermediates) = try certificates(statement)
        guard let value = leaf.extensionValue(oid: "1.2.840.113635.100.8.2") else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the apple credential certificate has no nonce extension")
        }
        let sequence = try DERItem.single(value[...])
        guard sequence.isUniversal(0x10), let tagged = try sequence.children().first, try sequence.children().count == 1,
            tagged.isContext(1), let nonce = try tagged.children().first, try tagged.children().count == 1,
            nonce.isUniversal(0x04), !nonce.constructed
        else { throw TokenMintError(.webAuthn.invalidAttestation, "the apple nonce extension is not SEQUENCE { [1] OCTET STRING }") }
        guard ConstantTime.equals(Array(nonce.contents), HashFunction.sha256.hash(signed)) else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the apple nonce is not SHA-256 of authData and clientDataHash")
        }
        guard certificate(leaf, holds: credential.publicKey) else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the apple credential certificate's key is not the credential's")
        }
        try checkChain(leaf, intermediates)
    }

    /// Android key attestation (§8.4): `{alg, sig, x5c}`; `sig` over
    /// authData ‖ clientDataHash verifies with the credential certificate,
    /// whose key is the credential's; its key description (extension
    /// 1.3.6.1.4.1.11129.2.1.17) has attestationChallenge = clientDataHash,
    /// no allApplications in either authorization list, and (in their union)
    /// origin KM_ORIGIN_GENERATED and purpose KM_PURPOSE_SIGN; the chain ends
    /// at a configured root (Google's hardware attestation roots).
    func verifyAndroidKey(
        _ statement: CBOR, signed: [UInt8], clientDataHash: [UInt8], credential: AuthenticatorData.AttestedCredential
    ) throws(TokenMintError) {
        guard statement.mapValue?.count == 3, let alg = statement[.text("alg")]?.intValue, let signature = statement[.text("sig")]?.bytesValue else {
            throw TokenMintError(.webAuthn.invalidAttestation, "an android-key attStmt is {alg, sig, x5c}")
        }
        let (leaf, intermediates) = try certificates(statement)
        guard let algorithm = COSEAlgorithm(rawValue: alg), leaf.isValidSignature(signature, for: signed, hash: algorithm.hash) else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the android-key signature does not verify with its certificate")
        }
        guard certificate(leaf, holds: credential.publicKey) else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the android-key certificate's key is not the credential's")
        }
        guard let value = leaf.extensionValue(oid: "1.3.6.1.4.1.11129.2.1.17") else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the android-key certificate has no key description")
        }
        let description = try DERItem.single(value[...])
        let fields = try description.children()
        guard description.isUniversal(0x10), fields.count >= 8, fields[4].isUniversal(0x04), !fields[4].constructed,
            fields[6].isUniversal(0x10), fields[7].isUniversal(0x10)
        else { throw TokenMintError(.webAuthn.invalidAttestation, "the key description is not a KeyDescription") }
        guard ConstantTime.equals(Array(fields[4].contents), clientDataHash) else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the key description's attestationChallenge is not the clientDataHash")
        }
        var origins: [Int64] = []
        var purposes: [Int64] = []
        for list in [fields[6], fields[7]] {
            for entry in try list.children() where entry.tagClass == 2 {
                switch entry.number {
                case 600:
                    throw TokenMintError(.webAuthn.invalidAttestation, "the key is bound to all applications (allApplications)")
                case 702:
                    guard let inner = try entry.children().first else { throw DERItem.fail("empty origin") }
                    origins.append(try inner.smallInteger())
                case 1:
                    guard let set = try entry.children().first, set.isUniversal(0x11) else { throw DERItem.fail("purpose is not a SET") }
                    purposes += try set.children().map { item throws(TokenMintError) in try item.smallInteger() }
                default:
                    continue
                }
            }
        }
        guard origins.contains(0), !origins.contains(where: { $0 != 0 }) else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the key was not generated in the authenticator (origin)")
        }
        guard purposes.contains(2) else { throw TokenMintError(.webAuthn.invalidAttestation, "the key's purpose is not signing") }
        try checkChain(leaf, intermediates)
    }
}

extension RelyingPartyVerifier {
    /// How far a SafetyNet `timestampMs` may be from the verification time
    /// (the policy's attestation time, or now), in milliseconds.
    static let safetyNetWindow: Int64 = 60_000

    /// Android SafetyNet attestation (§8.5): `{ver, response}`, where
    /// `response` is a compact JWS (RS256 or ES256) whose x5c leaf is issued
    /// to attest.android.com and chains to a configured root (GlobalSign),
    /// whose signature verifies with that leaf, and whose payload has
    /// `nonce` = base64(SHA-256(authData ‖ clientDataHash)),
    /// `basicIntegrity` and `ctsProfileMatch` true, and `timestampMs` within a
    /// minute of the verification time.
    func verifySafetyNet(_ statement: CBOR, signed: [UInt8]) throws(TokenMintError) {
        func fail(_ why: String) -> TokenMintError { TokenMintError(.webAuthn.invalidAttestation, "android-safetynet: \(why)") }
        guard statement.mapValue?.count == 2, let version = statement[.text("ver")]?.textValue, !version.isEmpty,
            let response = statement[.text("response")]?.bytesValue, response.count <= 64 * 1024
        else { throw fail("the attStmt is {ver, response}") }
        // The JOSE verifier checks the JWS with its x5c leaf; the chain is anchored below, by this RP's roots and policy.
        var jwsPolicy = JWSPolicy()
        jwsPolicy.algorithms = [.RS256, .ES256]
        jwsPolicy.maximumHeaderBytes = 32 * 1024  // x5c: a few certificates
        let verified: VerifiedJWS
        do { verified = try JWSVerifier(unanchoredCertificatesWith: jwsPolicy).verify(compact: String(decoding: response, as: UTF8.self)) } catch {
            throw TokenMintError(.webAuthn.invalidAttestation, "android-safetynet: \(error.reason)", underlying: error)
        }
        guard let payload = (try? JSONParser.parse(verified.payload))?.objectValue else { throw fail("the JWS payload is not a JSON object") }
        let certificates = verified.certificates
        let leaf = certificates[0]
        guard leaf.matches(hostname: "attest.android.com") else { throw fail("the certificate is not issued to attest.android.com") }
        // The nonce is standard base64 with padding.
        let expected = Base64URL.encode(HashFunction.sha256.hash(signed), padding: .padded)
            .map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 }
        guard let nonce = payload["nonce"]?.stringValue, ConstantTime.equals(Array(nonce.utf8), Array(String(expected).utf8)) else {
            throw fail("the nonce is not base64(SHA-256(authData ‖ clientDataHash))")
        }
        guard payload["basicIntegrity"]?.boolValue == true, payload["ctsProfileMatch"]?.boolValue == true else {
            throw fail("the device failed SafetyNet's integrity checks (basicIntegrity, ctsProfileMatch)")
        }
        guard let stamp = payload["timestampMs"]?.int64Value else { throw fail("the payload has no timestampMs") }
        let seconds = policy.attestationTime ?? Int64(Date().timeIntervalSince1970)
        let (now, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        guard !overflow, TimeArithmetic.subtracting(now, stamp).magnitude <= UInt64(Self.safetyNetWindow) else {
            throw fail("timestampMs is more than a minute from the verification time")
        }
        try checkChain(leaf, Array(certificates.dropFirst()))
    }
}

/// The TPM 2.0 structures a tpm attestation carries (TPM 2.0 Part 2),
/// big-endian, read strictly: every size checked, nothing left over.
struct TPMReader {
    let bytes: [UInt8]
    var offset = 0

    static func fail(_ why: String) -> TokenMintError { TokenMintError(.webAuthn.invalidAttestation, "tpm: \(why)") }

    mutating func take(_ count: Int) throws(TokenMintError) -> [UInt8] {
        guard count >= 0, count <= bytes.count - offset else { throw Self.fail("a structure is truncated") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func uint(_ size: Int) throws(TokenMintError) -> UInt64 {
        try take(size).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// A TPM2B: a 16-bit size and that many bytes.
    mutating func sized() throws(TokenMintError) -> [UInt8] { try take(Int(try uint(2))) }

    func end() throws(TokenMintError) {
        guard offset == bytes.count else { throw Self.fail("trailing bytes after a structure") }
    }
}

extension RelyingPartyVerifier {
    /// The hash of a TPM algorithm ID (TPM_ALG_SHA1, SHA256, SHA384, SHA512).
    static func tpmHash(_ id: UInt64) -> HashFunction? {
        switch id {
        case 0x0004: .sha1
        case 0x000B: .sha256
        case 0x000C: .sha384
        case 0x000D: .sha512
        default: nil
        }
    }

    /// The hash and key family of an attestation statement's COSE `alg`.
    static func statementHash(_ alg: Int64) -> HashFunction? {
        switch alg {
        case -7, -257, -37: .sha256
        case -35, -258, -38: .sha384
        case -36, -259, -39: .sha512
        case -65535: .sha1
        default: nil
        }
    }

    /// TPM attestation (§8.3): `{ver "2.0", alg, x5c, sig, certInfo,
    /// pubArea}`. pubArea's key is the credential's; certInfo is a
    /// TPM_GENERATED TPMS_ATTEST of type CERTIFY whose extraData is the hash
    /// (by `alg`) of authData ‖ clientDataHash and whose attested name is
    /// nameAlg ‖ H_nameAlg(pubArea); `sig` over certInfo verifies with the
    /// AIK certificate, which is X.509 v3 with an empty subject, a subject
    /// alternative name carrying the TPM manufacturer, model and version,
    /// extended key usage tcg-kp-AIKCertificate (2.23.133.8.3), CA false,
    /// the authenticator's AAGUID when it names one, and a chain to a
    /// configured root.
    func verifyTPM(_ statement: CBOR, signed: [UInt8], credential: AuthenticatorData.AttestedCredential) throws(TokenMintError) {
        guard statement.mapValue?.count == 6, statement[.text("ver")]?.textValue == "2.0", let alg = statement[.text("alg")]?.intValue,
            let signature = statement[.text("sig")]?.bytesValue, let certInfo = statement[.text("certInfo")]?.bytesValue,
            let pubArea = statement[.text("pubArea")]?.bytesValue
        else { throw TPMReader.fail("the attStmt is {ver: \"2.0\", alg, x5c, sig, certInfo, pubArea}") }
        guard let hash = Self.statementHash(alg) else { throw TPMReader.fail("alg \(alg) is not supported") }
        let (aik, intermediates) = try certificates(statement)

        // pubArea (TPMT_PUBLIC) and the credential's key.
        var area = TPMReader(bytes: pubArea)
        let type = try area.uint(2)
        let nameAlg = try area.uint(2)
        _ = try area.uint(4)  // objectAttributes
        _ = try area.sized()  // authPolicy
        guard try area.uint(2) == 0x0010 else { throw TPMReader.fail("the key has a symmetric algorithm") }
        guard try area.uint(2) == 0x0010 else { throw TPMReader.fail("the key has a signing scheme fixed in pubArea") }
        switch (type, credential.publicKey.material) {
        case (0x0001, .rsa(let key)):
            _ = try area.uint(2)  // keyBits
            var exponent = try area.uint(4)
            if exponent == 0 { exponent = 65_537 }
            let modulus = try area.sized()
            let expected = key.publicExponent.drop { $0 == 0 }.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard key.publicExponent.drop(while: { $0 == 0 }).count <= 8, exponent == expected,
                ConstantTime.equals(modulus, Array(key.modulus.drop { $0 == 0 })) || ConstantTime.equals(modulus, key.modulus)
            else { throw TPMReader.fail("pubArea's RSA key is not the credential's") }
        case (0x0023, .ec(let key)):
            let curve = try area.uint(2)
            _ = try area.uint(2)  // kdf
            let x = try area.sized()
            let y = try area.sized()
            let expectedCurve: UInt64 = key.curve == .p256 ? 0x0003 : key.curve == .p384 ? 0x0004 : key.curve == .p521 ? 0x0005 : 0
            guard curve == expectedCurve, ConstantTime.equals(x, key.x), ConstantTime.equals(y, key.y) else {
                throw TPMReader.fail("pubArea's EC key is not the credential's")
            }
        default:
            throw TPMReader.fail("pubArea's key type \(type) is not the credential's")
        }
        try area.end()
        guard let nameHash = Self.tpmHash(nameAlg) else { throw TPMReader.fail("nameAlg \(nameAlg) is not supported") }

        // certInfo (TPMS_ATTEST).
        var info = TPMReader(bytes: certInfo)
        guard try info.uint(4) == 0xFF54_4347 else { throw TPMReader.fail("certInfo's magic is not TPM_GENERATED_VALUE") }
        guard try info.uint(2) == 0x8017 else { throw TPMReader.fail("certInfo's type is not TPM_ST_ATTEST_CERTIFY") }
        _ = try info.sized()  // qualifiedSigner
        let extraData = try info.sized()
        _ = try info.take(17)  // clockInfo
        _ = try info.uint(8)  // firmwareVersion
        let name = try info.sized()
        _ = try info.sized()  // qualifiedName
        try info.end()
        guard ConstantTime.equals(extraData, hash.hash(signed)) else {
            throw TPMReader.fail("certInfo's extraData is not the hash of authData and clientDataHash")
        }
        let expectedName = [UInt8(nameAlg >> 8), UInt8(nameAlg & 0xFF)] + nameHash.hash(pubArea)
        guard ConstantTime.equals(name, expectedName) else { throw TPMReader.fail("certInfo's attested name is not pubArea's") }
        guard aik.isValidSignature(signature, for: certInfo, hash: hash) else {
            throw TPMReader.fail("the signature over certInfo does not verify with the AIK certificate")
        }
        try checkAIKCertificate(aik, aaguid: credential.aaguid)
        try checkChain(aik, intermediates)
    }

    /// The AIK certificate requirements (§8.3.1).
    func checkAIKCertificate(_ aik: X509Certificate, aaguid: [UInt8]) throws(TokenMintError) {
        guard aik.version == 3 else { throw TPMReader.fail("the AIK certificate is not X.509 v3") }
        guard aik.hasEmptySubject else { throw TPMReader.fail("the AIK certificate's subject is not empty") }
        // Subject alternative name: a directoryName with tcg-at-tpmManufacturer, -tpmModel and -tpmVersion.
        guard let alternative = aik.extensionValue(oid: "2.5.29.17") else { throw TPMReader.fail("the AIK certificate has no subject alternative name") }
        var found: Set<[UInt8]> = []
        func collect(_ item: DERItem) throws(TokenMintError) {
            if item.isUniversal(0x10), let children = try? item.children(), children.count == 2, children[0].isUniversal(0x06) {
                found.insert(Array(children[0].contents))
            }
            if item.constructed { for child in try item.children() { try collect(child) } }
        }
        for general in try DERItem.single(alternative[...]).children() where general.isContext(4) { try collect(general) }
        let tcg: [[UInt8]] = [[0x67, 0x81, 0x05, 0x02, 0x01], [0x67, 0x81, 0x05, 0x02, 0x02], [0x67, 0x81, 0x05, 0x02, 0x03]]
        guard tcg.allSatisfy(found.contains) else {
            throw TPMReader.fail("the AIK certificate's subject alternative name lacks the TPM manufacturer, model or version")
        }
        guard let usage = aik.extensionValue(oid: "2.5.29.37"),
            try DERItem.single(usage[...]).children().contains(where: { $0.isUniversal(0x06) && Array($0.contents) == [0x67, 0x81, 0x05, 0x08, 0x03] })
        else { throw TPMReader.fail("the AIK certificate's extended key usage lacks tcg-kp-AIKCertificate") }
        guard let constraints = aik.extensionValue(oid: "2.5.29.19") else { throw TPMReader.fail("the AIK certificate has no basic constraints") }
        let first = try DERItem.single(constraints[...]).children().first
        if let first, first.isUniversal(0x01), first.contents.contains(where: { $0 != 0 }) {
            throw TPMReader.fail("the AIK certificate is a CA")
        }
        if let value = aik.extensionValue(oid: "1.3.6.1.4.1.45724.1.1.4") {
            let octets = try DERItem.single(value[...])
            guard octets.isUniversal(0x04), ConstantTime.equals(Array(octets.contents), aaguid) else {
                throw TPMReader.fail("the AIK certificate's AAGUID is not the authenticator's")
            }
        }
    }
}
