// swift-tools-version:6.1
import PackageDescription

// The benchmark is its own package: its peers (swift-crypto, jwt-kit) are
// fetched only by those who run it, never by library users.
let package = Package(
    name: "TokenMintBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "TokenMint", path: "..", traits: ["Postgres"]),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.1.0"..<"5.0.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
    ],
    targets: [
        // The raw C calls TokenMint wraps, measured without any Swift around them.
        .target(
            name: "CBenchRaw",
            linkerSettings: [.linkedLibrary("sodium"), .linkedLibrary("crypto"), .linkedLibrary("zint")]),
        .executableTarget(
            name: "tokenmint-bench",
            dependencies: [
                "CBenchRaw",
                .product(name: "TokenMintCore", package: "TokenMint"),
                .product(name: "TokenMintCrypto", package: "TokenMint"),
                .product(name: "TokenMintJOSE", package: "TokenMint"),
                .product(name: "TokenMintAztec", package: "TokenMint"),
                .product(name: "TokenMintStore", package: "TokenMint"),
                .product(name: "TokenMintPay", package: "TokenMint"),
                .product(name: "TokenMintWebAuthn", package: "TokenMint"),
                .product(name: "TokenMintAuth", package: "TokenMint"),
                .product(name: "TokenMintPostgres", package: "TokenMint"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: [.unsafeFlags(["-Ounchecked"], .when(configuration: .release))]),
    ],
    swiftLanguageModes: [.v6]
)
