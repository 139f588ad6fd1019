// swift-tools-version:6.1
import PackageDescription

// A cash-desk verifier built on TokenMint the way an app would use it: by
// path here, by URL and version in an app. No traits are named, so
// postgres-nio, SwiftNIO and BoringSSL are neither fetched nor built; an app
// that wants the PostgreSQL store adds `traits: ["Postgres"]` to the line.
let package = Package(
    name: "CashDesk",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "TokenMint", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "cash-desk",
            dependencies: [
                .product(name: "TokenMintCore", package: "TokenMint"),
                .product(name: "TokenMintPay", package: "TokenMint"),
                .product(name: "TokenMintStore", package: "TokenMint"),
                .product(name: "TokenMintCrypto", package: "TokenMint"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
