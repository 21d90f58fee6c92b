import Foundation
@_spi(Fuzzing) import KDBXFormat

/// The KDBX 4 HMAC block stream and the KDBX 3.1 hashed block stream, on the same input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBlocks(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    _ = try? FuzzingEntryPoints.readHMACBlocks(data)
    _ = try? FuzzingEntryPoints.readHashedBlocks(data)
    return 0
}
