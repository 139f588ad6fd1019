/// The environments a device can be enrolled in; switching needs a reset.
public enum WhitelabelPayEnvironment: String, Sendable, Hashable, CaseIterable {
    /// Development backend.
    case development
    /// Integration backend.
    case integration
    /// Production backend.
    case production
}

/// A source of time in seconds since the epoch (injectable for tests).
public struct WhitelabelPayClock: Sendable {
    /// The current time.
    public let now: @Sendable () -> Int64
    /// A clock.
    public init(now: @escaping @Sendable () -> Int64) { self.now = now }

    /// The system clock.
    public static let system = WhitelabelPayClock { Int64(Date().timeIntervalSince1970) }
}

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
        self.tenantID = WhitelabelPayFormat.isUUID(tenantID) ? tenantID.lowercased() : tenantID
        self.referenceID = referenceID.lowercased()
        self.environment = environment
        self.authorizedParty = authorizedParty
        self.debug = debug
        self.offlineTokenLimit = offlineTokenLimit
        self.tokenLifetime = tokenLifetime
    }
}

/// A payment means known to the device.
public struct PaymentMeans: Sendable, Hashable, Codable {
    /// Its identifier (characters `[A-Za-z0-9-]`, at most 64).
    public let id: String
    /// Whether it is active (one is, at most).
    public var isActive: Bool

    /// A payment means.
    public init(id: String, isActive: Bool) {
        self.id = id
        self.isActive = isActive
    }

    /// Whether `id` is a valid payment means identifier: 1 to 64 characters of `[A-Za-z0-9-]`.
    public static func isValidID(_ id: some StringProtocol) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == UInt8(ascii: "-") }
    }
}

/// The backend the SDK talks to; the host implements it (HTTP, a test double, …).
public protocol WhitelabelPayBackend: Sendable {
    /// Registers the enrolment token; returns the server time.
    func enrol(_ token: EnrolmentToken) async throws -> Int64
    /// Issues the unsigned part of a payment token for a payment means; returns it with the server time.
    func issueUnsignedToken(paymentMeansID: String) async throws -> (unsigned: String, serverTime: Int64)
    /// Deactivates a payment means.
    func deactivate(paymentMeansID: String) async throws
}

/// A stand-in backend that lives on the device: it accepts enrolments and
/// issues unsigned parts `on.<meansId>.<random>` with the local time. Used by
/// the CLI, the demo and the tests; a real deployment supplies its own.
public struct LocalBackend: WhitelabelPayBackend {
    /// The time the stand-in reports.
    public let clock: WhitelabelPayClock
    /// The unsigned part it hands out, when the host was given one by the
    /// real issuer (e.g. `PaymentTokenVerifier.issueOnlinePart`); otherwise
    /// it invents one, which a strict verifier refuses.
    public let unsignedPart: String?

    /// A stand-in backend.
    public init(clock: WhitelabelPayClock, unsignedPart: String? = nil) {
        self.clock = clock
        self.unsignedPart = unsignedPart
    }

    /// Accepts any enrolment.
    public func enrol(_ token: EnrolmentToken) async throws -> Int64 { clock.now() }

    /// ``unsignedPart``, or `on.<meansId>.<16 random base64url characters>`.
    public func issueUnsignedToken(paymentMeansID: String) async throws -> (unsigned: String, serverTime: Int64) {
        (unsignedPart ?? "on.\(paymentMeansID).\(B64.random(12))", clock.now())
    }

    /// Accepts any deactivation.
    public func deactivate(paymentMeansID: String) async throws {}
}

public import TokenMintCore
import TokenMintCrypto
import Foundation

enum B64 {
    static func random(_ bytes: Int) -> String { Base64URL.encode(SecureRandom.bytes(count: bytes)) }
}
