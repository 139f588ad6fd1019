import TokenMintCore
internal import CSQLite
import TokenMintCrypto

#if canImport(Glibc)
import Glibc
#endif

import Foundation

extension SQLiteStore {

    static func resolve(_ source: MasterKeySource, salt: [UInt8], storeIsNew: Bool) throws(TokenMintError) -> SecureBytes {
        switch source {
        case .key(let key):
            guard key.count == 32 else { throw TokenMintError(.store.masterKeyUnavailable, "the master key must be 32 bytes") }
            return key
        case .environment(let variable):
            guard let text = ProcessInfo.processInfo.environment[variable], !text.isEmpty else {
                throw TokenMintError(.store.masterKeyUnavailable, "environment variable \(variable) is not set")
            }
            guard let bytes = try? Base64URL.decode(text.trimmingCharacters(in: .whitespacesAndNewlines), padding: .either),
                bytes.count == 32
            else { throw TokenMintError(.store.masterKeyUnavailable, "\(variable) must hold 32 bytes as base64url") }
            return SecureBytes(bytes)
        case .passphrase(let passphrase, let cost):
            guard !passphrase.isEmpty else { throw TokenMintError(.store.masterKeyUnavailable, "empty passphrase") }
            do {
                return try PasswordKeyDerivation.deriveKey(passphrase: Array(passphrase.utf8), salt: salt, cost: cost)
            } catch {
                throw TokenMintError(.store.masterKeyUnavailable, "Argon2id: \(error.reason)", underlying: error)
            }
        case .file(let path, let create):
            if let key = try readKeyFile(path) { return key }
            guard create else { throw TokenMintError(.store.masterKeyUnavailable, "\(path) does not exist") }
            guard storeIsNew else {
                throw TokenMintError(.store.masterKeyUnavailable, "\(path) is missing but the store exists: restore the key file (a new key would not open the store)")
            }
            let key = SecureBytes(randomCount: 32)
            // O_EXCL: never overwrite a key another process just created; the
            // mode is set by open itself, so the key is never readable by others.
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                if errno == EEXIST, let existing = try readKeyFile(path) { return existing }
                throw TokenMintError(.store.masterKeyUnavailable, "cannot create \(path): \(String(cString: strerror(errno)))")
            }
            let written = key.withUnsafeBytes { write(fd, $0.baseAddress, 32) }
            guard written == 32, fsync(fd) == 0, close(fd) == 0 else {
                unlink(path)
                throw TokenMintError(.store.masterKeyUnavailable, "cannot write \(path)")
            }
            SQLiteStore.syncFolder(of: path)
            return key
        }
    }

    /// Reads a master key file straight into secure memory; nil when it does
    /// not exist. Refuses a symbolic link, anything but a regular file, a
    /// file group or others may access, and a file that is not 32 bytes.
    static func readKeyFile(_ path: String) throws(TokenMintError) -> SecureBytes? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw TokenMintError(.store.masterKeyUnavailable, "\(path) is a symbolic link; a master key file must be a regular file") }
            throw TokenMintError(.store.masterKeyUnavailable, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) else {
            throw TokenMintError(.store.masterKeyUnavailable, "\(path) is not a regular file")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw TokenMintError(.store.masterKeyUnavailable,
                "\(path) may be read or written by group or others (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        guard info.st_size == 32 else { throw TokenMintError(.store.masterKeyUnavailable, "\(path) does not hold a 32-byte key") }
        var done = 0
        let key = SecureBytes(count: 32) { (buffer: UnsafeMutableRawBufferPointer) in
            while done < 32 {
                let n = read(fd, buffer.baseAddress.map { $0 + done }, 32 - done)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return }
                done += n
            }
        }
        guard done == 32 else { throw TokenMintError(.store.masterKeyUnavailable, "\(path) could not be read whole") }
        return key
    }

    /// fsyncs the folder holding `path`, so a new file's name is durable too.
    static func syncFolder(of path: String) {
        let folder = (path as NSString).deletingLastPathComponent
        let fd = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    static func metaSalt(_ db: OpaquePointer) throws(TokenMintError) -> [UInt8] {
        if let salt = try query(db, "SELECT value FROM meta WHERE name = 'salt'", []).first?.first?.bytes { return salt }
        let salt = SecureRandom.bytes(count: PasswordKeyDerivation.saltByteCount)
        try run(db, "INSERT OR IGNORE INTO meta (name, value) VALUES ('salt', ?)", [.blob(salt)])
        return try query(db, "SELECT value FROM meta WHERE name = 'salt'", []).first?.first?.bytes ?? salt
    }

    static func checkMasterKey(_ db: OpaquePointer, _ key: SecureBytes) throws(TokenMintError) {
        if let sealed = try query(db, "SELECT value FROM meta WHERE name = 'check'", []).first?.first?.bytes {
            try SealedItems.verifyKeyCheck(sealed, key: key)
            return
        }
        let sealed = try SealedItems.sealKeyCheck(key)
        try run(db, "INSERT OR IGNORE INTO meta (name, value) VALUES ('check', ?)", [.blob(sealed)])
        // Another process may have won the race with its own key: check again.
        try checkMasterKey(db, key)
    }
}
