import TokenMintCore
#if canImport(Glibc)
import Glibc
#endif

/// The UNIX-domain stream sockets of the socket transport, both ends.
enum UnixSocket {
    /// A new stream socket on which `operation` (bind or connect) is run
    /// with `path`'s address; the descriptor, or an error naming `what`
    /// (the socket is closed then).
    static func open(
        _ path: String, _ what: String, _ operation: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) throws(TokenMintError) -> Int32 {
        guard path.utf8.count < 108 else { throw TokenMintError(.fido.transportError, "a UNIX socket path is under 108 bytes") }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TokenMintError(.fido.transportError, "socket() failed: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { operation(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard status == 0 else {
            let code = errno
            close(descriptor)
            throw TokenMintError(.fido.transportError, "cannot \(what) \(SafeText.escaped(path)): errno \(code)")
        }
        return descriptor
    }
}
