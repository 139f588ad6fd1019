// swift-tools-version:6.0
import PackageDescription

// The benchmark is its own package: its peers (swift-crypto, and later
// jwt-kit) are fetched only by those who run it, never by library users.
let package = Package(
    name: "TokenMintBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "TokenMint", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.0"),
    ],
    targets: [
        // The raw C calls TokenMint wraps, measured without any Swift around them.
        .target(
            name: "CBenchRaw",
            linkerSettings: [.linkedLibrary("sodium"), .linkedLibrary("crypto")]),
        .executableTarget(
            name: "tokenmint-bench",
            dependencies: [
                "CBenchRaw",
                .product(name: "TokenMintCrypto", package: "TokenMint"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: [.unsafeFlags(["-Ounchecked"], .when(configuration: .release))]),
    ],
    swiftLanguageModes: [.v6]
)
