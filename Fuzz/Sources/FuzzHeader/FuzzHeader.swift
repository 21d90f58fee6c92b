import Foundation
import KDBXFormat

/// The outer header and its KDF parameters (VariantDictionary), then the resource caps.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeader(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    if let header = try? KDBXReader.header(of: data) {
        _ = try? header.kdf.check(against: .standard)
    }
    return 0
}
