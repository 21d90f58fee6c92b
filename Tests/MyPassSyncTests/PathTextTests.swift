import Foundation
import Testing
@testable import MyPassSync
@testable import SyncCommit
@testable import SyncFiles
@testable import SyncRemote
@testable import SyncState
@testable import SyncWatch

@Suite("PathText: the folder of a path, including the one-character names NSString traps on")
struct PathTextTests {
    @Test("folder(of:) for bare names, nested, absolute, root and trailing slashes", arguments: [
        ("s", ""), ("s/", ""), ("a.kdbx", ""), ("x/y", "x"), ("x/y/", "x"), ("a/b/c.kdbx", "a/b"), ("/v", "/"), ("/", "/"),
        ("/home/u/v.kdbx", "/home/u"), ("./s", "."), ("a//b", "a"),
    ])
    func folder(path: String, expected: String) {
        #expect(PathText.folder(of: path) == expected, "\(path)")
    }
}
