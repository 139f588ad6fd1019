/// Where the separators of a compact token lie (the dots of a JWE, the
/// slashes of a payment token), found in one pass over its bytes: no
/// `Character` walk, no array.
package struct Separators {
    /// The first four positions (unused ones are 0).
    package private(set) var positions: (Int, Int, Int, Int) = (0, 0, 0, 0)
    /// How many separators there are in all.
    package private(set) var count = 0

    /// The separators `byte` in `bytes`.
    package init(of byte: UInt8, in bytes: UnsafeRawBufferPointer) {
        for (index, value) in bytes.enumerated() where value == byte {
            switch count {
            case 0: positions.0 = index
            case 1: positions.1 = index
            case 2: positions.2 = index
            case 3: positions.3 = index
            default: break
            }
            count += 1
        }
    }

    /// The `segment`th of the `count + 1` segments (0-based; `segment` ≤ 4 and ≤ `count`).
    package func segment(_ segment: Int, of bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let start = segment == 0 ? 0 : position(segment - 1) + 1
        let end = segment < min(count, 4) ? position(segment) : bytes.count
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// The `index`th separator's position (`index` < 4).
    private func position(_ index: Int) -> Int {
        switch index {
        case 0: positions.0
        case 1: positions.1
        case 2: positions.2
        default: positions.3
        }
    }
}
