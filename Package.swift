// swift-tools-version: 6.0
import PackageDescription

/// Settings every Swift target shares: Swift 6 language mode (strict concurrency) plus the
/// upcoming features that keep APIs explicit about existentials and imports.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The fault plan and pause hooks the tests drive through the environment exist only in debug
/// builds (what `swift test` runs); the release build that `scripts/install` ships has none.
let testHookSettings: [SwiftSetting] = [.define("MYPASS_TEST_HOOKS", .when(configuration: .debug))]

let package = Package(
    name: "mypass-sync",
    products: [
        .executable(name: "mypass-sync", targets: ["mypass-sync"]),
        .library(name: "MyPassCore", targets: ["MyPassCore"]),
        .library(name: "KDBXFormat", targets: ["KDBXFormat"]),
        .library(name: "MyPassMerge", targets: ["MyPassMerge"]),
        .library(name: "MyPassSync", targets: ["MyPassSync"]),
    ],
    targets: [
        // System-library shims: a module map and one header each, installed from Debian packages.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CArgon2", pkgConfig: "libargon2", providers: [.apt(["libargon2-dev"])]),
        .systemLibrary(name: "CISAL", pkgConfig: "libisal", providers: [.apt(["libisal-dev"])]),
        .systemLibrary(name: "CGcrypt", pkgConfig: "libgcrypt", providers: [.apt(["libgcrypt20-dev"])]),
        .systemLibrary(name: "CInotifyTools", providers: [.apt(["libinotifytools0-dev"])]),
        .systemLibrary(name: "CProcess"),
        .systemLibrary(name: "CGNUCalls"),
        .systemLibrary(name: "CPSL", pkgConfig: "libpsl", providers: [.apt(["libpsl-dev"])]),
        .systemLibrary(name: "CIDN2", pkgConfig: "libidn2", providers: [.apt(["libidn2-dev"])]),
        .systemLibrary(name: "CKeyutils", providers: [.apt(["libkeyutils-dev"])]),
        .systemLibrary(name: "CLibsecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev"])]),
        .systemLibrary(name: "CYkpers", pkgConfig: "ykpers-1", providers: [.apt(["libykpers-1-dev"])]),
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .systemLibrary(name: "CZxcvbn", providers: [.apt(["libzxcvbn-dev"])]),
        // No pkgConfig: its flags would link libcurl, which the shim opens when a transfer needs it.
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CNotify", pkgConfig: "libnotify", providers: [.apt(["libnotify-dev"])]),

        // The only Swift code that calls crypto C APIs.
        .target(
            name: "MyPassCrypto",
            dependencies: ["CSodium", "CArgon2", "CGcrypt"],
            swiftSettings: strictSettings
        ),
        // The vault model as immutable values and the edits on it; no I/O.
        .target(
            name: "MyPassCore",
            dependencies: ["MyPassCrypto", "CPSL", "CIDN2", "CZxcvbn"],
            swiftSettings: strictSettings
        ),
        // Bytes <-> Vault: the KDBX 3.1 / 4.x container, its XML document, keys and key files.
        // The SAX handlers are hot paths on private state; dynamic exclusivity checks cost ~10% of an open.
        .target(
            name: "KDBXFormat",
            dependencies: ["MyPassCore", "MyPassCrypto", "CISAL", "CLibXML2"],
            swiftSettings: strictSettings
        ),
        // The pure three-way merge and diff of vault snapshots.
        .target(
            name: "MyPassMerge",
            dependencies: ["MyPassCore"],
            swiftSettings: strictSettings
        ),
        // The sync layer, one target per layer; each imports only the layers above it in this list
        // (SwiftPM refuses a cycle, so the compiler keeps the arrows pointing one way).
        // Files and processes without knowing what a vault is: the system-call gate, durable
        // replace, fingerprints, conflict-copy names, sync-engine transfers, child processes.
        .target(
            name: "SyncFiles",
            dependencies: ["MyPassCrypto", "CGNUCalls", "CProcess"],
            swiftSettings: strictSettings + testHookSettings
        ),
        // What this device keeps outside the synced folder: the base, pending versions, retired
        // copies, the merge journal, the device settings.
        .target(
            name: "SyncState",
            dependencies: ["SyncFiles", "MyPassCore", "MyPassCrypto", "KDBXFormat"],
            swiftSettings: strictSettings
        ),
        // Vault files and sessions, and the one pipeline that writes a merged vault (MergeCommit):
        // merge jobs, conflict-copy folding, undo, quick unlock.
        .target(
            name: "SyncCommit",
            dependencies: ["SyncState", "SyncFiles", "MyPassCore", "MyPassCrypto", "KDBXFormat", "MyPassMerge", "CKeyutils"],
            swiftSettings: strictSettings + testHookSettings
        ),
        // The watch: folder snapshots, the pure reconciler, the per-vault watcher, the engine.
        .target(
            name: "SyncWatch",
            dependencies: ["SyncCommit", "SyncState", "SyncFiles", "MyPassCore", "MyPassCrypto", "KDBXFormat", "MyPassMerge", "CInotifyTools"],
            swiftSettings: strictSettings
        ),
        // Remotes: WebDAV and SFTP through libcurl, kept in step by a verified compare-and-swap.
        .target(
            name: "SyncRemote",
            dependencies: ["SyncCommit", "SyncState", "SyncFiles", "MyPassCore", "MyPassCrypto", "KDBXFormat", "MyPassMerge", "CCurl"],
            swiftSettings: strictSettings + testHookSettings
        ),
        // Credentials without a prompt: a password command, the desktop keyring (libsecret).
        .target(
            name: "SyncCredentials",
            dependencies: ["SyncCommit", "SyncState", "SyncFiles", "MyPassCore", "MyPassCrypto", "KDBXFormat", "CLibsecret", "CYkpers"],
            swiftSettings: strictSettings
        ),
        // One process for every vault: its configuration, a watch engine per vault, the control
        // socket, desktop notices (libnotify).
        .target(
            name: "SyncDaemon",
            dependencies: ["SyncWatch", "SyncCredentials", "SyncCommit", "SyncState", "SyncFiles", "MyPassCore", "MyPassCrypto", "KDBXFormat", "CNotify"],
            swiftSettings: strictSettings
        ),
        // What an app embeds: every sync layer (re-exported), plus export, audit, clipboard, word lists.
        .target(
            name: "MyPassSync",
            dependencies: ["SyncFiles", "SyncState", "SyncCommit", "SyncWatch", "SyncRemote", "SyncCredentials", "SyncDaemon", "MyPassCore",
                           "MyPassCrypto", "KDBXFormat", "MyPassMerge"],
            swiftSettings: strictSettings
        ),
        // The command-line tool: arguments, terminal I/O, human and JSON output, exit codes.
        .executableTarget(
            name: "mypass-sync",
            // The sync targets MyPassSync re-exports are named too: an incremental build then
            // recompiles this target when one of them changes its layout.
            dependencies: ["MyPassSync", "SyncFiles", "SyncState", "SyncCommit", "SyncWatch", "SyncRemote", "SyncCredentials", "SyncDaemon",
                           "MyPassCore", "MyPassCrypto", "KDBXFormat"],
            swiftSettings: strictSettings
        ),
        // Prints timings of the primitives (figures, not pass/fail): `swift run -c release mypass-bench`.
        .executableTarget(
            name: "mypass-bench",
            dependencies: ["MyPassCrypto", "MyPassCore", "KDBXFormat", "MyPassMerge", "MyPassSync", "SyncFiles", "SyncState", "SyncCommit",
                           "SyncWatch", "SyncRemote"],
            swiftSettings: strictSettings
        ),

        // Helpers shared by the test targets: fixture manifests, our view of a vault in their terms,
        // the reference tools, running processes, the KeePassXC GUI under Xvfb (Helpers/: their scripts).
        .target(
            name: "TestSupport",
            dependencies: ["MyPassCore"],
            path: "Tests/TestSupport",
            exclude: ["Helpers"],
            swiftSettings: strictSettings
        ),

        .testTarget(
            name: "MyPassCryptoTests",
            dependencies: ["MyPassCrypto"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MyPassCoreTests",
            dependencies: ["MyPassCore"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MyPassMergeTests",
            dependencies: ["MyPassMerge", "MyPassCore", "MyPassCrypto"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MyPassSyncTests",
            dependencies: ["MyPassSync", "SyncFiles", "SyncState", "SyncCommit", "SyncWatch", "SyncRemote", "SyncCredentials", "SyncDaemon", "KDBXFormat", "MyPassCrypto",
                           "MyPassCore", "MyPassMerge", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "KDBXFormatTests",
            dependencies: ["KDBXFormat", "MyPassCore", "MyPassCrypto", "TestSupport", "CISAL"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "InteropTests",
            dependencies: ["mypass-sync", "KDBXFormat", "MyPassCore", "MyPassCrypto", "MyPassMerge", "SyncCommit", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "MyPassSyncCLITests",
            dependencies: ["mypass-sync", "MyPassCore", "MyPassCrypto", "KDBXFormat", "MyPassSync", "SyncFiles", "SyncState", "SyncCommit",
                           "SyncWatch", "SyncRemote", "TestSupport"],
            exclude: ["Helpers"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
