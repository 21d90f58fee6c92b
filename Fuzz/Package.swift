// swift-tools-version:6.0
// libFuzzer targets for mypass-sync (issue 7). Built only by `scripts/fuzz`, with
// `--sanitize=fuzzer --sanitize=address`; not part of the main package's build.
import PackageDescription

let fuzzTarget = { (name: String) -> Target in
    .executableTarget(name: name, dependencies: [.product(name: "KDBXFormat", package: "mypass-sync"),
                                                 .product(name: "MyPassCore", package: "mypass-sync")])
}

let package = Package(
    name: "mypass-sync-fuzz",
    dependencies: [.package(name: "mypass-sync", path: "..")],
    targets: ["FuzzHeader", "FuzzBlocks", "FuzzGzip", "FuzzXML", "FuzzOpen", "FuzzKeyFile"].map(fuzzTarget),
    swiftLanguageModes: [.v6]
)
