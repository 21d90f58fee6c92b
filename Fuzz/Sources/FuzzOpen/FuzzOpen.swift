import Foundation
import KDBXFormat

/// The whole open path with the seeds' password and caps that keep every KDF run cheap.
nonisolated(unsafe) let key = try! CompositeKey(password: "kxc-fixture-pässword")
let limits = ResourceLimits(maximumArgon2MemoryBytes: 1 << 16, maximumArgon2Iterations: 2, maximumArgon2Parallelism: 2,
                            maximumAESKDFRounds: 16, maximumPayloadBytes: 1 << 24)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOpen(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    _ = try? KDBXReader.open(Data(bytes: bytes, count: count), key: key, limits: limits)
    return 0
}
