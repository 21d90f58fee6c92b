import Foundation
import KDBXFormat
import MyPassCore
import Testing

/// Hostile XML inside a vault (RELIABILITY.md, "Hostile and broken input"): each is a typed error.
@Suite("Hostile documents and payloads: typed errors, bounded work")
struct HostileDocumentTests {
    /// The plain XML of a one-entry vault (with one history item), as this project writes it.
    static func document() throws -> String {
        var vault = Vault.empty(name: "tiny", at: Timestamp(unixSeconds: 1_700_000_000))
        vault = try vault.addingEntry(title: "Mail", password: "secret", to: vault.root.uuid, at: Timestamp(unixSeconds: 1_700_000_000)).vault
        let id = vault.root.entries[0].uuid
        vault = try vault.updatingEntry(id, at: Timestamp(unixSeconds: 1_700_000_100)) { $0.setField("URL", FieldValue("https://mail", isProtected: false)) }
        return String(decoding: try KDBXWriter.plainXML(vault), as: UTF8.self)
    }

    /// `document()` with the first occurrence of `target` replaced.
    static func variant(_ target: String, _ replacement: String) throws -> Data {
        let text = try document()
        guard let range = text.range(of: target) else { throw KDBXError.corrupt("test fixture lacks \(target)") }
        return Data(text.replacingCharacters(in: range, with: replacement).utf8)
    }

    @Test("the unmodified document reads (the variants below differ from it in one place)")
    func baseline() throws {
        #expect(try KDBXReader.vault(fromPlainXML: Data(Self.document().utf8)).root.entries.count == 1)
    }

    @Test("empty and self-closing elements where KeePass and KeePassXC write them read as empty values", arguments: [
        ("</Meta>", "<CustomData/><CustomIcons/><Binaries/></Meta>"),
        ("</Meta>", "<Binaries><Binary ID=\"0\" Compressed=\"True\"/><Binary ID=\"1\"/></Binaries></Meta>"),
        ("<Value ProtectInMemory=\"True\">secret</Value>", "<Value ProtectInMemory=\"True\"/>"),
        ("<Value ProtectInMemory=\"True\">secret</Value>", "<Value ProtectInMemory=\"True\"></Value>"),
        ("<Value>Mail</Value>", "<Value/>"),
        ("</Times>", "</Times><CustomData/><AutoType/>"),
        ("</Root>", "<DeletedObjects/></Root>"),
    ])
    func emptyElements(target: String, replacement: String) throws {
        let vault = try KDBXReader.vault(fromPlainXML: Self.variant(target, replacement))
        let entry = try #require(vault.root.entries.first)
        if replacement.contains("Binaries><Binary") {
            // Empty attachments referred to by an entry read as zero bytes.
            let withAttachment = try Self.variant("</Meta>", "<Binaries><Binary ID=\"0\" Compressed=\"True\"/></Binaries></Meta>")
            let text = String(decoding: withAttachment, as: UTF8.self)
                .replacingOccurrences(of: "<History>", with: "<Binary><Key>empty.txt</Key><Value Ref=\"0\"/></Binary><History>")
            let read = try KDBXReader.vault(fromPlainXML: Data(text.utf8))
            let ids = read.root.entries.first?.attachments.map(\.binary) ?? []
            #expect(ids.count == 1 && ids.allSatisfy { read.binaries[$0]?.data.isEmpty == true })
        } else if replacement.contains("ProtectInMemory") {
            #expect(entry.text("Password") == "")
            #expect(entry.fields.first { $0.key == "Password" }?.value.isProtected == true)
        } else if replacement == "<Value/>" {
            #expect(entry.title == "")
        } else {
            #expect(entry.title == "Mail")
        }
    }

    @Test("hostile XML is rejected with a reason", arguments: [
        ("<KeePassFile>", "<!DOCTYPE KeePassFile [<!ELEMENT KeePassFile ANY>]><KeePassFile>", "DOCTYPE"),
        ("<KeePassFile>", "<!DOCTYPE KeePassFile [<!ENTITY boom \"boom\">]><KeePassFile>", "DOCTYPE"),
        ("<Value>Mail</Value>", "<Value>&boom;</Value>", "entit"),
        ("<Value>Mail</Value>", "<Value>Ma&#1;il</Value>", "XML"),
        ("<Value>Mail</Value>", "<Value>Mail</Valu>", "XML"),
        ("</History>", "<Entry><UUID>AAAAAAAAAAAAAAAAAAAAAA==</UUID><History></History></Entry></History>", "History"),
        // A Root anywhere but under KeePassFile: its groups were read and silently dropped.
        ("</Meta>", "<Root><Group><UUID>AAAAAAAAAAAAAAAAAAAAAA==</UUID></Group></Root></Meta>", "Root outside"),
        ("</Times>", "</Times><Root></Root>", "Root outside"),
    ])
    func hostileXML(target: String, replacement: String, reason: String) throws {
        let data = try Self.variant(target, replacement)
        #expect {
            try KDBXReader.vault(fromPlainXML: data)
        } throws: { error in
            guard case KDBXError.corrupt(let detail) = error else { return false }
            return detail.localizedCaseInsensitiveContains(reason)
        }
    }

    @Test("bad values are rejected, not guessed", arguments: [
        "<UUID>not base64!</UUID>",
        "<UUID>AAAA</UUID>",
        "<LastModificationTime>yesterday</LastModificationTime>",
    ])
    func badValues(replacement: String) throws {
        let target = replacement.hasPrefix("<UUID>") ? "<UUID>" : "<LastModificationTime>"
        let text = try Self.document()
        // Replace the first element of that name (with its content) by the bad one.
        let start = try #require(text.range(of: target))
        let endTag = target.replacingOccurrences(of: "<", with: "</")
        let end = try #require(text.range(of: endTag, range: start.upperBound..<text.endIndex))
        let data = Data(text.replacingCharacters(in: start.lowerBound..<end.upperBound, with: replacement).utf8)
        #expect(throws: KDBXError.self) { try KDBXReader.vault(fromPlainXML: data) }
    }

    @Test("an attachment reference to a binary that does not exist is an error")
    func danglingBinaryReference() throws {
        let data = try Self.variant("</Entry>", "<Binary><Key>a.txt</Key><Value Ref=\"7\"/></Binary></Entry>")
        #expect(throws: KDBXError.self) { try KDBXReader.vault(fromPlainXML: data) }
    }

    @Test("nesting deeper than the cap is refused quickly")
    func deepNesting() throws {
        let depth = 100_000
        let deep = String(repeating: "<Group>", count: depth) + String(repeating: "</Group>", count: depth)
        let data = try Self.variant("</Root>", deep + "</Root>")
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            #expect { try KDBXReader.vault(fromPlainXML: data) } throws: { error in
                guard case KDBXError.corrupt(let detail) = error else { return false }
                return detail.contains("nesting")
            }
        }
        // A bound against runaway work (not a speed target): the cap stops the parse at depth 1000.
        #expect(elapsed < .seconds(5))
    }

    @Test("a payload that decompresses beyond the cap is refused (gzip bomb)")
    func decompressionBomb() throws {
        var vault = Vault.empty(name: "bomb", at: Timestamp(unixSeconds: 1_700_000_000))
        vault = try vault.addingEntry(title: "Zeros", password: "x", to: vault.root.uuid, at: Timestamp(unixSeconds: 1_700_000_000)).vault
        let id = vault.root.entries[0].uuid
        vault = try vault.updatingEntry(id, at: Timestamp(unixSeconds: 1_700_000_001)) {
            $0.setField("Notes", FieldValue(String(repeating: "0", count: 8 << 20), isProtected: false))
        }
        let key = try CompositeKey(password: "pw")
        let settings = FormatSettings(version: .v4_0, cipher: .aes256, kdf: .aesKDF(seed: Data(count: 32), rounds: 1), compression: .gzip)
        let (file, _) = try KDBXWriter.serialize(vault, settings: settings, key: key)
        #expect(file.count < 200_000, "8 MB of zeros should compress to a small file (\(file.count) bytes)")
        var limits = ResourceLimits.standard
        limits.maximumPayloadBytes = 1 << 20
        #expect { try KDBXReader.open(file, key: key, limits: limits) } throws: { error in
            guard case KDBXError.resourceCapExceeded = error else { return false }
            return true
        }
        #expect(try KDBXReader.open(file, key: key).vault.root.entries.count == 1)
    }

    @Test("a KDBX 4 block claiming a huge size fails its HMAC check without allocating it")
    func hugeBlockSize() throws {
        let (file, key, _) = try HostileInputTests.smallFile(version: .v4_0, cipher: .aes256)
        let headerLength = try #require(Self.headerLength(of: file))
        var tampered = file
        // The first block starts after the header, its SHA-256 and HMAC: 32-byte block HMAC, then the size.
        let sizeOffset = headerLength + 64 + 32
        tampered.replaceSubrange(sizeOffset..<(sizeOffset + 4), with: [0xF0, 0xFF, 0xFF, 0x7F])
        #expect(throws: KDBXError.self) { try KDBXReader.open(tampered, key: key) }
        tampered.replaceSubrange(sizeOffset..<(sizeOffset + 4), with: [0xFF, 0xFF, 0xFF, 0xFF])  // negative
        #expect(throws: KDBXError.self) { try KDBXReader.open(tampered, key: key) }
        var trailing = file
        trailing.append(contentsOf: [1, 2, 3])
        #expect(throws: KDBXError.self) { try KDBXReader.open(trailing, key: key) }
    }

    /// Where a KDBX 4 outer header ends: after the end-of-header field (id 0, 4-byte length).
    static func headerLength(of file: Data) -> Int? {
        var offset = 12
        let bytes = [UInt8](file)
        while offset + 5 <= bytes.count {
            let id = bytes[offset]
            let length = Int(bytes[offset + 1]) | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]) << 16 | Int(bytes[offset + 4]) << 24
            offset += 5 + length
            if id == 0 { return offset }
        }
        return nil
    }
}
