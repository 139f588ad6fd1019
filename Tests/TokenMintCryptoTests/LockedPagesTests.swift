import Foundation
import Testing
@testable import TokenMintCrypto

/// Secrets' locked memory: a freed secret never unlocks the page a live one
/// is on, and slots shared between threads never hold two secrets at once.
@Suite("Locked pages for secrets")
struct LockedPagesTests {
    /// The `Locked:` kilobytes of the mapping that holds `address`, from
    /// /proc/self/smaps (the kernel splits a mapping where locking changes).
    static func lockedKilobytes(at address: UInt) throws -> Int? {
        // procfs reports a size of 0: read to the end, not by size.
        let file = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        defer { try? file.close() }
        let smaps = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
        var inside = false
        for line in smaps.split(separator: "\n") {
            if let dash = line.firstIndex(of: "-"), let space = line.firstIndex(of: " "), dash < space,
                let start = UInt(line[..<dash], radix: 16), let end = UInt(line[line.index(after: dash)..<space], radix: 16)
            {
                inside = (start..<end).contains(address)
            } else if inside, line.hasPrefix("Locked:") {
                return Int(line.dropFirst("Locked:".count).split(separator: " ").first ?? "")
            }
        }
        return nil
    }

    /// Whether a page this test locks itself shows as locked.
    static func lockingWorks() throws -> Bool {
        let page = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 4096)
        defer { page.deallocate() }
        page.initializeMemory(as: UInt8.self, repeating: 1, count: 4096)
        guard mlock(page, 4096) == 0 else { return false }
        defer { munlock(page, 4096) }
        return (try lockedKilobytes(at: UInt(bitPattern: page)) ?? 0) > 0
    }

    static func address(of secret: SecureBytes) -> UInt {
        secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
    }

    @Test("freeing small secrets next to a live one leaves its page locked (unlocks do not nest)")
    func neighbourStaysLocked() throws {
        // Secrets made together sit next to each other; one is kept, the rest freed.
        var made = (0..<256).map { _ in SecureBytes(randomCount: 32) }
        let kept = made[128]
        let before = try Self.lockedKilobytes(at: Self.address(of: kept))
        // Where locking works here (a page of the test's own, locked, shows as
        // locked: not under AddressSanitizer, which ignores mlock, nor past the
        // lock limit), the secret's page must be locked too.
        if try Self.lockingWorks() { #expect((before ?? 0) > 0, "a secret's page is not locked though mlock works here") }
        guard let before, before > 0 else { return }
        made.removeAll()
        let after = try #require(try Self.lockedKilobytes(at: Self.address(of: kept)))
        #expect(after > 0, "the live secret's page was unlocked by freeing its neighbours")
        #expect(kept.count == 32)
    }

    @Test("a large secret gets pages of its own, locked while it lives")
    func largeSecretOwnPages() throws {
        let secret = SecureBytes(randomCount: 10_000)
        let address = Self.address(of: secret)
        #expect(address % UInt(LockedPages.pageSize) == 0)
        if let locked = try Self.lockedKilobytes(at: address), locked > 0 {
            #expect(locked * 1024 >= 10_000)
        }
    }

    @Test("secrets made and freed on many threads keep their own bytes")
    func concurrentSlots() async {
        await withTaskGroup(of: Bool.self) { group in
            for task in 0..<16 {
                group.addTask {
                    var live: [(SecureBytes, UInt8)] = []
                    for round in 0..<500 {
                        let tag = UInt8(truncatingIfNeeded: task &* 31 &+ round)
                        let size = [1, 31, 32, 33, 200, 2048, 2049, 5000][round % 8]
                        live.append((SecureBytes(count: size, initializingWith: { $0.initializeMemory(as: UInt8.self, repeating: tag) }), tag))
                        if live.count > 24 { live.removeFirst(12) }
                        for (secret, expected) in live {
                            guard secret.withUnsafeBytes({ $0.allSatisfy { $0 == expected } }) else { return false }
                        }
                    }
                    return true
                }
            }
            for await ok in group { #expect(ok) }
        }
    }
}
