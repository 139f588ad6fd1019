import TokenMintCore

/// Detection of RSA moduli made by the flawed Infineon generator (ROCA,
/// CVE-2017-15361; Nemec et al., CCS 2017). Such primes are k·M + (65537^a mod M)
/// for a primorial M, so n mod r lies in the subgroup that 65537 generates
/// modulo every small prime r dividing M. A random modulus passes that test for
/// all 38 primes below with probability far below 2⁻⁶⁰; a ROCA modulus always does.
enum RSAFingerprint {
    static let primes: [UInt32] = [
        3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
        101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167,
    ]

    /// The powers of 65537 modulo each prime: the subgroup a ROCA modulus stays in.
    static let subgroups: [Set<UInt32>] = primes.map { p in
        var members: Set<UInt32> = []
        var power: UInt32 = 1
        let generator = 65537 % p
        repeat {
            members.insert(power)
            power = power * generator % p
        } while power != 1
        return members
    }

    /// Whether `modulus` (big-endian) carries the ROCA fingerprint.
    static func hasROCAFingerprint(modulus: [UInt8]) -> Bool {
        for (index, p) in primes.enumerated() {
            var remainder: UInt32 = 0
            for byte in modulus { remainder = (remainder << 8 | UInt32(byte)) % p }
            if !subgroups[index].contains(remainder) { return false }
        }
        return true
    }

    static func checkNotROCA(modulus: [UInt8]) throws(TokenMintError) {
        if hasROCAFingerprint(modulus: modulus) {
            throw .key("the RSA modulus has the ROCA fingerprint (CVE-2017-15361): its factors are recoverable")
        }
    }
}
