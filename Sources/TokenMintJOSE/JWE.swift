public import TokenMintCore
import TokenMintCrypto

/// A JSON Web Encryption object (RFC 7516): a protected header, optional
/// unprotected headers and additional authenticated data, one or more
/// recipients' encrypted keys, and the IV, ciphertext and tag.
///
/// Make one with ``encrypt(_:key:algorithm:encryption:header:)`` or
/// ``encrypt(_:to:encryption:header:unprotectedHeader:additionalData:)``;
/// read one with ``init(parsing:maximumBytes:)``; open it with
/// ``decrypt(using:policy:)``. Serialize with ``compactSerialization``,
/// ``flattenedJSON`` or ``generalJSON``.
public struct JWE: Sendable {
    /// One recipient: its unprotected header and its encrypted content key.
    public struct Recipient: Sendable {
        /// The per-recipient unprotected header (`header`), if any.
        public let header: JSONObject?
        /// The encrypted content key (empty for `dir` and `ECDH-ES`).
        public let encryptedKey: [UInt8]
    }

    /// The protected header.
    public let protectedHeader: JSONObject
    /// The protected header's base64url text exactly as received or made: the AAD covers it.
    public let protectedSegment: String
    /// The shared unprotected header (`unprotected`), if any.
    public let sharedHeader: JSONObject?
    /// The recipients, one or more.
    public let recipients: [Recipient]
    /// The initialization vector.
    public let iv: [UInt8]
    /// The ciphertext.
    public let ciphertext: [UInt8]
    /// The authentication tag.
    public let tag: [UInt8]
    /// The JSON serialization's `aad` member as base64url text, if any.
    public let additionalDataSegment: String?

    /// The largest JWE read by default (1 MiB).
    public static let defaultMaximumBytes = 1 << 20

    static let headerLimits: JSONParser.Limits = {
        var limits = JSONParser.Limits()
        limits.maximumBytes = 64 * 1024
        limits.maximumDepth = 4
        limits.maximumMembers = 64
        return limits
    }()

    /// The bytes the content encryption authenticates (RFC 7516 §5.1 step 14).
    var authenticatedData: [UInt8] {
        var aad = Array(protectedSegment.utf8)
        if let additionalDataSegment { aad.append(0x2E); aad += additionalDataSegment.utf8 }
        return aad
    }

    /// The header a recipient sees: the union of the protected, shared and
    /// per-recipient headers, whose names must be disjoint (RFC 7516 §7.2.1).
    func header(for recipient: Recipient) throws(TokenMintError) -> JSONObject {
        var merged = protectedHeader
        for part in [sharedHeader, recipient.header] {
            guard let part else { continue }
            for member in part {
                guard merged[member.name] == nil else { throw .header("\"\(member.name)\" appears in more than one JWE header") }
                merged.set(member.name, member.value)
            }
        }
        return merged
    }

    // MARK: - Serializations

    /// The compact serialization (RFC 7516 §7.1): one recipient, no unprotected headers, no `aad`.
    public var compactSerialization: String {
        get throws(TokenMintError) {
            guard recipients.count == 1, recipients[0].header == nil, sharedHeader == nil, additionalDataSegment == nil else {
                throw .malformed("only a JWE with one recipient, no unprotected header and no aad has a compact form")
            }
            return [protectedSegment, B64.encodePublic(recipients[0].encryptedKey), B64.encodePublic(iv), B64.encodePublic(ciphertext), B64.encodePublic(tag)]
                .joined(separator: ".")
        }
    }

    /// The flattened JSON serialization (RFC 7516 §7.2.2): one recipient.
    public var flattenedJSON: String {
        get throws(TokenMintError) {
            guard recipients.count == 1 else { throw .malformed("a JWE with \(recipients.count) recipients has no flattened form") }
            var object = commonMembers()
            if let header = recipients[0].header { object.set("header", .object(header)) }
            if !recipients[0].encryptedKey.isEmpty { object.set("encrypted_key", .string(B64.encodePublic(recipients[0].encryptedKey))) }
            return String(decoding: JSONWriter.encode(.object(ordered(object))), as: UTF8.self)
        }
    }

    /// The general JSON serialization (RFC 7516 §7.2.1).
    public var generalJSON: String {
        var object = commonMembers()
        object.set("recipients", .array(recipients.map { r in
            var entry = JSONObject()
            if let header = r.header { entry.set("header", .object(header)) }
            if !r.encryptedKey.isEmpty { entry.set("encrypted_key", .string(B64.encodePublic(r.encryptedKey))) }
            return .object(entry)
        }))
        return String(decoding: JSONWriter.encode(.object(ordered(object))), as: UTF8.self)
    }

    private func commonMembers() -> JSONObject {
        var object = JSONObject()
        object.set("protected", .string(protectedSegment))
        if let sharedHeader { object.set("unprotected", .object(sharedHeader)) }
        object.set("iv", .string(B64.encodePublic(iv)))
        object.set("ciphertext", .string(B64.encodePublic(ciphertext)))
        object.set("tag", .string(B64.encodePublic(tag)))
        if let additionalDataSegment { object.set("aad", .string(additionalDataSegment)) }
        return object
    }

    /// RFC 7516's member order, for readers who print it.
    private func ordered(_ object: JSONObject) -> JSONObject {
        let order = ["protected", "unprotected", "header", "recipients", "encrypted_key", "aad", "iv", "ciphertext", "tag"]
        return JSONObject(order.compactMap { name in object[name].map { (name, $0) } })
    }

    // MARK: - Parsing

    /// Reads a JWE in any serialization: compact, or JSON (general or
    /// flattened, told apart by `recipients`). Surrounding white space is ignored.
    /// - Throws: `.jose.tooLarge` over `maximumBytes`, `.jose.malformed`,
    ///   `.jose.invalidBase64URL`, `.jose.invalidJSON`, `.jose.invalidHeader`.
    public init(parsing text: String, maximumBytes: Int = JWE.defaultMaximumBytes) throws(TokenMintError) {
        guard text.utf8.count <= maximumBytes else { throw TokenMintError(.jose.tooLarge, "the JWE is larger than \(maximumBytes) bytes") }
        let trimmed = text.trimmingWhitespace
        if trimmed.hasPrefix("{") { try self.init(json: trimmed, maximumBytes: maximumBytes) } else { try self.init(compact: trimmed) }
    }

    private init(compact text: String) throws(TokenMintError) {
        // One pass over the bytes: the four dots, then each segment decoded
        // where it lies (no Character walk, no copy of the ciphertext).
        var text = text
        let (protected, encryptedKey, iv, ciphertext, tag) = try text.withUTF8Bytes {
            (utf8) throws(TokenMintError) -> (String, [UInt8], [UInt8], [UInt8], [UInt8]) in
            let dots = Separators(of: UInt8(ascii: "."), in: utf8)
            guard dots.count == 4 else { throw .malformed("a compact JWE has 5 segments, this has \(dots.count + 1)") }
            return (String(decoding: dots.segment(0, of: utf8), as: UTF8.self),
                    try B64.decode(dots.segment(1, of: utf8), "the encrypted key"),
                    try B64.decode(dots.segment(2, of: utf8), "the IV"),
                    try B64.decode(dots.segment(3, of: utf8), "the ciphertext"),
                    try B64.decode(dots.segment(4, of: utf8), "the tag"))
        }
        try self.init(
            protectedSegment: protected, sharedHeader: nil, recipients: [Recipient(header: nil, encryptedKey: encryptedKey)],
            iv: iv, ciphertext: ciphertext, tag: tag, additionalDataSegment: nil)
    }

    private init(json text: String, maximumBytes: Int) throws(TokenMintError) {
        var limits = JSONParser.Limits()
        limits.maximumBytes = maximumBytes
        limits.maximumDepth = 6
        limits.maximumMembers = 256
        let value: JSONValue
        do { value = try JSONParser.parse(Array(text.utf8), limits: limits) } catch {
            throw TokenMintError(.jose.invalidJSON, "JWE: \(error.reason)", underlying: error)
        }
        guard let object = value.objectValue else { throw .malformed("a JWE in JSON is an object") }
        func string(_ from: JSONObject, _ name: String) throws(TokenMintError) -> String? {
            guard let member = from[name] else { return nil }
            guard let text = member.stringValue else { throw .malformed("\"\(name)\" must be a string") }
            return text
        }
        func header(_ from: JSONObject, _ name: String) throws(TokenMintError) -> JSONObject? {
            guard let member = from[name] else { return nil }
            guard let header = member.objectValue else { throw .header("\"\(name)\" must be an object") }
            return header
        }
        var recipients: [Recipient] = []
        if let list = object["recipients"] {
            guard object["header"] == nil, object["encrypted_key"] == nil else {
                throw .malformed("a JWE cannot be both general and flattened")
            }
            guard let array = list.arrayValue, !array.isEmpty, array.count <= 64 else { throw .malformed("\"recipients\" must be an array of 1 to 64 objects") }
            for entry in array {
                guard let entry = entry.objectValue else { throw .malformed("each recipient is an object") }
                recipients.append(Recipient(
                    header: try header(entry, "header"),
                    encryptedKey: try string(entry, "encrypted_key").map { (t) throws(TokenMintError) in try B64.decode(t, "an encrypted key") } ?? []))
            }
        } else {
            recipients.append(Recipient(
                header: try header(object, "header"),
                encryptedKey: try string(object, "encrypted_key").map { (t) throws(TokenMintError) in try B64.decode(t, "the encrypted key") } ?? []))
        }
        guard let protectedSegment = try string(object, "protected") else {
            throw .header("TokenMint needs a protected header: it carries \"enc\" under the tag")
        }
        guard let ivText = try string(object, "iv"), let ciphertextText = try string(object, "ciphertext"), let tagText = try string(object, "tag") else {
            throw .malformed("a JWE needs \"iv\", \"ciphertext\" and \"tag\"")
        }
        let aad = try string(object, "aad")
        if let aad { _ = try B64.decode(aad, "the aad") }
        try self.init(
            protectedSegment: protectedSegment, sharedHeader: try header(object, "unprotected"), recipients: recipients,
            iv: try B64.decodePublic(ivText, "the IV"), ciphertext: try B64.decodePublic(ciphertextText, "the ciphertext"),
            tag: try B64.decodePublic(tagText, "the tag"), additionalDataSegment: aad)
    }

    init(
        protectedSegment: String, sharedHeader: JSONObject?, recipients: [Recipient], iv: [UInt8], ciphertext: [UInt8], tag: [UInt8],
        additionalDataSegment: String?
    ) throws(TokenMintError) {
        let protectedBytes = try B64.decodePublic(protectedSegment, "the protected header")
        let value: JSONValue
        do { value = try JSONParser.parse(protectedBytes, limits: JWE.headerLimits) } catch {
            throw TokenMintError(.jose.invalidJSON, "JWE protected header: \(error.reason)", underlying: error)
        }
        guard let header = value.objectValue, !header.isEmpty else { throw .header("the protected header must be a non-empty JSON object") }
        self.protectedHeader = header
        self.protectedSegment = protectedSegment
        self.sharedHeader = sharedHeader
        self.recipients = recipients
        self.iv = iv
        self.ciphertext = ciphertext
        self.tag = tag
        self.additionalDataSegment = additionalDataSegment
        for recipient in recipients { _ = try self.header(for: recipient) }
        if sharedHeader?["crit"] != nil || recipients.contains(where: { $0.header?["crit"] != nil }) {
            throw .header("\"crit\" must be in the protected header (RFC 7516 §4.1.13)")
        }
    }
}
