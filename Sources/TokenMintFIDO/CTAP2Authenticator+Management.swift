import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR
import TokenMintWebAuthn

extension CTAP2Authenticator {
    /// authenticatorCredentialManagement (CTAP 2.1 §6.8): subCommand (1),
    /// subCommandParams (2), pinUvAuthProtocol (3), pinUvAuthParam (4) over
    /// subCommand ‖ subCommandParams, with a token holding cm.
    func credentialManagement(_ p: CTAPParameters) async throws(TokenMintError) -> CBOR {
        guard let value = p.value(0x01) else { throw .ctap(.missingParameter, "subCommand is missing") }
        guard let subCommand = value.intValue, (0...255).contains(subCommand) else { throw .ctap(.cborUnexpectedType, "subCommand is a small integer") }
        let parameters = try p.optionalMap(0x02)
        switch subCommand {
        case 0x03: return try await nextRP()
        case 0x05: return try await nextCredential()
        case 0x01, 0x02, 0x04, 0x06, 0x07: break
        default: throw .ctap(.invalidSubcommand, "CredentialManagement subcommand \(subCommand) is not served")
        }
        guard let param = try p.optionalBytes(0x04) else { throw .ctap(.pinUvAuthTokenRequired, "credential management needs a PIN/UV auth token") }
        let version = try PINUVAuthProtocol.named(p.value(0x03))
        let message = [UInt8(subCommand)] + (parameters.map { CBOREncoder.encode($0) } ?? [])
        _ = try await state.useToken(version, param: param, message: message, permission: .credentialManagement, rpID: nil, bind: false)
        // A token bound to an RP serves only that RP's credentials (§6.8.2–§6.8.6), checked
        // before anything is looked up, so that it learns nothing of other RPs.
        let bound = await state.tokenRPID
        if subCommand <= 0x02, bound != nil { throw .ctap(.pinAuthInvalid, "a token bound to an RP serves only that RP's credentials") }
        var rpID: String?
        var credential: SoftwareAuthenticator.ResidentCredential?
        if subCommand == 0x04 {
            guard let hash = parameters?[.unsigned(0x01)]?.bytesValue else { throw .ctap(.missingParameter, "rpIDHash is missing") }
            if let bound, HashFunction.sha256.hash(Array(bound.utf8)) != hash { throw .ctap(.pinAuthInvalid, "the token is bound to another RP") }
            rpID = try await authenticator.residentRelyingParties().first { HashFunction.sha256.hash(Array($0.utf8)) == hash }
        } else if subCommand == 0x06 || subCommand == 0x07 {
            guard let descriptor = parameters?[.unsigned(0x02)], descriptor.mapValue != nil, let id = try CTAPParameters.bytes(descriptor, "id") else {
                throw .ctap(.missingParameter, "credentialID is missing")
            }
            credential = try await authenticator.residentCredential(id)
            if let bound, credential?.rpID != bound { throw .ctap(.pinAuthInvalid, "the token is bound to another RP") }
            rpID = credential?.rpID
        }
        switch subCommand {
        case 0x01:
            let count = try await authenticator.residentCredentialCount()
            return CTAPParameters.map([(0x01, .unsigned(UInt64(count))),
                                       (0x02, .unsigned(UInt64(max(0, authenticator.maximumResidentCredentials - count))))])
        case 0x02:
            let rps = try await authenticator.residentRelyingParties()
            guard let first = rps.first else { throw .ctap(.noCredentials, "no discoverable credentials") }
            await state.setCursor(rps: Array(rps.dropFirst()))
            return Self.rpEntry(first, total: rps.count)
        case 0x04:
            guard let rpID else { throw .ctap(.noCredentials, "no discoverable credentials for this RP") }
            let credentials = try await authenticator.residentCredentials(rpID: rpID)
            guard let first = credentials.first else { throw .ctap(.noCredentials, "no discoverable credentials for this RP") }
            await state.setCursor(credentials: Array(credentials.dropFirst()))
            return try Self.credentialEntry(first, total: credentials.count)
        case 0x06:
            guard let credential else { throw .ctap(.noCredentials, "no discoverable credential has this ID") }
            try await authenticator.deleteCredential(credential.credentialID)
            return .map([])
        default:
            guard let credential else { throw .ctap(.noCredentials, "no discoverable credential has this ID") }
            guard let user = parameters?[.unsigned(0x03)], user.mapValue != nil, let userID = try CTAPParameters.bytes(user, "id") else {
                throw .ctap(.missingParameter, "user is missing")
            }
            do {
                try await authenticator.updateUser(credentialID: credential.credentialID, userID: userID, name: try CTAPParameters.text(user, "name") ?? "",
                                                   displayName: try CTAPParameters.text(user, "displayName"))
            } catch where error.code == .webAuthn.invalidParameter {
                throw TokenMintError(.fido.ctap(.invalidParameter), error.reason, underlying: error)
            }
            return .map([])
        }
    }

    private func nextRP() async throws(TokenMintError) -> CBOR {
        guard let rpID = await state.popRP() else { throw .ctap(.notAllowed, "no RP enumeration is in progress") }
        return Self.rpEntry(rpID, total: nil)
    }

    private func nextCredential() async throws(TokenMintError) -> CBOR {
        guard let credential = await state.popCredential() else { throw .ctap(.notAllowed, "no credential enumeration is in progress") }
        return try Self.credentialEntry(credential, total: nil)
    }

    static func rpEntry(_ rpID: String, total: Int?) -> CBOR {
        var entries: [(UInt64, CBOR)] = [(0x03, .map([CBORMapEntry(key: .text("id"), value: .text(rpID))])),
                                         (0x04, .bytes(HashFunction.sha256.hash(Array(rpID.utf8))))]
        if let total { entries.append((0x05, .unsigned(UInt64(total)))) }
        return CTAPParameters.map(entries)
    }

    static func credentialEntry(_ credential: SoftwareAuthenticator.ResidentCredential, total: Int?) throws(TokenMintError) -> CBOR {
        var user = [CBORMapEntry(key: .text("id"), value: .bytes(credential.userID))]
        if !credential.userName.isEmpty { user.append(CBORMapEntry(key: .text("name"), value: .text(credential.userName))) }
        if let display = credential.userDisplayName { user.append(CBORMapEntry(key: .text("displayName"), value: .text(display))) }
        let key: CBOR
        do { key = try CBORDecoder.decode(credential.publicKey.cbor) } catch { throw TokenMintError(.fido.ctap(.other), "the public key", underlying: error) }
        var entries: [(UInt64, CBOR)] = [
            (0x06, .map(user)),
            (0x07, .map([CBORMapEntry(key: .text("id"), value: .bytes(credential.credentialID)),
                         CBORMapEntry(key: .text("type"), value: .text("public-key"))])),
            (0x08, key),
            (0x0A, .unsigned(UInt64(credential.protection.rawValue))),
        ]
        if let total { entries.append((0x09, .unsigned(UInt64(total)))) }
        if let blobKey = credential.largeBlobKey { entries.append((0x0B, .bytes(blobKey.withUnsafeBytes { Array($0) }))) }
        return CTAPParameters.map(entries)
    }
}

extension ClientPINState {
    func setCursor(rps: [String]) {
        discardCursors()
        remainingRPs = rps
        cursorDeadline = .now + Self.cursorLifetime
    }
    func setCursor(credentials: [SoftwareAuthenticator.ResidentCredential]) {
        discardCursors()
        remainingCredentials = credentials
        cursorDeadline = .now + Self.cursorLifetime
    }
    func popRP() -> String? {
        if ContinuousClock.now > cursorDeadline { discardCursors() }
        return remainingRPs.isEmpty ? nil : remainingRPs.removeFirst()
    }
    func popCredential() -> SoftwareAuthenticator.ResidentCredential? {
        if ContinuousClock.now > cursorDeadline { discardCursors() }
        return remainingCredentials.isEmpty ? nil : remainingCredentials.removeFirst()
    }
    /// Ends an enumeration: what it had not returned yet is forgotten.
    func discardCursors() {
        remainingRPs = []
        remainingCredentials = []
    }
}
