import Foundation
import KDBXFormat
import MyPassCore
import MyPassCrypto
import TestSupport

/// Copies of one base vault on several devices, each edited by a real client: pykeepass
/// (`Fixtures/pykeepass_device.py`, one process for many jobs), keepassxc-cli, or this library.
struct ClientDevices {
    static let password = "devices-pässword"
    /// Cheap settings: the KDF is not what these tests are about.
    static let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(repeating: 7, count: 32), rounds: 100))

    let directory: URL
    let key: CompositeKey

    /// Writes `base` as base.kdbx and one copy per device into a new temporary directory.
    static func make(_ base: Vault, devices: [String], in parent: URL? = nil) throws -> ClientDevices {
        let directory = (parent ?? FileManager.default.temporaryDirectory).appendingPathComponent("mypass-devices-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = try CompositeKey(password: password)
        let file = try KDBXWriter.serialize(base, settings: settings, key: key).file
        for name in ["base"] + devices { try file.write(to: directory.appendingPathComponent("\(name).kdbx")) }
        return ClientDevices(directory: directory, key: key)
    }

    func path(_ device: String) -> URL { directory.appendingPathComponent("\(device).kdbx") }

    func open(_ device: String) throws -> Vault {
        try KDBXReader.open(Data(contentsOf: path(device)), key: key).vault
    }

    /// `device`'s file opened: its content and the format it was read in.
    func openFile(_ device: String) throws -> OpenedVault {
        try KDBXReader.open(Data(contentsOf: path(device)), key: key)
    }

    func write(_ vault: Vault, as device: String, settings: FormatSettings = settings) throws {
        try KDBXWriter.serialize(vault, settings: settings, key: key).file.write(to: path(device))
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// One device's pykeepass edits: operations as `pykeepass_device.py` documents them, the first at `clock`.
    struct PyJob {
        let device: String
        let clock: Timestamp
        let ops: [[String: Any]]
    }

    /// Applies the jobs with pykeepass, in one python process.
    func pykeepass(_ jobs: [PyJob]) throws {
        try Self.pykeepass(jobs.map { (path($0.device), $0.clock, $0.ops) })
    }

    /// Applies jobs on any vault files (of any `ClientDevices`) with pykeepass, in one python process.
    static func pykeepass(_ jobs: [(path: URL, clock: Timestamp, ops: [[String: Any]])]) throws {
        guard !jobs.isEmpty else { return }
        let document: [String: Any] = ["jobs": jobs.map { ["path": $0.path.path, "password": password, "clock": $0.clock.iso8601, "ops": $0.ops] }]
        let input = try JSONSerialization.data(withJSONObject: document)
        let script = FixtureVault.fixturesDirectory.appendingPathComponent("pykeepass_device.py")
        let outcome = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path], input: input)
        guard outcome.status == 0 else { throw ReferenceTools.Failure(description: "pykeepass device: \(outcome.standardError)") }
    }

    /// Runs keepassxc-cli on `device`'s file (`arguments` without the file; `target` after it).
    func keepassxc(_ device: String, _ command: String, _ options: [String] = [], _ target: String, extraInput: String = "") throws {
        try Self.keepassxc([command, "-q"] + options + [path(device).path, target], extraInput: extraInput)
    }

    static func keepassxc(_ arguments: [String], extraInput: String = "") throws {
        let outcome = try ProcessRunner.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["keepassxc-cli"] + arguments,
            input: Data((password + "\n" + extraInput).utf8), environment: ["QT_QPA_PLATFORM": "offscreen"])
        guard outcome.status == 0 else { throw ReferenceTools.Failure(description: "keepassxc-cli \(arguments[0]): \(outcome.standardError)") }
    }
}

extension Timestamp {
    /// This time `seconds` later.
    func adding(_ seconds: Int64) -> Timestamp { Timestamp(secondsSinceYearOne: secondsSinceYearOne + seconds) }
}
