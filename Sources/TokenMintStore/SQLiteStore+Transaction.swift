import TokenMintCore
internal import CSQLite
import TokenMintCrypto

extension SQLiteStore {
    final class Transaction: StoreTransaction {
        let db: OpaquePointer
        let key: SecureBytes

        init(db: OpaquePointer, key: SecureBytes) {
            self.db = db
            self.key = key
        }

        func check(_ name: String) throws(TokenMintError) {
            try SealedItems.checkName(name)
        }

        func row(_ name: String) throws(TokenMintError) -> (sealed: Bool, value: [UInt8])? {
            try check(name)
            guard let row = try SQLiteStore.query(db, "SELECT sealed, value FROM items WHERE name = ?", [.text(name)]).first,
                row.count == 2, let sealed = row[0].integer, let value = row[1].bytes
            else { return nil }
            return (sealed == 1, value)
        }

        func value(_ name: String) throws(TokenMintError) -> [UInt8]? {
            guard let row = try row(name) else { return nil }
            guard !row.sealed else { throw TokenMintError(.store.invalidArgument, "\(name) is a secret; read it with secret(_:)") }
            return row.value
        }

        func setValue(_ name: String, _ value: [UInt8]) throws(TokenMintError) {
            try check(name)
            try SealedItems.checkValue(value)
            try SQLiteStore.run(db, "INSERT OR REPLACE INTO items (name, sealed, value) VALUES (?, 0, ?)", [.text(name), .blob(value)])
        }

        func secret(_ name: String) throws(TokenMintError) -> SecureBytes? {
            guard let row = try row(name) else { return nil }
            guard row.sealed else { throw TokenMintError(.store.corrupted, "\(name) should be sealed") }
            return try SealedItems.open(row.value, name: name, key: key)
        }

        func setSecret(_ name: String, _ value: SecureBytes) throws(TokenMintError) {
            try check(name)
            try SealedItems.checkSecret(value)
            let sealed = try SealedItems.seal(value, name: name, key: key)
            try SQLiteStore.run(db, "INSERT OR REPLACE INTO items (name, sealed, value) VALUES (?, 1, ?)", [.text(name), .blob(sealed)])
        }

        func remove(_ name: String) throws(TokenMintError) {
            try check(name)
            try SQLiteStore.run(db, "DELETE FROM items WHERE name = ?", [.text(name)])
        }

        func removeValues(from lower: String, upTo upper: String) throws(TokenMintError) -> Int {
            try check(lower)
            try check(upper)
            // TEXT compares with memcmp (the BINARY collation): bytewise UTF-8 order.
            try SQLiteStore.run(db, "DELETE FROM items WHERE name >= ? AND name < ?", [.text(lower), .text(upper)])
            return Int(sqlite3_changes(db))
        }

        func counter(_ name: String) throws(TokenMintError) -> Int64 {
            try check(name)
            return try SQLiteStore.query(db, "SELECT value FROM counters WHERE name = ?", [.text(name)]).first?.first?.integer ?? 0
        }

        func setCounter(_ name: String, _ value: Int64) throws(TokenMintError) {
            try check(name)
            try SQLiteStore.run(db, "INSERT OR REPLACE INTO counters (name, value) VALUES (?, ?)", [.text(name), .integer(value)])
        }

        func increment(_ name: String, by delta: Int64) throws(TokenMintError) -> Int64 {
            let (value, overflow) = try counter(name).addingReportingOverflow(delta)
            guard !overflow else { throw TokenMintError(.store.invalidArgument, "counter \(name) would overflow") }
            try setCounter(name, value)
            return value
        }
    }
}
