public import TokenMintCore
import TokenMintCrypto
import TokenMintJOSE
public import TokenMintStore

/// A FIDO Metadata Service (MDS3) BLOB, verified: a compact JWS (RS256 or
/// ES256) whose x5c chains to the FIDO root you give (GlobalSign Root CA -
/// R3 for the Alliance's service; a test root in tests), with the metadata
/// statements and status reports of authenticators, looked up by AAGUID.
///
/// A relying party given one (``RelyingPartyPolicy/metadata``) anchors an
/// authenticator's attestation at the roots its statement lists and refuses
/// authenticators whose latest status report the ``MetadataPolicy`` refuses.
/// Certificate revocation lists are not checked.
public struct MetadataBLOB: Sendable {
    /// The BLOB's serial number (`no`); a newer BLOB has a larger one.
    public let number: Int64
    /// When the next BLOB is due (`nextUpdate`, `YYYY-MM-DD`).
    public let nextUpdate: String
    /// The entries with an AAGUID (FIDO2 authenticators).
    public let entries: [MetadataEntry]
    /// The JWS as received (what ``save(in:roots:at:)`` keeps).
    public let jws: String

    /// One authenticator's metadata.
    public struct MetadataEntry: Sendable, Equatable {
        /// The AAGUID (16 bytes).
        public let aaguid: [UInt8]
        /// The statement's `description`.
        public let description: String?
        /// The statement's `attestationRootCertificates`, DER.
        public let attestationRoots: [[UInt8]]
        /// The status of the newest report (`FIDO_CERTIFIED`, `REVOKED`, …),
        /// by `effectiveDate`; nil without reports.
        public let status: String?
    }

    /// The largest BLOB taken (the Alliance's is a few MiB).
    public static let maximumBytes = 32 << 20

    /// The payload of the BLOB's JWS, verified by the JOSE verifier with
    /// x5c: RS256 or ES256, its chain anchored at `roots` as of `time`.
    static func verifiedPayload(_ text: String, roots: [[UInt8]], at time: Int64?) throws(TokenMintError) -> JSONObject {
        func fail(_ why: String, _ cause: TokenMintError? = nil) -> TokenMintError {
            TokenMintError(.webAuthn.invalidMetadata, "MDS3 BLOB: \(why)", underlying: cause)
        }
        let anchors = roots.compactMap { try? X509Certificate(derRepresentation: $0) }
        var policy = JWSPolicy()
        policy.maximumTokenBytes = maximumBytes
        policy.algorithms = [.RS256, .ES256]
        policy.maximumHeaderBytes = 32 * 1024  // x5c: a few certificates
        let verified: VerifiedJWS
        do { verified = try JWSVerifier(certificateRoots: anchors, at: time, policy: policy).verify(compact: text) } catch {
            throw fail(error.code == .jose.untrustedCertificate ? "the signing certificate does not chain to the given root (\(error.reason))" : error.reason, error)
        }
        var limits = JSONParser.Limits()
        limits.maximumBytes = maximumBytes
        limits.maximumStringBytes = maximumBytes
        limits.maximumMembers = 1 << 16
        guard let payload = (try? JSONParser.parse(verified.payload, limits: limits))?.objectValue else { throw fail("the payload is not a JSON object") }
        return payload
    }

    /// Verifies `jws` against `roots` (DER) as of `time` (Unix seconds; nil
    /// for now) and reads its entries.
    /// - Throws: `webAuthn.invalidMetadata` naming what failed: not a JWS,
    ///   a signature or certificate chain that does not verify, a payload
    ///   without `no`, `nextUpdate` or `entries`, a malformed entry.
    public init(jws: String, roots: [[UInt8]], at time: Int64? = nil) throws(TokenMintError) {
        func fail(_ why: String) -> TokenMintError { TokenMintError(.webAuthn.invalidMetadata, "MDS3 BLOB: \(why)") }
        let text = jws.trimmingWhitespace
        let payload = try Self.verifiedPayload(text, roots: roots, at: time)
        guard let number = payload["no"]?.int64Value, let next = payload["nextUpdate"]?.stringValue,
            let list = payload["entries"]?.arrayValue
        else { throw fail("the payload needs no, nextUpdate and entries") }
        var entries: [MetadataEntry] = []
        for item in list {
            guard let object = item.objectValue else { throw fail("an entry is not an object") }
            // UAF (aaid) and U2F (key identifier) entries name no AAGUID.
            guard let text = object["aaguid"]?.stringValue else { continue }
            guard let aaguid = Self.uuid(text) else { throw fail("an aaguid is not a UUID") }
            let statement = object["metadataStatement"]?.objectValue
            var roots: [[UInt8]] = []
            for certificate in statement?["attestationRootCertificates"]?.arrayValue ?? [] {
                guard let base64 = certificate.stringValue,
                    let der = try? Base64URL.decodeStandard(base64)
                else { throw fail("an attestation root of \(text) is not base64") }
                roots.append(der)
            }
            // The newest report by effectiveDate (ISO dates compare as text); the last listed among equals.
            let reports = (object["statusReports"]?.arrayValue ?? []).compactMap(\.objectValue)
            let newest = reports.enumerated().max { a, b in
                let (left, right) = (a.element["effectiveDate"]?.stringValue ?? "", b.element["effectiveDate"]?.stringValue ?? "")
                return left == right ? a.offset < b.offset : left < right
            }
            entries.append(MetadataEntry(aaguid: aaguid, description: statement?["description"]?.stringValue, attestationRoots: roots,
                                         status: newest?.element["status"]?.stringValue))
        }
        self.number = number
        self.nextUpdate = next
        self.entries = entries
        self.jws = text
    }

    /// The entry of `aaguid`, if the BLOB has one.
    public func entry(aaguid: [UInt8]) -> MetadataEntry? {
        entries.first { $0.aaguid == aaguid }
    }

    static let storeName = "webauthn.mds.blob"

    /// Keeps the BLOB in `store` (replacing an older one; a BLOB whose
    /// number is not larger than the kept one's is refused as a rollback).
    /// - Throws: `webAuthn.invalidMetadata` for a rollback; store errors.
    public func save(in store: any KeyValueStore, roots: [[UInt8]], at time: Int64? = nil) throws(TokenMintError) {
        let kept = try Self.load(from: store, roots: roots, at: time)
        if let kept, kept.number >= number {
            throw TokenMintError(.webAuthn.invalidMetadata, "MDS3 BLOB: number \(number) is not newer than the kept \(kept.number)")
        }
        do { try store.transaction { tx in try tx.setValue(Self.storeName, Array(jws.utf8)) } } catch {
            throw TokenMintError.wrap(error, as: .webAuthn.invalidMetadata, "the store failed")
        }
    }

    /// The BLOB kept in `store`, verified again; nil when none is kept.
    public static func load(from store: any KeyValueStore, roots: [[UInt8]], at time: Int64? = nil) throws(TokenMintError) -> MetadataBLOB? {
        let bytes: [UInt8]?
        do { bytes = try store.transaction { tx in try tx.value(storeName) } } catch {
            throw TokenMintError.wrap(error, as: .webAuthn.invalidMetadata, "the store failed")
        }
        guard let bytes else { return nil }
        return try MetadataBLOB(jws: String(decoding: bytes, as: UTF8.self), roots: roots, at: time)
    }

    /// A UUID's 16 bytes (`8-4-4-4-12` hexadecimal digits).
    static func uuid(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8.filter { $0 != UInt8(ascii: "-") })
        guard text.utf8.count == 36, digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<(index + 2)], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

/// Which authenticators a relying party with metadata accepts.
public struct MetadataPolicy: Sendable {
    /// Statuses that refuse an authenticator when they are its newest
    /// report (by default the revocations and compromises MDS3 defines).
    public var refusedStatuses: Set<String> = [
        "REVOKED", "USER_VERIFICATION_BYPASS", "ATTESTATION_KEY_COMPROMISE", "USER_KEY_REMOTE_COMPROMISE", "USER_KEY_PHYSICAL_COMPROMISE",
    ]
    /// Whether an attestation from an authenticator the BLOB does not list
    /// is refused (off by default: the policy's own roots still apply).
    public var requireEntry = false

    /// The default policy.
    public init() {}
}

extension String {
    var trimmingWhitespace: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars = scalars.dropFirst() }
        while let last = scalars.last, last.isWhitespace { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
