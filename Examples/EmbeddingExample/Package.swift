// swift-tools-version: 6.0
import PackageDescription

// An app that embeds mypass-sync, depending on it by git URL and version as any package would.
// `scripts/example` points MYPASS_SYNC_URL at a tagged clone of this checkout; an app names the
// repository where mypass-sync is published.
let url = Context.environment["MYPASS_SYNC_URL"] ?? "https://github.com/mypass/mypass-sync.git"

let package = Package(
    name: "EmbeddingExample",
    dependencies: [
        .package(url: url, from: "0.3.0"),
    ],
    targets: [
        .executableTarget(
            name: "EmbeddingExample",
            dependencies: [
                .product(name: "MyPassSync", package: "mypass-sync"),
                .product(name: "MyPassCore", package: "mypass-sync"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
