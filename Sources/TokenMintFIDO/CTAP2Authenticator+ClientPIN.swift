import TokenMintCore
import TokenMintCrypto
import TokenMintCBOR
import TokenMintWebAuthn

extension CTAP2Authenticator {
    /// authenticatorClientPIN (CTAP 2.1 §6.5.5): parameters pinUvAuthProtocol
    /// (1), subCommand (2), keyAgreement (3), pinUvAuthParam (4), newPinEnc
    /// (5), pinHashEnc (6), permissions (9), rpId (10).
    func clientPIN(_ p: CTAPParameters) async throws(TokenMintError) -> CBOR {
        guard let value = p.value(0x02) else { throw .ctap(.missingParameter, "subCommand is missing") }
        guard let subCommand = value.intValue else { throw .ctap(.cborUnexpectedType, "subCommand is an integer") }
        switch subCommand {
        case 0x01:  // getPINRetries
            return CTAPParameters.map([(0x03, .unsigned(UInt64(try await state.retries()))), (0x04, .bool(await state.powerCycleRequired))])
        case 0x07:  // getUVRetries
            guard authenticator.supportsUserVerification else { throw .ctap(.invalidSubcommand, "no built-in user verification") }
            return CTAPParameters.map([(0x05, .unsigned(UInt64(try await authenticator.userVerificationRetries())))])
        case 0x02, 0x03, 0x04, 0x05, 0x06, 0x09: break
        default: throw .ctap(.invalidSubcommand, "ClientPIN subcommand \(subCommand) is not served")
        }
        let version = try PINUVAuthProtocol.named(p.value(0x01))
        if subCommand == 0x02 { return CTAPParameters.map([(0x01, try await state.keyAgreementKey())]) }
        guard let peer = p.value(0x03) else { throw .ctap(.missingParameter, "keyAgreement is missing") }
        switch subCommand {
        case 0x03:  // setPIN
            try await state.setPIN(version, peer: peer, newPinEnc: try p.bytes(0x05), pinUvAuthParam: try p.bytes(0x04))
            return .map([])
        case 0x04:  // changePIN
            try await state.changePIN(version, peer: peer, pinHashEnc: try p.bytes(0x06), newPinEnc: try p.bytes(0x05), pinUvAuthParam: try p.bytes(0x04))
            return .map([])
        case 0x05:  // getPinToken: mc and ga, no RP
            guard p.value(0x09) == nil, p.value(0x0A) == nil else { throw .ctap(.invalidParameter, "getPinToken takes no permissions or rpId") }
            let token = try await state.pinToken(version, peer: peer, pinHashEnc: try p.bytes(0x06), permissions: [.makeCredential, .getAssertion], rpID: nil)
            try await authenticator.restoreUserVerificationRetries()
            return CTAPParameters.map([(0x02, .bytes(token))])
        default:  // 0x06 getPinUvAuthTokenUsingUvWithPermissions, 0x09 …UsingPinWithPermissions
            let permissions = try Self.permissions(p)
            let rpID = try p.value(0x0A).map { (value) throws(TokenMintError) -> String in
                guard let text = value.textValue else { throw .ctap(.cborUnexpectedType, "rpId is a text string") }
                return text
            }
            let token: [UInt8]
            if subCommand == 0x09 {
                token = try await state.pinToken(version, peer: peer, pinHashEnc: try p.bytes(0x06), permissions: permissions, rpID: rpID)
                // A correct PIN unblocks built-in user verification (CTAP 2.1 §6.5.5.7).
                try await authenticator.restoreUserVerificationRetries()
            } else {
                guard authenticator.supportsUserVerification else { throw .ctap(.invalidSubcommand, "no built-in user verification") }
                do { try await authenticator.confirmUserVerification(for: "getPinUvAuthToken", rpID: rpID) } catch {
                    if error.code == .webAuthn.userVerificationBlocked || error.code == .webAuthn.other { throw error }
                    throw TokenMintError(.fido.ctap(.userVerificationInvalid), "user verification failed", underlying: error)
                }
                token = try await state.uvToken(version, peer: peer, permissions: permissions, rpID: rpID)
            }
            return CTAPParameters.map([(0x02, .bytes(token))])
        }
    }

    /// The permissions parameter: present, non-zero, and only what is served.
    private static func permissions(_ p: CTAPParameters) throws(TokenMintError) -> PINUVAuthPermissions {
        guard let value = p.value(0x09) else { throw .ctap(.missingParameter, "permissions are missing") }
        guard let bits = value.intValue else { throw .ctap(.cborUnexpectedType, "permissions are an integer") }
        guard bits != 0 else { throw .ctap(.invalidParameter, "permissions must not be 0") }
        guard bits > 0, bits <= 0xFF, PINUVAuthPermissions.served.isSuperset(of: PINUVAuthPermissions(rawValue: UInt8(bits))) else {
            throw .ctap(.unauthorizedPermission, "only mc, ga and cm are granted")
        }
        return PINUVAuthPermissions(rawValue: UInt8(bits))
    }
}
