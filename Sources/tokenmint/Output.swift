import Foundation
import TokenMint

#if canImport(Glibc)
import Glibc
#endif

/// Standard output, checked: a token, key or answer that could not be
/// written is an error (exit 2), never a silent loss. Everything the CLI
/// prints goes through stdio, which is flushed and checked after each
/// ``line(_:)`` and once more before the process exits.
enum Output {
    /// Writes `text` and a newline to standard output now, or throws.
    static func line(_ text: String) throws(CLIError) {
        try write(text.hasSuffix("\n") ? text : text + "\n")
    }

    /// Writes `text` to standard output now, or throws.
    static func write(_ text: String) throws(CLIError) {
        try write(Array(text.utf8))
    }

    /// Writes `bytes` to standard output now, or throws.
    static func write(_ bytes: [UInt8]) throws(CLIError) {
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, standardOutputStream) }
        guard written == bytes.count else { throw failure() }
        try flush()
    }

    /// Writes a secret (a decrypted plaintext) to standard output from its
    /// zeroing memory, never copied into ordinary memory here.
    static func write(_ secret: SecureBytes) throws(CLIError) {
        let written = secret.withUnsafeBytes { $0.isEmpty ? 0 : fwrite($0.baseAddress, 1, $0.count, standardOutputStream) }
        guard written == secret.count else { throw failure() }
        try flush()
    }

    /// Flushes standard output; throws when anything written so far was lost.
    static func flush() throws(CLIError) {
        guard fflush(standardOutputStream) == 0, ferror(standardOutputStream) == 0 else { throw failure() }
    }

    static func failure() -> CLIError {
        CLIError(message: "cannot write standard output: \(String(cString: strerror(errno)))", status: 2)
    }
}

/// Writes output files without ever exposing or replacing what it should not:
/// a regular file is written to a temporary file created in the same folder
/// (secrets with mode 0600 from the first byte, O_EXCL, no symlink followed),
/// fsynced and renamed over the target, then the folder is fsynced; a
/// character device or a FIFO is written directly (never replaced); a
/// symbolic link is refused unless `force` is given (then its target is
/// written, by the same rules); anything else is refused.
enum OutputFile {
    /// What the file holds: a secret is created 0600 and, when a regular
    /// file is there already, replaced only with `force`.
    enum Kind { case secret, data }

    /// Checks that `path` can be written, before anything is spent on it.
    static func check(_ path: String, kind: Kind, force: Bool) throws(CLIError) {
        _ = try target(path, kind: kind, force: force)
    }

    /// Writes `bytes` to `path`.
    static func write(_ bytes: [UInt8], to path: String, kind: Kind, force: Bool) throws(CLIError) {
        let (resolved, special) = try target(path, kind: kind, force: force)
        if special {
            let fd = open(resolved, O_WRONLY | O_NOCTTY | O_CLOEXEC)
            guard fd >= 0 else { throw error("cannot open", path) }
            let ok = writeAll(fd, bytes)
            guard close(fd) == 0, ok else { throw error("cannot write", path) }
            return
        }
        let folder = (resolved as NSString).deletingLastPathComponent
        let directory = folder.isEmpty ? "." : folder
        let temporary = directory + "/.tokenmint-" + Hex.encode(SecureRandom.bytes(count: 8)) + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kind == .secret ? 0o600 : 0o644)
        guard fd >= 0 else { throw error("cannot create a file in the folder of", path) }
        let ok = writeAll(fd, bytes) && fsync(fd) == 0
        guard close(fd) == 0, ok else {
            unlink(temporary)
            throw error("cannot write", path)
        }
        // A secret never replaces a file the caller did not ask to replace,
        // even one that appeared since the check: link fails when the name exists.
        let placed = (kind == .secret && !force) ? link(temporary, resolved) == 0 : rename(temporary, resolved) == 0
        let saved = errno
        if kind == .secret && !force { unlink(temporary) }
        guard placed else {
            unlink(temporary)
            errno = saved
            throw error("cannot write", path)
        }
        let dfd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 {
            _ = fsync(dfd)
            close(dfd)
        }
    }

    /// The path to write and whether it is a character device or FIFO.
    static func target(_ path: String, kind: Kind, force: Bool, depth: Int = 0) throws(CLIError) -> (String, Bool) {
        guard !path.isEmpty else { throw CLIError(message: "an empty output path") }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            guard errno == ENOENT else { throw error("cannot use", path) }
            let folder = (path as NSString).deletingLastPathComponent
            let directory = folder.isEmpty ? "." : folder
            var folderInfo = stat()
            guard stat(directory, &folderInfo) == 0, folderInfo.st_mode & mode_t(S_IFMT) == mode_t(S_IFDIR), access(directory, W_OK) == 0 else {
                throw CLIError(message: "cannot write \(quoted(path)): its folder does not exist or is not writable")
            }
            return (path, false)
        }
        switch info.st_mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG):
            guard kind == .data || force else {
                throw CLIError(message: "\(quoted(path)) exists; give --force to replace it")
            }
            guard access(path, W_OK) == 0 || access((path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent, W_OK) == 0 else {
                throw error("cannot write", path)
            }
            return (path, false)
        case mode_t(S_IFCHR), mode_t(S_IFIFO):
            return (path, true)
        case mode_t(S_IFLNK):
            guard force, depth < 8 else {
                throw CLIError(message: "\(quoted(path)) is a symbolic link; give --force to write to its target")
            }
            guard let real = realpath(path, nil) else { throw error("cannot resolve", path) }
            defer { free(real) }
            return try target(String(cString: real), kind: kind, force: force, depth: depth + 1)
        default:
            throw CLIError(message: "\(quoted(path)) is not a regular file, character device or FIFO")
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }

    static func error(_ what: String, _ path: String) -> CLIError {
        CLIError(message: "\(what) \(quoted(path)): \(String(cString: strerror(errno)))")
    }
}

/// A path or other outside text in a message, quoted and escaped.
func quoted(_ text: String) -> String { "\"" + SafeText.escaped(text) + "\"" }
