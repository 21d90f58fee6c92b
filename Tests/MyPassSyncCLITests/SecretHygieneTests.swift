import Foundation
import Testing
import TestSupport

/// Nothing the tool writes (output, JSON change logs, sync state, backups, moved conflict copies)
/// holds a password or protected value in the clear, and what it creates is private to the user.
@Suite("Secret hygiene of everything the tool writes", .serialized)
struct SecretHygieneTests {
    @Test("the scan finds the fixture secrets where they are meant to be shown (so it can fail)")
    func scanFindsSecrets() throws {
        #expect(SecretScan.secrets.contains(CLIFixtures.kdbx31Password) && SecretScan.secrets.count >= 5)
        let export = try ToolRunner.run(["export", "--password-stdin", CLIFixtures.kdbx31], input: CLIFixtures.kdbx31Password + "\n")
        #expect(SecretScan.firstSecret(in: export.standardOutput) != nil)
        let reveal = try ToolRunner.run(["show", "--reveal", "--password-stdin", CLIFixtures.kdbx31, "/Internet/GitHub"],
                                        input: CLIFixtures.kdbx31Password + "\n")
        #expect(SecretScan.firstSecret(in: reveal.standardOutput) != nil)
    }

    @Test("merges, diffs, conflicts, resolve, backups and watch leave no secret in output or files; files 0600, folders 0700")
    func everythingWritten() throws {
        let root = try CLIFixtures.scratch()
        defer { try? FileManager.default.removeItem(at: root) }
        let password = CLIFixtures.kdbx31Password
        let input = password + "\n"
        let folder = root.appendingPathComponent("sync")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let vault = folder.appendingPathComponent("pw.kdbx").path
        let state = root.appendingPathComponent("state").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: vault)
        let phone = root.appendingPathComponent("phone.kdbx").path
        try FileManager.default.copyItem(atPath: CLIFixtures.kdbx31, toPath: phone)
        var outputs: [String] = []
        func run(_ arguments: [String], input text: String = input) throws {
            let outcome = try ToolRunner.run(arguments, input: text)
            #expect(outcome.status == 0 || outcome.status == 1, "\(arguments.first ?? ""): \(outcome.standardError)")
            outputs.append(outcome.standardOutput + outcome.standardError)
        }
        // Edits on both copies that touch protected values, then every command that reports changes.
        try run(["status", "--state-dir", state, vault])
        try run(["edit", "--password-stdin", "--entry-password-stdin", "--backup", "--state-dir", state, vault, "/Internet/GitHub"],
                input: input + "laptop-Secret-Value-1\n")
        try run(["edit", "--password-stdin", "--entry-password-stdin", "--state-dir", root.appendingPathComponent("phone-state").path, phone,
                 "/Internet/Mail/Fastmail"], input: input + "phone-Secret-Value-2\n")
        try run(["diff", "--json", "--password-stdin", vault, phone])
        try run(["merge", "--json", "--dry-run", "--password-stdin", "--state-dir", state, vault, phone])
        try run(["show", "--password-stdin", vault, "/Internet/GitHub"])
        try run(["search", "--password-stdin", vault, "Fast"])
        try FileManager.default.copyItem(atPath: phone, toPath: folder.appendingPathComponent("pw.sync-conflict-20261129-101010-PHONE.kdbx").path)
        try run(["conflicts", "--merge", "--json", "--password-stdin", "--state-dir", state, folder.path])
        try run(["watch", "--once", "--json", "--password-stdin", "--state-dir", state, vault])
        try run(["merge", "--json", "--backup", "--password-stdin", "--state-dir", state, vault, phone])
        let extraSecrets = ["laptop-Secret-Value-1", "phone-Secret-Value-2"]
        for text in outputs {
            #expect(SecretScan.firstSecret(in: text) == nil && !extraSecrets.contains(where: text.contains), "a command printed a secret")
        }
        // Every file under the scratch folder (vaults, state, base copies, backups, moved copies).
        #expect(SecretScan.filesWithSecrets(under: root).isEmpty, "\(SecretScan.filesWithSecrets(under: root))")
        // Modes: what the tool created is 0600 (files) and 0700 (folders), the merged copies it keeps
        // in the state directory included.
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("merged-conflicts").path))
        for path in [state] + (try FileManager.default.contentsOfDirectory(atPath: state)).filter { $0.hasSuffix(".merged-copies") }.map { state + "/" + $0 } {
            let folderMode = try mode(path)
            #expect(folderMode == 0o700, "\(path) is \(String(folderMode, radix: 8))")
            for name in try FileManager.default.contentsOfDirectory(atPath: path) {
                let file = path + "/" + name
                var isDirectory: ObjCBool = false
                FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory)
                let fileMode = try mode(file)
                #expect(fileMode == (isDirectory.boolValue ? 0o700 : 0o600), "\(file) is \(String(fileMode, radix: 8))")
            }
        }
        #expect(try mode(vault + ".bak") == 0o600)
    }

    private func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? 0) & 0o777
    }
}
