public import TokenMintCore
import TokenMintCrypto

/// Unsecured JWS (`alg: none`, RFC 7515 appendix A.5): a separately named API
/// so that no verifier can be talked into accepting one.
public enum UnsecuredJWS {
    /// `base64url({"alg":"none",…}).base64url(payload).` — no signature.
    public static func encode(_ payload: some Collection<UInt8>, type: String? = nil) -> String {
        var header = JSONObject()
        header.set("alg", "none")
        if let type { header.set("typ", .string(type)) }
        return B64.encode(JSONWriter.encode(.object(header))) + "." + B64.encode(Array(payload)) + "."
    }

    /// Reads an unsecured JWS: the header must say `alg: none` and the signature must be empty.
    public static func decode(_ token: String) throws(TokenMintError) -> (header: JSONObject, payload: [UInt8]) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].isEmpty else { throw .malformed("an unsecured JWS has an empty third segment") }
        let headerBytes = try B64.decode(parts[0], "header")
        guard let header = try? JSONParser.parse(headerBytes).objectValue, header["alg"] == .string("none") else {
            throw .header("not an alg \"none\" header")
        }
        return (header, try B64.decode(parts[1], "payload"))
    }
}
