public import TokenMintCore
import TokenMintWebAuthn

/// The CTAP status codes (CTAP 2.1 §8.2): the first byte of every CTAP2
/// response, and the error codes of CTAPHID's ERROR command.
public enum CTAP2Status: UInt8, Sendable, Hashable, CaseIterable {
    /// CTAP1_ERR_SUCCESS / CTAP2_OK.
    case ok = 0x00
    /// CTAP1_ERR_INVALID_COMMAND.
    case invalidCommand = 0x01
    /// CTAP1_ERR_INVALID_PARAMETER.
    case invalidParameter = 0x02
    /// CTAP1_ERR_INVALID_LENGTH.
    case invalidLength = 0x03
    /// CTAP1_ERR_INVALID_SEQ.
    case invalidSequence = 0x04
    /// CTAP1_ERR_TIMEOUT.
    case timeout = 0x05
    /// CTAP1_ERR_CHANNEL_BUSY.
    case channelBusy = 0x06
    /// CTAP1_ERR_LOCK_REQUIRED.
    case lockRequired = 0x0A
    /// CTAP1_ERR_INVALID_CHANNEL.
    case invalidChannel = 0x0B
    /// CTAP2_ERR_CBOR_UNEXPECTED_TYPE.
    case cborUnexpectedType = 0x11
    /// CTAP2_ERR_INVALID_CBOR.
    case invalidCBOR = 0x12
    /// CTAP2_ERR_MISSING_PARAMETER.
    case missingParameter = 0x14
    /// CTAP2_ERR_LIMIT_EXCEEDED.
    case limitExceeded = 0x15
    /// CTAP2_ERR_CREDENTIAL_EXCLUDED.
    case credentialExcluded = 0x19
    /// CTAP2_ERR_PROCESSING.
    case processing = 0x21
    /// CTAP2_ERR_INVALID_CREDENTIAL.
    case invalidCredential = 0x22
    /// CTAP2_ERR_USER_ACTION_PENDING.
    case userActionPending = 0x23
    /// CTAP2_ERR_OPERATION_PENDING.
    case operationPending = 0x24
    /// CTAP2_ERR_NO_OPERATIONS.
    case noOperations = 0x25
    /// CTAP2_ERR_UNSUPPORTED_ALGORITHM.
    case unsupportedAlgorithm = 0x26
    /// CTAP2_ERR_OPERATION_DENIED.
    case operationDenied = 0x27
    /// CTAP2_ERR_KEY_STORE_FULL.
    case keyStoreFull = 0x28
    /// CTAP2_ERR_UNSUPPORTED_OPTION.
    case unsupportedOption = 0x2B
    /// CTAP2_ERR_INVALID_OPTION.
    case invalidOption = 0x2C
    /// CTAP2_ERR_KEEPALIVE_CANCEL.
    case keepaliveCancel = 0x2D
    /// CTAP2_ERR_NO_CREDENTIALS.
    case noCredentials = 0x2E
    /// CTAP2_ERR_USER_ACTION_TIMEOUT.
    case userActionTimeout = 0x2F
    /// CTAP2_ERR_NOT_ALLOWED.
    case notAllowed = 0x30
    /// CTAP2_ERR_PIN_INVALID.
    case pinInvalid = 0x31
    /// CTAP2_ERR_PIN_BLOCKED.
    case pinBlocked = 0x32
    /// CTAP2_ERR_PIN_AUTH_INVALID.
    case pinAuthInvalid = 0x33
    /// CTAP2_ERR_PIN_AUTH_BLOCKED.
    case pinAuthBlocked = 0x34
    /// CTAP2_ERR_PIN_NOT_SET.
    case pinNotSet = 0x35
    /// CTAP2_ERR_PUAT_REQUIRED.
    case pinUvAuthTokenRequired = 0x36
    /// CTAP2_ERR_PIN_POLICY_VIOLATION.
    case pinPolicyViolation = 0x37
    /// CTAP2_ERR_REQUEST_TOO_LARGE.
    case requestTooLarge = 0x39
    /// CTAP2_ERR_ACTION_TIMEOUT.
    case actionTimeout = 0x3A
    /// CTAP2_ERR_UP_REQUIRED.
    case userPresenceRequired = 0x3B
    /// CTAP2_ERR_UV_BLOCKED.
    case userVerificationBlocked = 0x3C
    /// CTAP2_ERR_INVALID_SUBCOMMAND.
    case invalidSubcommand = 0x3E
    /// CTAP2_ERR_UV_INVALID.
    case userVerificationInvalid = 0x3F
    /// CTAP2_ERR_UNAUTHORIZED_PERMISSION.
    case unauthorizedPermission = 0x40
    /// CTAP1_ERR_OTHER.
    case other = 0x7F

    /// The status of a `TokenMintError`: its CTAP number when it has one, else `other`.
    public init(_ error: TokenMintError) {
        let number = error.code.domain == "fido" ? error.code.number.flatMap(UInt8.init(exactly:)) : error.ctapStatus
        self = number.flatMap(CTAP2Status.init(rawValue:)) ?? .other
    }
}
