import Foundation
import KDBXFormat
import MyPassCore
import Testing

@Suite("KeeShare references: KeePassXC's reference text read and written")
struct ShareReferenceTextTests {
    /// A reference as KeePassXC 2.7.4 lays it out (KeeShareSettings: an XML document with base64 values, base64 again).
    static func keePassXCText(types: String, path: String, password: String, group: UUID) -> String {
        let groupBytes = withUnsafeBytes(of: group.uuid) { Data($0) }
        let document = "<?xml version=\"1.0\"?>\n<KeeShare><Type>\(types)</Type><Group>\(groupBytes.base64EncodedString())</Group>"
            + "<Path>\(Data(path.utf8).base64EncodedString())</Path><Password>\(Data(password.utf8).base64EncodedString())</Password></KeeShare>\n"
        return Data(document.utf8).base64EncodedString()
    }

    @Test("KeePassXC's layout is read: type, the reference's UUID, path and password", arguments: [
        ("<Import/>", ShareMode.importing), ("<Export/>", .exporting), ("<Import/><Export/>", .synchronizing), ("", .inactive),
    ])
    func readsKeePassXCLayout(types: String, mode: ShareMode) throws {
        let group = UUID()
        let text = Self.keePassXCText(types: types, path: "../Shared/family.kdbx", password: "fämily-pass", group: group)
        let reference = try ShareReferenceText.decode(text)
        #expect(reference.mode == mode)
        #expect(reference.identifier == group)
        #expect(reference.containerPath == "../Shared/family.kdbx")
        #expect(reference.password.reveal() == "fämily-pass")
        #expect(!reference.description.contains("fämily-pass"))
    }

    @Test("what is written reads back the same, for every mode and odd paths", arguments: ShareMode.allCases)
    func roundTrip(mode: ShareMode) throws {
        for path in ["team.kdbx", "/srv/share/a <b> & c.kdbx", "ünïcode/ß.kdbx"] {
            let reference = ShareReference(mode: mode, containerPath: path, password: ProtectedValue("p<&>\"'"))
            let text = try ShareReferenceText.encode(reference)
            let decoded = try ShareReferenceText.decode(text)
            #expect(decoded.mode == mode && decoded.containerPath == path && decoded.identifier == reference.identifier)
            #expect(decoded.password.reveal() == "p<&>\"'")
            let document = String(decoding: Data(base64Encoded: text) ?? Data(), as: UTF8.self)
            #expect(document.contains("<KeeShare>") && !document.contains("p<&>"), "the password is written as base64 inside the document")
        }
    }

    @Test("junk, another document, a DOCTYPE, no path or an over-long text is refused without its content in the message")
    func refusesJunk() throws {
        let cases: [(String, ShareReferenceText.Failure)] = [
            ("not base64 at all!", .notBase64),
            (Data("<Other/>".utf8).base64EncodedString(), .notAReference),
            (Data("<!DOCTYPE x [<!ENTITY a \"b\">]><KeeShare/>".utf8).base64EncodedString(), .notAReference),
            (Data("<KeeShare><Type><Import/></Type></KeeShare>".utf8).base64EncodedString(), .noPath),
            (String(repeating: "A", count: ShareReferenceText.maximumLength + 4), .tooLong),
        ]
        for (text, failure) in cases {
            #expect(throws: failure) { try ShareReferenceText.decode(text) }
        }
    }

    @Test("a relative container path is resolved against the vault's folder, an absolute one kept")
    func resolvesPaths() {
        let relative = ShareReference(mode: .importing, containerPath: "../share/c.kdbx", password: ProtectedValue(""))
        #expect(relative.resolvedContainerPath(vaultPath: "/home/a/vaults/v.kdbx") == "/home/a/vaults/../share/c.kdbx")
        let absolute = ShareReference(mode: .importing, containerPath: "/srv/c.kdbx", password: ProtectedValue(""))
        #expect(absolute.resolvedContainerPath(vaultPath: "/home/a/v.kdbx") == "/srv/c.kdbx")
        #expect(ShareReference(mode: .importing, containerPath: "c.kdbx.share", password: ProtectedValue("")).isSignedContainer)
    }
}
