import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR

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

    /// Throws unless `leaf` chains to a configured root through
    /// `intermediates`. Only the configured roots anchor a path: a
    /// self-signed certificate sent in x5c is one more untrusted certificate.
    func checkChain(_ leaf: X509Certificate, _ intermediates: [X509Certificate]) throws(TokenMintError) {
        let roots = policy.attestationRoots.compactMap { try? X509Certificate(derRepresentation: $0) }
        guard leaf.chains(to: roots, through: intermediates, at: policy.attestationTime) else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the attestation certificate does not chain to a trusted root")
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
