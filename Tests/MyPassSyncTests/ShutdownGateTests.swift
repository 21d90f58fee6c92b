import Foundation
@testable import SyncFiles
import Testing

/// The gate a shutdown closes is the file system's: a write through it finishes before the close
/// returns, none starts after it, and another file system's writes are not held.
@Suite("The shutdown gate travels with the file system")
struct ShutdownGateTests {
    @Test("closing waits for the replacement in progress; a closed gate holds its own file system's writes, not another's")
    func gatePerFileSystem() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let closing = FileSystem.faultInjecting(), other = FileSystem.faultInjecting()
        let inWrite = DispatchSemaphore(value: 0), finishWrite = DispatchSemaphore(value: 0), closed = DispatchSemaphore(value: 0)
        let folder = try DirectoryHandle(opening: directory.path, on: closing)
        Thread {
            _ = try? DurableFile.replace("slow", in: folder, with: Data("old".utf8), policy: .anything,
                                         verify: { _ in inWrite.signal(); finishWrite.wait() })
        }.start()
        #expect(inWrite.wait(timeout: .now() + 30) == .success, "the write never began")
        Thread { closing.shutdownGate.closeAndWait(); closed.signal() }.start()
        // The close waits for the write: it has not returned while the write is held.
        #expect(closed.wait(timeout: .now() + 0.5) == .timedOut, "the close returned while a write was in progress")
        #expect(closing.shutdownGate.isWriting)
        finishWrite.signal()
        #expect(closed.wait(timeout: .now() + 30) == .success, "the close never returned after the write finished")
        #expect(FileManager.default.contents(atPath: directory.appendingPathComponent("slow").path) == Data("old".utf8))
        // Another file system's writes go on.
        let otherFolder = try DirectoryHandle(opening: directory.path, on: other)
        _ = try DurableFile.replace("other", in: otherFolder, with: Data("written".utf8), policy: .anything)
        #expect(FileManager.default.contents(atPath: directory.appendingPathComponent("other").path) == Data("written".utf8))
    }
}
