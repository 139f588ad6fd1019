public import TokenMintCore

/// An OATH session with the OATH application of a ``FIDOConnection``, in
/// YubiKit's shape: methods take their arguments and return parsed results.
/// Obtain one with `try await connection.oathSession()`.
///
/// Opening any other session on the connection (OATH or FIDO2), or closing
/// the connection, ends this one: its calls then throw `.fido.sessionClosed`.
///
/// ```swift
/// let oath = try await connection.oathSession()
/// try await oath.put(try OTPAuthURI.parse("otpauth://totp/Example:alice?secret=JBSWY3DPEHPK3PXP&issuer=Example"))
/// let code = try await oath.calculate("Example:alice")   // now; or calculate(name, time: unixSeconds)
/// ```
public struct OATHSession: Sendable {
    let connection: any FIDOConnection
    let application: OATHApplication
    let generation: Int

    /// Stores `credential`, replacing one of the same name.
    public func put(_ credential: OATHCredential) async throws(TokenMintError) {
        try check()
        try await application.put(credential)
    }

    /// Every credential (no secrets; a HOTP credential with its next counter).
    public func list() async throws(TokenMintError) -> [OATHCredential.Info] {
        try check()
        return try await application.list()
    }

    /// The code of the credential named `name`: TOTP at `time` (Unix
    /// seconds; now when `nil`), HOTP at its counter (moved on durably first).
    public func calculate(_ name: String, time: Int64? = nil) async throws(TokenMintError) -> OATHCode {
        try check()
        return try await application.calculate(name, time: time)
    }

    /// Every credential with its TOTP code at `time`; touch- or
    /// verification-required credentials and HOTP ones come without a code.
    public func calculateAll(time: Int64? = nil) async throws(TokenMintError) -> [(credential: OATHCredential.Info, code: OATHCode?)] {
        try check()
        return try await application.calculateAll(time: time)
    }

    /// Deletes the credential named `name`.
    public func delete(_ name: String) async throws(TokenMintError) {
        try check()
        try await application.delete(name)
    }

    /// Renames the credential named `name` to `issuer:account` (or `account`).
    public func rename(_ name: String, issuer: String?, account: String) async throws(TokenMintError) {
        try check()
        try await application.rename(name, issuer: issuer, account: account)
    }

    /// Deletes every credential.
    public func reset() async throws(TokenMintError) {
        try check()
        try await application.reset()
    }

    /// Throws `.fido.sessionClosed` unless this is the connection's current session.
    func check() throws(TokenMintError) {
        try connection.sessions.check(generation)
    }
}
