public import TokenMintCore
import TokenMintCrypto

/// Header members for signing, besides `alg`.
public struct JWSHeaderFields: Sendable {
    /// `kid`; defaults to the signing key's `kid`.
    public var keyID: String?
    /// `typ`, such as "JWT" or "at+jwt".
    public var type: String?
    /// `cty`.
    public var contentType: String?
    /// RFC 7797: carry the payload unencoded (`b64: false`, listed in `crit`).
    public var unencodedPayload = false
    /// Further members (must not repeat the ones above).
    public var additional = JSONObject()
    /// Further `crit` entries (their members must be in `additional`).
    public var critical: [String] = []

    /// Header fields.
    public init(keyID: String? = nil, type: String? = nil, contentType: String? = nil, unencodedPayload: Bool = false) {
        self.keyID = keyID
        self.type = type
        self.contentType = contentType
        self.unencodedPayload = unencodedPayload
    }
}
