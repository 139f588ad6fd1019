public import TokenMintCore
import TokenMintCrypto
public import TokenMintCBOR

/// The attestation object `{"fmt": …, "attStmt": {…}, "authData": bytes}`.
public struct AttestationObject: Sendable, Hashable {
    /// "none" or "packed".
    public let format: String
    /// The attestation statement.
    public let statement: CBOR
    /// The authenticator data.
    public let authenticatorData: AuthenticatorData
    /// The encoded object.
    public let bytes: [UInt8]

    /// Builds an attestation object (canonical key order: fmt, attStmt, authData).
    public init(format: String, statement: CBOR, authenticatorData: AuthenticatorData) {
        self.format = format
        self.statement = statement
        self.authenticatorData = authenticatorData
        self.bytes = CBOREncoder.encode(.map([
            CBORMapEntry(key: .text("fmt"), value: .text(format)),
            CBORMapEntry(key: .text("attStmt"), value: statement),
            CBORMapEntry(key: .text("authData"), value: .bytes(authenticatorData.bytes)),
        ]))
    }

    /// Parses strictly: canonical CBOR, exactly the three members, no trailing bytes.
    public init(parsing bytes: [UInt8]) throws(TokenMintError) {
        let item: CBOR
        do { item = try CBORDecoder.decode(bytes, requireCanonical: true) } catch {
            throw TokenMintError(.webAuthn.invalidAttestation, "attestationObject: \(error)", underlying: error)
        }
        guard let entries = item.mapValue, entries.count == 3, let format = item[.text("fmt")]?.textValue,
            let statement = item[.text("attStmt")], statement.mapValue != nil || statement.arrayValue != nil, let authData = item[.text("authData")]?.bytesValue
        else { throw TokenMintError(.webAuthn.invalidAttestation, "attestationObject must be {fmt, attStmt, authData}") }
        self.format = format
        self.statement = statement
        self.authenticatorData = try AuthenticatorData(parsing: authData)
        self.bytes = bytes
    }
}
