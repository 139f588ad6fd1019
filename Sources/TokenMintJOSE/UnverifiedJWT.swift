public import TokenMintCore
import TokenMintCrypto


/// Reading a JWT **without verifying it**, for inspection and debugging only:
/// nothing returned here may be trusted.
public enum UnverifiedJWT {
    /// The header and claims of `token`, decoded but not verified.
    public static func decode(_ token: String) throws(TokenMintError) -> (header: JSONObject, claims: JSONObject) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("a compact JWT has three segments") }
        func object(_ segment: Substring, _ what: String) throws(TokenMintError) -> JSONObject {
            let bytes = try B64.decode(segment, what)
            do {
                guard let object = try JSONParser.parse(bytes).objectValue else { throw TokenMintError.malformed("\(what) is not a JSON object") }
                return object
            } catch {
                throw TokenMintError.wrap(error, as: .jose.invalidJSON, "\(what): \(error)")
            }
        }
        return (try object(parts[0], "header"), try object(parts[1], "claims"))
    }
}
