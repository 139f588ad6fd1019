// swift-tools-version:6.0
import PackageDescription
import Foundation

// TOKENMINT_NO_POSTGRES=1 leaves TokenMintPostgres (and postgres-nio, NIO,
// BoringSSL) out of the build: the test command's sanitizer runs use it to
// stay within CI's time, and the CLI then has no --postgres option.
let withPostgres = ProcessInfo.processInfo.environment["TOKENMINT_NO_POSTGRES"] == nil

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "TokenMint",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "TokenMint", targets: ["TokenMint"]),
        .library(name: "TokenMintCrypto", targets: ["TokenMintCrypto"]),
        .library(name: "TokenMintJOSE", targets: ["TokenMintJOSE"]),
        .library(name: "TokenMintAztec", targets: ["TokenMintAztec"]),
        .library(name: "TokenMintStore", targets: ["TokenMintStore"]),
        .library(name: "TokenMintPay", targets: ["TokenMintPay"]),
        .library(name: "TokenMintCBOR", targets: ["TokenMintCBOR"]),
        .library(name: "TokenMintWebAuthn", targets: ["TokenMintWebAuthn"]),
        .library(name: "TokenMintAuth", targets: ["TokenMintAuth"]),
        .executable(name: "tokenmint", targets: ["tokenmint"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
    ],
    targets: [
        // System libraries. Each has a module map and a shim header.
        .systemLibrary(
            name: "CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(
            name: "CLibCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CZint",
            providers: [.apt(["libzint-dev"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),

        .target(
            name: "TokenMintCrypto",
            dependencies: ["CSodium", "CLibCrypto"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintJOSE",
            dependencies: ["TokenMintCrypto"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintStore",
            dependencies: ["CSQLite", "TokenMintCrypto"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintPay",
            dependencies: ["TokenMintCrypto", "TokenMintStore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintCBOR",
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintWebAuthn",
            dependencies: ["TokenMintCrypto", "TokenMintCBOR", "TokenMintJOSE", "TokenMintStore"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintAuth",
            dependencies: ["TokenMintCrypto", "TokenMintJOSE", "TokenMintStore", "TokenMintWebAuthn", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintAztec",
            dependencies: ["CZint", "CZlib"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMint",
            dependencies: ["TokenMintCrypto", "TokenMintJOSE", "TokenMintAztec", "TokenMintStore", "TokenMintPay", "TokenMintCBOR", "TokenMintWebAuthn", "TokenMintAuth"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintVectors",
            dependencies: ["TokenMintCrypto", "TokenMintJOSE", "TokenMintAztec"],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "tokenmint",
            dependencies: [
                "TokenMint",
                "TokenMintVectors",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings),

        .testTarget(
            name: "TokenMintPayTests",
            dependencies: ["TokenMintPay", "TokenMintStore", "TokenMintCrypto", "CSQLite"] + (withPostgres ? ["TokenMintPostgres"] : []),
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintCBORTests",
            dependencies: ["TokenMintCBOR"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintWebAuthnTests",
            dependencies: ["TokenMintWebAuthn", "TokenMintCBOR", "TokenMintCrypto", "TokenMintStore"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintAuthTests",
            dependencies: ["TokenMintAuth", "TokenMintWebAuthn", "TokenMintJOSE", "TokenMintStore", "TokenMintCrypto", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintAztecTests",
            dependencies: ["TokenMintAztec", "TokenMint"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintJOSETests",
            dependencies: ["TokenMintJOSE", "TokenMintCrypto", "TokenMintVectors"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintStressTests",
            dependencies: ["TokenMintCrypto", "TokenMintJOSE", "TokenMintPay", "TokenMintStore", "TokenMintWebAuthn"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintCryptoTests",
            dependencies: ["TokenMintCrypto", "TokenMint", "TokenMintVectors"],
            swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)

if withPostgres {
    // The payment verifier's store on PostgreSQL, for many verifiers at
    // once. Its own product: only those who use it fetch postgres-nio.
    package.products.append(.library(name: "TokenMintPostgres", targets: ["TokenMintPostgres"]))
    package.dependencies.append(.package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"))
    package.targets.append(
        .target(
            name: "TokenMintPostgres",
            dependencies: ["TokenMintStore", .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings))
    package.targets.first { $0.name == "tokenmint" }?.dependencies.append("TokenMintPostgres")
}
