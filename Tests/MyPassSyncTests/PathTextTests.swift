import Foundation
import Testing
@testable import MyPassSync
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncRemote
@testable import SyncState
@testable import SyncWatch
import TestSupport

@Suite("PathText: the folder of a path, including the one-character names NSString traps on")
struct PathTextTests {
    @Test("folder(of:) for bare names, nested, absolute, root and trailing slashes", arguments: [
        ("s", ""), ("s/", ""), ("a.kdbx", ""), ("x/y", "x"), ("x/y/", "x"), ("a/b/c.kdbx", "a/b"), ("/v", "/"), ("/", "/"),
        ("/home/u/v.kdbx", "/home/u"), ("./s", "."), ("a//b", "a"),
    ])
    func folder(path: String, expected: String) {
        #expect(PathText.folder(of: path) == expected, "\(path)")
    }

    @Test("name(of:) and pathExtension(of:) for bare names, nested, root and trailing slashes", arguments: [
        ("s", "s", ""), ("s/", "s", ""), ("a.kdbx", "a.kdbx", "kdbx"), ("x/y.tar.gz", "y.tar.gz", "gz"), ("/v", "v", ""), ("/", "/", ""),
        ("/home/u/.hidden", ".hidden", ""), ("a//b/", "b", ""),
    ])
    func name(path: String, expected: String, pathExtension: String) {
        #expect(PathText.name(of: path) == expected, "\(path)")
        #expect(PathText.pathExtension(of: path) == pathExtension, "\(path)")
    }

    @Test("generated paths of slashes, controls and separators (names NSString traps on): the name is what follows the last slash", arguments: 0..<20)
    func generatedNames(seed: UInt64) {
        var random = SeededRandom(seed: 0x9A7E &+ seed)
        let alphabet: [Unicode.Scalar] = ["/", "/", "\u{1B}", "\u{2028}", "\u{85}", "\n", "x", "é", "."]
        for _ in 0..<500 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...16, using: &random) { scalars.append(alphabet.randomElement(using: &random)!) }
            let path = "/s/" + String(scalars)
            let parts = path.split(separator: "/")
            #expect(PathText.name(of: path) == (parts.last.map(String.init) ?? "/"), "seed \(seed): \(path.debugDescription)")
            #expect(PathText.joining(PathText.folder(of: path), PathText.name(of: path)).split(separator: "/") == parts, "seed \(seed)")
        }
    }
}
