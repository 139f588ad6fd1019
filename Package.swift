// swift-tools-version:6.2
import PackageDescription
import Foundation

// Optional parts are package traits, off by default, so a library user
// neither fetches nor compiles what they do not use:
//   Postgres        TokenMintPostgres (postgres-nio, SwiftNIO, BoringSSL) and
//                   the CLI's --postgres options
//   Server          TokenMintServer (`tokenmint serve` on Hummingbird 2): the
//                   WhitelabelPay REST backend, the OAuth server, the user-token
//                   exchange, and the CLI's `serve` command
//   HTTPClient      TokenMintHTTP (AsyncHTTPClient): the WhitelabelPay backend
//                   over HTTP, and the CLI's --backend and desk commands
//   MLDSA           ML-DSA-44/65/87 (FIPS 204) signatures for JOSE (RFC 9964)
//                   from the BoringSSL that swift-crypto 4 builds (OpenSSL 3.0
//                   has no ML-DSA); without it the algorithms are known and
//                   refused with unsupportedAlgorithm
//   StrictWarnings  every warning in TokenMint's own targets is an error
//                   (the test command turns it on; dependencies are untouched)
// `swift build --traits Postgres,StrictWarnings`; a consumer names them on its
// `.package(…, traits: ["Postgres"])` line.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error, .when(traits: ["StrictWarnings"])),
]

let package = Package(
    name: "TokenMint",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "TokenMint", targets: ["TokenMint"]),
        .library(name: "TokenMintCore", targets: ["TokenMintCore"]),
        .library(name: "TokenMintCrypto", targets: ["TokenMintCrypto"]),
        .library(name: "TokenMintJOSE", targets: ["TokenMintJOSE"]),
        // ML-DSA signatures; they throw unsupportedAlgorithm unless the MLDSA trait is on.
        .library(name: "TokenMintMLDSA", targets: ["TokenMintMLDSA"]),
        .library(name: "TokenMintAztec", targets: ["TokenMintAztec"]),
        .library(name: "TokenMintStore", targets: ["TokenMintStore"]),
        .library(name: "TokenMintPay", targets: ["TokenMintPay"]),
        .library(name: "TokenMintCBOR", targets: ["TokenMintCBOR"]),
        .library(name: "TokenMintWebAuthn", targets: ["TokenMintWebAuthn"]),
        .library(name: "TokenMintFIDO", targets: ["TokenMintFIDO"]),
        .library(name: "TokenMintAuth", targets: ["TokenMintAuth"]),
        // The verifier store on PostgreSQL; empty unless the Postgres trait is on.
        .library(name: "TokenMintPostgres", targets: ["TokenMintPostgres"]),
        // The HTTP clients (WhitelabelPay backend, …); empty unless the HTTPClient trait is on.
        .library(name: "TokenMintHTTP", targets: ["TokenMintHTTP"]),
        // The HTTP server behind `tokenmint serve`; empty unless the Server trait is on.
        .library(name: "TokenMintServer", targets: ["TokenMintServer"]),
        .executable(name: "tokenmint", targets: ["tokenmint"]),
    ],
    traits: [
        .trait(name: "Postgres", description: "TokenMintPostgres: the payment verifier's store on PostgreSQL (postgres-nio), and the CLI's --postgres options."),
        .trait(name: "Server", description: "TokenMintServer: `tokenmint serve` on Hummingbird 2 (the WhitelabelPay REST backend, OAuth server, user-token exchange)."),
        .trait(name: "HTTPClient", description: "TokenMintHTTP: the WhitelabelPay backend over HTTP on AsyncHTTPClient, and the CLI's --backend and desk commands."),
        .trait(name: "MLDSA", description: "ML-DSA-44/65/87 (FIPS 204, RFC 9964 for JOSE) from swift-crypto's BoringSSL."),
        .trait(name: "StrictWarnings", description: "Treat every warning in TokenMint's own targets as an error."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Its CCryptoBoringSSL module is called directly (the ML-DSA C API);
        // its symbol prefix is fixed within a major version.
        .package(url: "https://github.com/apple/swift-crypto.git", "4.0.0"..<"5.0.0"),
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
        // C glue over libcrypto where a Swift round trip per step would cost
        // more than the step (RFC 6979 signing), and the nonce source that
        // hands RFC 6979's k to OpenSSL's ECDSA set-up. No primitive lives here.
        .target(
            name: "CLibCryptoShims",
            dependencies: ["CLibCrypto"]),

        // What every module shares: the one error type, strict JSON and UTF-8, escaping of
        // untrusted text, saturating time sums, the lock. No C, no Foundation.
        .target(
            name: "TokenMintCore",
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintCrypto",
            dependencies: ["TokenMintCore", "CSodium", "CLibCrypto", "CLibCryptoShims"],
            swiftSettings: strictSettings),
        // ML-DSA from swift-crypto's BoringSSL (the MLDSA trait), in a module
        // of its own: BoringSSL's headers define C types OpenSSL's declare
        // opaque, so the module with OpenSSL code must never load them.
        .target(
            name: "TokenMintMLDSA",
            dependencies: ["TokenMintCore", "TokenMintCrypto",
                           .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["MLDSA"]))],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintJOSE",
            dependencies: ["TokenMintCore", "TokenMintCrypto", "TokenMintMLDSA"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintStore",
            dependencies: ["TokenMintCore", "CSQLite", "TokenMintCrypto"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintPay",
            dependencies: ["TokenMintCore", "TokenMintCrypto", "TokenMintJOSE", "TokenMintStore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintCBOR",
            dependencies: ["TokenMintCore"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintWebAuthn",
            dependencies: ["TokenMintCore", "TokenMintCrypto", "TokenMintCBOR", "TokenMintStore", "TokenMintJOSE"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintFIDO",
            dependencies: ["TokenMintCore", "TokenMintCrypto", "TokenMintCBOR", "TokenMintStore", "TokenMintWebAuthn"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintAuth",
            dependencies: ["TokenMintCore", "TokenMintCrypto", "TokenMintJOSE", "TokenMintStore", "TokenMintWebAuthn", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintAztec",
            dependencies: ["TokenMintCore", "CZint", "CZlib"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMint",
            dependencies: ["TokenMintCore", "TokenMintCrypto", "TokenMintJOSE", "TokenMintAztec", "TokenMintStore", "TokenMintPay", "TokenMintCBOR", "TokenMintWebAuthn", "TokenMintFIDO", "TokenMintAuth"],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintPostgres",
            dependencies: [
                "TokenMintCore", "TokenMintPay", "TokenMintStore",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                // Its pool's lease errors (ConnectionPoolError), which PostgresNIO passes on unmapped.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintServer",
            dependencies: [
                "TokenMintCore", "TokenMintCrypto", "TokenMintJOSE", "TokenMintStore", "TokenMintPay", "TokenMintWebAuthn", "TokenMintAuth",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdTLS", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Server"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Server"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "UnixSignals", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintHTTP",
            dependencies: [
                "TokenMintCore", "TokenMintCrypto", "TokenMintJOSE", "TokenMintPay", "TokenMintAuth",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["HTTPClient"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["HTTPClient"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["HTTPClient"])),
            ],
            swiftSettings: strictSettings),
        .target(
            name: "TokenMintVectors",
            dependencies: ["TokenMintCore", "TokenMintCrypto", "TokenMintJOSE", "TokenMintMLDSA", "TokenMintAztec"],
            swiftSettings: strictSettings),
        .executableTarget(
            name: "tokenmint",
            dependencies: [
                "TokenMint",
                "TokenMintVectors",
                .target(name: "TokenMintPostgres", condition: .when(traits: ["Postgres"])),
                .target(name: "TokenMintServer", condition: .when(traits: ["Server"])),
                .target(name: "TokenMintHTTP", condition: .when(traits: ["HTTPClient"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings),

        .testTarget(
            name: "TokenMintPayTests",
            dependencies: [
                "TokenMintPay", "TokenMintStore", "TokenMintCrypto", "TokenMintCore", "CSQLite",
                .target(name: "TokenMintPostgres", condition: .when(traits: ["Postgres"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintServerTests",
            dependencies: [
                "TokenMintServer", "TokenMintHTTP", "TokenMintPay", "TokenMintAuth", "TokenMintWebAuthn", "TokenMintStore", "TokenMintJOSE", "TokenMintCrypto", "TokenMintCore",
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintCBORTests",
            dependencies: ["TokenMintCBOR", "TokenMintCore"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintWebAuthnTests",
            dependencies: ["TokenMintWebAuthn", "TokenMintCBOR", "TokenMintCrypto", "TokenMintStore", "TokenMintCore"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintFIDOTests",
            dependencies: ["TokenMintFIDO", "TokenMintWebAuthn", "TokenMintCBOR", "TokenMintCrypto", "TokenMintStore", "TokenMintCore"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintAuthTests",
            dependencies: ["TokenMintAuth", "TokenMintWebAuthn", "TokenMintJOSE", "TokenMintStore", "TokenMintCrypto", "TokenMintCore", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintAztecTests",
            dependencies: ["TokenMintAztec", "TokenMint"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintJOSETests",
            dependencies: ["TokenMintJOSE", "TokenMintCrypto", "TokenMintMLDSA", "TokenMintVectors", "TokenMintCore"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintStressTests",
            dependencies: ["TokenMintCore", "TokenMintCrypto", "TokenMintJOSE", "TokenMintPay", "TokenMintStore", "TokenMintWebAuthn"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "TokenMintCryptoTests",
            dependencies: ["TokenMintCrypto", "TokenMint", "TokenMintVectors", "TokenMintCore"],
            swiftSettings: strictSettings),
    ],
    swiftLanguageModes: [.v6]
)

// `swift package generate-documentation` needs the DocC plugin; only the
// documentation build fetches it (TOKENMINT_DOCS=1, as scripts/docs sets it).
if ProcessInfo.processInfo.environment["TOKENMINT_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.4.0"))
}
