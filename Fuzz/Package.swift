// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets, one per parser, in one executable (the target is picked
// with TOKENMINT_FUZZ_TARGET). Built with `--sanitize=fuzzer --sanitize=address`
// by scripts/fuzz; its own package so nothing here reaches library users.
let package = Package(
    name: "TokenMintFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "TokenMint", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "tokenmint-fuzz",
            dependencies: [
                .product(name: "TokenMintCore", package: "TokenMint"),
                .product(name: "TokenMintCrypto", package: "TokenMint"),
                .product(name: "TokenMintJOSE", package: "TokenMint"),
                .product(name: "TokenMintCBOR", package: "TokenMint"),
                .product(name: "TokenMintWebAuthn", package: "TokenMint"),
                .product(name: "TokenMintFIDO", package: "TokenMint"),
                .product(name: "TokenMintPay", package: "TokenMint"),
                .product(name: "TokenMintStore", package: "TokenMint"),
                .product(name: "TokenMintAztec", package: "TokenMint"),
            ],
            // libFuzzer supplies main().
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ],
    swiftLanguageModes: [.v6]
)
