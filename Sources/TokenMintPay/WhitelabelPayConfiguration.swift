public import TokenMintCore
import TokenMintCrypto
import Foundation

/// The SDK configuration.
public struct WhitelabelPayConfiguration: Sendable {
    /// The tenant UUID.
    public let tenantID: String
    /// The reference (installation) UUID.
    public let referenceID: String
    /// The backend environment.
    public let environment: WhitelabelPayEnvironment
    /// The JWT authorized party (`azp`) the backend expects.
    public let authorizedParty: String?
    /// Enables log export.
    public let debug: Bool
    /// Payment tokens that may be minted offline before reconnecting.
    public let offlineTokenLimit: Int
    /// How long a payment token is valid, in seconds (10 minutes by default).
    public let tokenLifetime: Int64

    /// Validates and creates a configuration.
    /// - Parameters:
    ///   - tenantID: The tenant, a UUID string.
    ///   - referenceID: The device installation, a UUID string.
    ///   - environment: The backend environment; switching it needs a reset.
    ///   - authorizedParty: The `azp` the backend's JWTs carry, if any.
    ///   - debug: Whether the SDK writes a debug log (see `exportLogs()`).
    ///   - offlineTokenLimit: Tokens that may be minted offline (0 to 100,000).
    ///   - tokenLifetime: How long a payment token is valid, in seconds (30 s to a day).
    ///   - allowLegacyTenantCodes: Accept the 3-character tenant codes older Android SDKs used.
    public init(
        tenantID: String, referenceID: String, environment: WhitelabelPayEnvironment = .production,
        authorizedParty: String? = nil, debug: Bool = false, offlineTokenLimit: Int = 10, tokenLifetime: Int64 = 600,
        allowLegacyTenantCodes: Bool = false
    ) throws(TokenMintError) {
        let legacy = allowLegacyTenantCodes && tenantID.utf8.count == 3
            && tenantID.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) }
        guard WhitelabelPayFormat.isUUID(tenantID) || legacy else {
            throw TokenMintError(.pay.invalidConfiguration, "tenantID must be a UUID string")
        }
        guard WhitelabelPayFormat.isUUID(referenceID) else {
            throw TokenMintError(.pay.invalidConfiguration, "referenceID must be a UUID string")
        }
        guard (0...100_000).contains(offlineTokenLimit) else {
            throw TokenMintError(.pay.invalidConfiguration, "offlineTokenLimit must be 0 to 100000")
        }
        guard (30...86_400).contains(tokenLifetime) else {
            throw TokenMintError(.pay.invalidConfiguration, "tokenLifetime must be 30 s to 1 day")
        }
        if let authorizedParty {
            guard (1...255).contains(authorizedParty.utf8.count), authorizedParty.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
                throw TokenMintError(.pay.invalidConfiguration, "authorizedParty must be 1 to 255 bytes without control characters")
            }
        }
        self.tenantID = WhitelabelPayFormat.isUUID(tenantID) ? tenantID.lowercased() : tenantID
        self.referenceID = referenceID.lowercased()
        self.environment = environment
        self.authorizedParty = authorizedParty
        self.debug = debug
        self.offlineTokenLimit = offlineTokenLimit
        self.tokenLifetime = tokenLifetime
    }
}


enum B64 {
    static func random(_ bytes: Int) -> String { Base64URL.encode(SecureRandom.bytes(count: bytes)) }
}
