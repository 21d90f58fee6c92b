import Foundation
import MyPassCrypto
import Testing

@Suite("SecureBytes, constant-time comparison and random bytes")
struct SecureBytesTests {
    @Test("copies are independent (copy-on-write)")
    func copyOnWrite() {
        let original = SecureBytes(bytes: [1, 2, 3])
        var copy = original
        copy.withUnsafeMutableBytes { $0[0] = 9 }
        #expect(original.unprotectedData() == Data([1, 2, 3]))
        #expect(copy.unprotectedData() == Data([9, 2, 3]))
    }

    @Test("equality compares contents and length")
    func equality() {
        #expect(SecureBytes(bytes: [1, 2, 3]) == SecureBytes(bytes: [1, 2, 3]))
        #expect(SecureBytes(bytes: [1, 2, 3]) != SecureBytes(bytes: [1, 2, 4]))
        #expect(SecureBytes(bytes: [1, 2, 3]) != SecureBytes(bytes: [1, 2]))
        #expect(SecureBytes(count: 0) == SecureBytes(bytes: []))
        #expect(ConstantTime.isEqual(Data([5, 6]), [UInt8]([5, 6])))
        #expect(!ConstantTime.isEqual(Data([5, 6]), [UInt8]([5, 7])))
    }

    @Test("description and debugDescription never show the bytes")
    func noSecretInDescription() {
        let secret = SecureBytes(bytes: Array("hunter2".utf8))
        for text in [secret.description, secret.debugDescription, "\(secret)", String(reflecting: secret)] {
            #expect(!text.contains("hunter2"))
            #expect(!text.contains("104"))  // 'h' as a decimal byte
            #expect(text.contains("7 bytes"))
        }
    }

    @Test("appending and subranges")
    func appendAndSlice() {
        let joined = SecureBytes(bytes: [1, 2]).appending(Data([3, 4, 5]))
        #expect(joined.unprotectedData() == Data([1, 2, 3, 4, 5]))
        #expect(joined.subrange(1..<4).unprotectedData() == Data([2, 3, 4]))
        #expect(SecureBytes(count: 0).appending(Data()).isEmpty)
    }

    @Test("small buffers are locked in memory")
    func memoryLocked() {
        #expect(SecureBytes(count: 64).isMemoryLocked)
        #expect(!SecureBytes(count: 0).isMemoryLocked)
    }

    @Test("random bytes have the requested length and differ between calls")
    func randomBytes() throws {
        let first = try RandomBytes.data(count: 32)
        let second = try RandomBytes.data(count: 32)
        #expect(first.count == 32)
        #expect(first != second)
        #expect(try SecureBytes(randomCount: 32) != SecureBytes(randomCount: 32))
        #expect(try RandomBytes.data(count: 0).isEmpty)
        #expect(throws: CryptoError.self) { try RandomBytes.data(count: -1) }
    }
}
