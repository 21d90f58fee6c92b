import Foundation
import KDBXFormat

/// The key-file parser (XML 1.0 / 2.0 with hash check, 32 bytes, 64 hex, anything else hashed).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyFile(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    _ = try? CompositeKey(password: nil as String?, keyFileContents: Data(bytes: bytes, count: count))
    return 0
}
