import TokenMintCrypto
import TokenMintCBOR
import TokenMintWebAuthn

/// The relying party of the W3C WebAuthn L3 test vectors, trusting their
/// attestation root (Fuzz/Data/attestation-root.der) so packed x5c
/// statements reach the chain check.
nonisolated(unsafe) var relyingParty: RelyingPartyVerifier?

func prepareFixtures() {
    prepareJOSEFixtures()
    var policy = RelyingPartyPolicy(rpID: "example.org", origins: ["https://example.org"])
    policy.allowCrossOrigin = true
    policy.topOrigins = ["https://example.com"]
    if let root = dataFile("attestation-root.der") { policy.attestationRoots = [root] }
    relyingParty = RelyingPartyVerifier(policy: policy)
    preparePayFixtures()
}

/// CBOR: strict and lenient decoding; a strictly decoded item re-encodes to
/// the input; a leniently decoded one encodes to canonical CBOR (which the
/// strict decoder takes and which re-encodes to itself).
func fuzzCBOR(_ input: [UInt8]) {
    if let item = try? CBORDecoder.decode(input) {
        guard CBOREncoder.encode(item) == input else { violated("canonical CBOR does not re-encode to its input") }
    }
    if let item = try? CBORDecoder.decode(input, requireCanonical: false, allowTrailingBytes: true) {
        let encoded = CBOREncoder.encode(item)
        guard let again = try? CBORDecoder.decode(encoded) else { violated("the encoder wrote CBOR the strict decoder refuses") }
        guard CBOREncoder.encode(again) == encoded else { violated("canonical CBOR changed in decode → encode") }
    }
    _ = try? CBORDecoder.decodePrefix(input[...], requireCanonical: false)
}

/// COSE keys: a parsed key re-encodes to the same key, and checks a signature
/// without trapping.
func fuzzCOSEKey(_ input: [UInt8]) {
    guard let key = try? COSEKey(cbor: input) else { return }
    guard let again = try? COSEKey(cbor: key.cbor), again == key else { violated("a COSE key does not survive its own encoding") }
    _ = key.isValidSignature(Array(input.prefix(64)), for: input)
}

/// authenticatorData and attestationObject parsing; parsed authenticator
/// data rebuilds to the same bytes.
func fuzzAuthenticatorData(_ input: [UInt8]) {
    if let data = try? AuthenticatorData(parsing: input) {
        let rebuilt = AuthenticatorData(
            rpIDHash: data.rpIDHash, flags: data.flags, signCount: data.signCount,
            attestedCredential: data.attestedCredential, extensions: data.extensions)
        guard rebuilt.bytes == input else { violated("authenticator data does not rebuild to its input") }
    }
    if let object = try? AttestationObject(parsing: input) {
        let rebuilt = AttestationObject(format: object.format, statement: object.statement, authenticatorData: object.authenticatorData)
        guard rebuilt.bytes == input else { violated("an attestation object does not rebuild to its input") }
    }
}

/// clientDataJSON parsing; what parses survives its own serialization.
func fuzzClientData(_ input: [UInt8]) {
    guard let data = try? CollectedClientData(parsing: input) else { return }
    guard let again = try? CollectedClientData(parsing: data.json), again == data else {
        violated("client data does not survive its own serialization")
    }
}

/// A whole registration: `len16 clientDataJSON ‖ attestationObject`. The
/// expected challenge is the one the client data carries, so inputs get past
/// the challenge check to the attestation statement.
func fuzzRegistration(_ input: [UInt8]) {
    var rest = input[...]
    guard let clientData = takeChunk(&rest), let relyingParty else { return }
    let challenge = (try? CollectedClientData(parsing: clientData))?.challenge ?? Array(repeating: 0, count: 16)
    _ = try? relyingParty.verifyRegistration(clientDataJSON: clientData, attestationObject: Array(rest), challenge: challenge)
}

/// A registration followed by an assertion with its credential:
/// `len16 attestationObject ‖ len16 clientDataJSON ‖ len16 authenticatorData ‖ signature`.
func fuzzAssertion(_ input: [UInt8]) {
    var rest = input[...]
    guard let attestation = takeChunk(&rest), let clientData = takeChunk(&rest), let authenticatorData = takeChunk(&rest),
        let relyingParty, let object = try? AttestationObject(parsing: attestation),
        let attested = object.authenticatorData.attestedCredential
    else { return }
    let credential = RegisteredCredential(
        credentialID: attested.credentialID, publicKey: attested.publicKey, signCount: 0,
        backupEligible: object.authenticatorData.flags.contains(.backupEligible),
        backupState: object.authenticatorData.flags.contains(.backupState),
        userVerified: object.authenticatorData.flags.contains(.userVerified),
        attestationFormat: object.format, aaguid: attested.aaguid)
    let challenge = (try? CollectedClientData(parsing: clientData))?.challenge ?? Array(repeating: 0, count: 16)
    for stored: UInt32 in [0, 1] {
        _ = try? relyingParty.verifyAssertion(
            credential: credential, storedSignCount: stored, clientDataJSON: clientData,
            authenticatorData: authenticatorData, signature: Array(rest), challenge: challenge)
    }
}
