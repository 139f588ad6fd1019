public import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR

/// Verifies WebAuthn registrations and assertions (W3C WebAuthn L3 §7).
///
/// Strict on every point where common verifiers disagree: exact origins (no
/// subdomains), the challenge compared in constant time, rpIdHash compared in
/// constant time, UP required, reserved flags zero, AT only in registrations,
/// ED exactly when extensions follow, BE=0/BS=1 refused, BE constant per
/// credential, counters that do not increase refused (or reported), trailing
/// bytes refused, non-canonical COSE keys refused, and hashes always over the
/// clientDataJSON bytes received.
public struct RelyingPartyVerifier: Sendable {
    /// The policy.
    public let policy: RelyingPartyPolicy

    /// Set on the second pass of a registration whose chain no root
    /// anchors, when the policy accepts such attestations.
    var skipsChains = false

    /// A verifier.
    public init(policy: RelyingPartyPolicy) { self.policy = policy }

    func checkClientData(_ bytes: [UInt8], type: String, challenge: [UInt8]) throws(TokenMintError) -> CollectedClientData {
        guard challenge.count >= 16 else { throw TokenMintError(.webAuthn.challengeMismatch, "challenges must be at least 16 bytes") }
        let data = try CollectedClientData(parsing: bytes)
        guard data.type == type else { throw TokenMintError(.webAuthn.invalidClientData, "type is \(data.type), expected \(type)") }
        guard ConstantTime.equals(data.challenge, challenge) else { throw TokenMintError(.webAuthn.challengeMismatch, "the challenge is not the one issued") }
        if let consume = policy.consumeChallenge, !consume(challenge) {
            throw TokenMintError(.webAuthn.challengeMismatch, "the challenge was already used")
        }
        guard policy.origins.contains(data.origin) else { throw TokenMintError(.webAuthn.originMismatch, "origin \(data.origin) is not allowed") }
        if data.crossOrigin {
            guard policy.allowCrossOrigin else { throw TokenMintError(.webAuthn.originMismatch, "cross-origin calls are not allowed") }
        }
        if let top = data.topOrigin {
            guard data.crossOrigin, policy.allowCrossOrigin, policy.topOrigins.contains(top) else {
                throw TokenMintError(.webAuthn.originMismatch, "top origin \(top) is not allowed")
            }
        }
        return data
    }

    func checkFlags(_ data: AuthenticatorData) throws(TokenMintError) {
        guard ConstantTime.equals(data.rpIDHash, HashFunction.sha256.hash(Array(policy.rpID.utf8))) else {
            throw TokenMintError(.webAuthn.rpIDMismatch, "rpIdHash is not SHA-256 of \(policy.rpID)")
        }
        guard data.flags.contains(.userPresent) else { throw TokenMintError(.webAuthn.userNotPresent, "UP is not set") }
        if policy.requireUserVerification, !data.flags.contains(.userVerified) {
            throw TokenMintError(.webAuthn.userNotPresent, "UV is required")
        }
        if data.flags.contains(.backupState), !data.flags.contains(.backupEligible) {
            throw TokenMintError(.webAuthn.invalidBackupFlags, "BS is set without BE")
        }
    }

    /// Verifies a registration (attestation "none", "packed" self or with
    /// x5c, "fido-u2f", "tpm", "apple", "android-key", "android-safetynet", or
    /// "compound" of those;
    /// certificate chains end at
    /// the policy's attestation roots).
    /// `rawID`, the credential's `rawId` as the client sent it, must be the
    /// credential ID in the authenticator data when given.
    public func verifyRegistration(
        clientDataJSON: [UInt8], attestationObject: [UInt8], challenge: [UInt8], rawID: [UInt8]? = nil
    ) throws(TokenMintError) -> RegisteredCredential {
        _ = try checkClientData(clientDataJSON, type: "webauthn.create", challenge: challenge)
        let object = try AttestationObject(parsing: attestationObject)
        let data = object.authenticatorData
        try checkFlags(data)
        guard let credential = data.attestedCredential else {
            throw TokenMintError(.webAuthn.invalidAuthenticatorData, "a registration needs attested credential data (AT)")
        }
        if let rawID, !ConstantTime.equals(rawID, credential.credentialID) {
            throw TokenMintError(.webAuthn.invalidCredential, "rawId is not the credential ID in the authenticator data")
        }
        guard policy.algorithms.contains(credential.publicKey.algorithm) else {
            throw TokenMintError(.webAuthn.unsupportedAlgorithm, "algorithm \(credential.publicKey.algorithm) is not accepted")
        }
        let outputs = try AuthenticatorExtensionOutputs(data.extensions, ceremony: .registration)
        let signed = data.bytes + HashFunction.sha256.hash(clientDataJSON)
        var verifier = try withMetadata(aaguid: credential.aaguid, format: object.format)
        var trust: AttestationTrust = Self.hasCertificates(format: object.format, object.statement) ? .anchored : .uncertified
        do {
            try verifier.verifyStatement(format: object.format, object.statement, data: data, signed: signed, clientDataJSON: clientDataJSON,
                                         credential: credential)
        } catch where error.underlying is UnanchoredChain && policy.unanchoredAttestation == .accept {
            // Everything but the anchor is checked again, and must hold.
            verifier.skipsChains = true
            try verifier.verifyStatement(format: object.format, object.statement, data: data, signed: signed, clientDataJSON: clientDataJSON,
                                         credential: credential)
            trust = .unanchored
        }
        var registered = RegisteredCredential(
            credentialID: credential.credentialID, publicKey: credential.publicKey, signCount: data.signCount,
            backupEligible: data.flags.contains(.backupEligible), backupState: data.flags.contains(.backupState),
            userVerified: data.flags.contains(.userVerified), attestationFormat: object.format, aaguid: credential.aaguid)
        registered.extensionOutputs = outputs
        registered.attestationTrust = trust
        return registered
    }

    /// Whether an attestation statement carries certificates (anything but
    /// none and packed self attestation).
    static func hasCertificates(format: String, _ statement: CBOR) -> Bool {
        switch format {
        case "none": return false
        case "packed": return statement[.text("x5c")] != nil
        case "compound": return statement.arrayValue?.contains { hasCertificates(format: $0[.text("fmt")]?.textValue ?? "", $0[.text("attStmt")] ?? .map([])) } ?? false
        default: return true
        }
    }

    /// This verifier with the metadata's verdict on `aaguid` applied: an
    /// authenticator whose newest status report the metadata policy refuses
    /// is refused, one without an entry too when entries are required, and
    /// its statement's attestation roots anchor chains beside the policy's.
    func withMetadata(aaguid: [UInt8], format: String) throws(TokenMintError) -> RelyingPartyVerifier {
        guard let metadata = policy.metadata, format != "none" else { return self }
        guard let entry = metadata.entry(aaguid: aaguid) else {
            if policy.metadataPolicy.requireEntry {
                throw TokenMintError(.webAuthn.authenticatorRefused, "the metadata has no entry for AAGUID \(Hex.encode(aaguid))")
            }
            return self
        }
        if let status = entry.status, policy.metadataPolicy.refusedStatuses.contains(status) {
            throw TokenMintError(.webAuthn.authenticatorRefused, "the metadata reports \(status) for \(entry.description ?? Hex.encode(aaguid))")
        }
        var extended = policy
        extended.attestationRoots += entry.attestationRoots
        return RelyingPartyVerifier(policy: extended)
    }

    /// Verifies one attestation statement of `format`; `compound` (L3 §8.9)
    /// is two or more statements of other formats, each verified.
    func verifyStatement(
        format: String, _ statement: CBOR, data: AuthenticatorData, signed: [UInt8], clientDataJSON: [UInt8],
        credential: AuthenticatorData.AttestedCredential, nested: Bool = false
    ) throws(TokenMintError) {
        guard format == "compound" || statement.mapValue != nil else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the attStmt of \(format) is a map")
        }
        switch format {
        case "none":
            guard statement.mapValue?.isEmpty == true else { throw TokenMintError(.webAuthn.invalidAttestation, "a none attestation has an empty attStmt") }
        case "packed":
            try verifyPacked(statement, signed: signed, credential: credential)
        case "fido-u2f":
            try verifyFIDOU2F(statement, rpIDHash: data.rpIDHash, clientDataHash: HashFunction.sha256.hash(clientDataJSON), credential: credential)
        case "apple":
            try verifyApple(statement, signed: signed, credential: credential)
        case "android-safetynet":
            try verifySafetyNet(statement, signed: signed)
        case "tpm":
            try verifyTPM(statement, signed: signed, credential: credential)
        case "android-key":
            try verifyAndroidKey(statement, signed: signed, clientDataHash: HashFunction.sha256.hash(clientDataJSON), credential: credential)
        case "compound" where !nested:
            guard let entries = statement.arrayValue, (2...8).contains(entries.count) else {
                throw TokenMintError(.webAuthn.invalidAttestation, "a compound attStmt is an array of 2 to 8 statements")
            }
            for entry in entries {
                guard entry.mapValue?.count == 2, let inner = entry[.text("fmt")]?.textValue, let innerStatement = entry[.text("attStmt")] else {
                    throw TokenMintError(.webAuthn.invalidAttestation, "a compound entry is {fmt, attStmt}")
                }
                guard inner != "compound", inner != "none" else {
                    throw TokenMintError(.webAuthn.invalidAttestation, "a compound attestation holds no \(inner) statement")
                }
                try verifyStatement(format: inner, innerStatement, data: data, signed: signed, clientDataJSON: clientDataJSON,
                                    credential: credential, nested: true)
            }
        default:
            throw TokenMintError(.webAuthn.invalidAttestation, "attestation format \(format) is not supported")
        }
    }

    func verifyPacked(_ statement: CBOR, signed: [UInt8], credential: AuthenticatorData.AttestedCredential) throws(TokenMintError) {
        guard let entries = statement.mapValue, let alg = statement[.text("alg")]?.intValue,
            let signature = statement[.text("sig")]?.bytesValue
        else { throw TokenMintError(.webAuthn.invalidAttestation, "packed attStmt needs alg and sig") }
        if let chain = statement[.text("x5c")] {
            guard entries.count == 3, let certificates = chain.arrayValue, let leafBytes = certificates.first?.bytesValue else {
                throw TokenMintError(.webAuthn.invalidAttestation, "x5c must be a non-empty array of certificates")
            }
            guard let leaf = try? X509Certificate(derRepresentation: leafBytes) else {
                throw TokenMintError(.webAuthn.invalidAttestation, "the attestation certificate does not parse")
            }
            guard let algorithm = COSEAlgorithm(rawValue: alg), leaf.isValidSignature(signature, for: signed, hash: algorithm.hash) else {
                throw TokenMintError(.webAuthn.invalidAttestation, "the packed attestation signature does not verify with its certificate")
            }
            let intermediates = certificates.dropFirst().compactMap { $0.bytesValue }.compactMap { try? X509Certificate(derRepresentation: $0) }
            try checkChain(leaf, intermediates)
        } else {
            guard entries.count == 2 else { throw TokenMintError(.webAuthn.invalidAttestation, "packed self attestation is {alg, sig}") }
            guard alg == credential.publicKey.algorithm.rawValue else {
                throw TokenMintError(.webAuthn.invalidAttestation, "self attestation alg differs from the credential's")
            }
            guard credential.publicKey.isValidSignature(signature, for: signed) else {
                throw TokenMintError(.webAuthn.invalidAttestation, "the self attestation signature does not verify")
            }
        }
    }

    /// The fido-u2f attestation (WebAuthn §8.6): `{sig, x5c}` with exactly one
    /// certificate whose key is EC P-256, an ES256 credential, and `sig` over
    /// `0x00 ‖ rpIdHash ‖ clientDataHash ‖ credentialId ‖ 0x04 ‖ x ‖ y`. As for
    /// packed x5c, the certificate must chain to a configured root.
    func verifyFIDOU2F(
        _ statement: CBOR, rpIDHash: [UInt8], clientDataHash: [UInt8], credential: AuthenticatorData.AttestedCredential
    ) throws(TokenMintError) {
        guard let entries = statement.mapValue, entries.count == 2, let signature = statement[.text("sig")]?.bytesValue,
            let chain = statement[.text("x5c")]?.arrayValue, chain.count == 1, let leafBytes = chain[0].bytesValue
        else { throw TokenMintError(.webAuthn.invalidAttestation, "a fido-u2f attStmt is {sig, x5c} with exactly one certificate") }
        guard let leaf = try? X509Certificate(derRepresentation: leafBytes) else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the attestation certificate does not parse")
        }
        guard leaf.hasP256Key else { throw TokenMintError(.webAuthn.invalidAttestation, "a fido-u2f certificate's key is EC P-256") }
        guard credential.publicKey.algorithm == .es256, case .ec(let key) = credential.publicKey.material else {
            throw TokenMintError(.webAuthn.invalidAttestation, "a fido-u2f credential is an ES256 key")
        }
        let signed = [0x00] + rpIDHash + clientDataHash + credential.credentialID + [0x04] + key.x + key.y
        guard leaf.isValidSignature(signature, for: signed, hash: .sha256) else {
            throw TokenMintError(.webAuthn.invalidAttestation, "the fido-u2f attestation signature does not verify with its certificate")
        }
        try checkChain(leaf, [])
    }

    /// Verifies an assertion against a registered credential and its stored counter.
    public func verifyAssertion(
        credential: RegisteredCredential, storedSignCount: UInt32, clientDataJSON: [UInt8], authenticatorData: [UInt8],
        signature: [UInt8], challenge: [UInt8]
    ) throws(TokenMintError) -> AssertionResult {
        _ = try checkClientData(clientDataJSON, type: "webauthn.get", challenge: challenge)
        let data = try AuthenticatorData(parsing: authenticatorData)
        guard data.attestedCredential == nil else { throw TokenMintError(.webAuthn.invalidAuthenticatorData, "AT must not be set in an assertion") }
        try checkFlags(data)
        let outputs = try AuthenticatorExtensionOutputs(data.extensions, ceremony: .assertion)
        guard data.flags.contains(.backupEligible) == credential.backupEligible else {
            throw TokenMintError(.webAuthn.invalidBackupFlags, "BE changed since registration")
        }
        guard credential.publicKey.isValidSignature(signature, for: data.bytes + HashFunction.sha256.hash(clientDataJSON)) else {
            throw TokenMintError(.webAuthn.invalidSignature, "the assertion signature does not verify")
        }
        var clone = false
        if data.signCount != 0 || storedSignCount != 0, data.signCount <= storedSignCount {
            if policy.rejectSignCountRollback {
                throw TokenMintError(.webAuthn.signCountRollback, "signCount \(data.signCount) did not increase past \(storedSignCount)")
            }
            clone = true
        }
        return AssertionResult(signCount: data.signCount, userVerified: data.flags.contains(.userVerified),
                               backupState: data.flags.contains(.backupState), possibleClone: clone, extensionOutputs: outputs)
    }
}
