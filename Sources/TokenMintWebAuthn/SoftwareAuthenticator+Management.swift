public import TokenMintCore
public import TokenMintCrypto
import TokenMintStore
import Foundation

extension SoftwareAuthenticator {
    /// A discoverable credential as credential management lists it (CTAP 2.1 §6.8).
    public struct ResidentCredential: Sendable {
        /// The credential ID.
        public let credentialID: [UInt8]
        /// The RP ID.
        public let rpID: String
        /// The user handle.
        public let userID: [UInt8]
        /// The user name.
        public let userName: String
        /// The user's display name.
        public let userDisplayName: String?
        /// The credential public key.
        public let publicKey: COSEKey
        /// Its credProtect level.
        public let protection: CredentialProtection
        /// Its large-blob key, when it has one.
        public let largeBlobKey: SecureBytes?
    }

    /// How many discoverable credentials are kept, over every RP.
    public func residentCredentialCount() throws(TokenMintError) -> Int {
        Int(try storeCall { tx in try tx.counter(SoftwareAuthenticator.residentCountName) })
    }

    /// The RP IDs that have discoverable credentials (those made since the
    /// list was kept: stores written by an older TokenMint list only newer RPs).
    public func residentRelyingParties() throws(TokenMintError) -> [String] {
        try storeCall { tx in try SoftwareAuthenticator.relyingParties(in: tx) }
    }

    /// The discoverable credentials of `rpID`, oldest first.
    public func residentCredentials(rpID: String) throws(TokenMintError) -> [ResidentCredential] {
        var found: [ResidentCredential] = []
        for id in try residentIDs(rpID) {
            if let credential = try residentCredential(id) { found.append(credential) }
        }
        return found
    }

    /// The discoverable credential with this ID, if there is one.
    public func residentCredential(_ id: [UInt8]) throws(TokenMintError) -> ResidentCredential? {
        guard id.count <= 1023, let record = try loadRecord(id), record.resident else { return nil }
        let (key, largeBlobKey) = try storeCall { tx in
            (try tx.secret(SoftwareAuthenticator.name("key", id)), try tx.secret(SoftwareAuthenticator.largeBlobKeyName(id)))
        }
        guard let key else { throw TokenMintError(.webAuthn.invalidCredential, "the credential key is missing") }
        let publicKey: COSEKey
        do {
            publicKey = record.algorithm == COSEAlgorithm.edDSA.rawValue
                ? COSEKey(try Ed25519.PrivateKey(rawRepresentation: key).publicKey)
                : try COSEKey(try ECDSA.PrivateKey(rawRepresentation: key, curve: .p256).publicKey)
        } catch { throw TokenMintError(.webAuthn.other, "the credential key does not open", underlying: error) }
        return ResidentCredential(
            credentialID: id, rpID: record.rpID, userID: record.userID, userName: record.userName, userDisplayName: record.userDisplayName,
            publicKey: publicKey, protection: record.credProtect.flatMap(CredentialProtection.init(rawValue:)) ?? .userVerificationOptional,
            largeBlobKey: largeBlobKey)
    }

    /// Deletes a discoverable credential; `noCredentials` when there is none with this ID.
    public func deleteCredential(_ credentialID: [UInt8]) throws(TokenMintError) {
        guard let record = try loadRecord(credentialID), record.resident else {
            throw TokenMintError(.webAuthn.noCredentials, "no discoverable credential has this ID")
        }
        let index = SoftwareAuthenticator.rpIndex(record.rpID)
        try storeCall { tx in
            for kind in ["meta", "key", "hmac", "lbk", "count"] { try tx.remove(SoftwareAuthenticator.name(kind, credentialID)) }
            var ids = try SoftwareAuthenticator.residentIDs(record.rpID, in: tx)
            ids.removeAll { $0 == credentialID }
            if ids.isEmpty {
                try tx.remove(index)
                let rps = try SoftwareAuthenticator.relyingParties(in: tx).filter { $0 != record.rpID }
                try tx.setValue(SoftwareAuthenticator.rpListName, Array(try JSONEncoder().encode(rps)))
            } else {
                try tx.setValue(index, Array(try JSONEncoder().encode(ids)))
            }
            let count = try tx.counter(SoftwareAuthenticator.residentCountName)
            try tx.setCounter(SoftwareAuthenticator.residentCountName, max(0, count - 1))
        }
        forget(credentialID)
        discardPendingAssertions()
    }

    /// Replaces the user name and display name of a discoverable credential;
    /// the user handle must be the credential's (`invalidParameter` otherwise).
    public func updateUser(credentialID: [UInt8], userID: [UInt8], name: String, displayName: String?) throws(TokenMintError) {
        guard var record = try loadRecord(credentialID), record.resident else {
            throw TokenMintError(.webAuthn.noCredentials, "no discoverable credential has this ID")
        }
        guard record.userID == userID else { throw TokenMintError(.webAuthn.invalidParameter, "the user handle is not the credential's") }
        guard name.utf8.count <= 256, (displayName?.utf8.count ?? 0) <= 256 else {
            throw TokenMintError(.webAuthn.invalidParameter, "user names are at most 256 bytes")
        }
        record.userName = name
        record.userDisplayName = displayName
        guard let data = try? JSONEncoder().encode(record) else { throw TokenMintError(.webAuthn.other, "cannot encode the credential record") }
        try storeCall { tx in try tx.setValue(SoftwareAuthenticator.name("meta", credentialID), Array(data)) }
        replaceRecord(credentialID, with: record)
    }

    /// The resident credential IDs of `rpID`, oldest first.
    func residentIDs(_ rpID: String) throws(TokenMintError) -> [[UInt8]] {
        try storeCall { tx in try SoftwareAuthenticator.residentIDs(rpID, in: tx) }
    }

    /// The resident credential IDs of `rpID` (its index), in a transaction.
    static func residentIDs(_ rpID: String, in tx: any StoreTransaction) throws -> [[UInt8]] {
        (try tx.value(rpIndex(rpID))).flatMap { try? JSONDecoder().decode([[UInt8]].self, from: Data($0)) } ?? []
    }

    /// The RP list, in a transaction.
    static func relyingParties(in tx: any StoreTransaction) throws -> [String] {
        (try tx.value(rpListName)).flatMap { try? JSONDecoder().decode([String].self, from: Data($0)) } ?? []
    }
}
