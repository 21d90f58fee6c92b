import Foundation
import KDBXFormat

/// The XML layer fed plaintext (the strict SAX parser and the vault document reader).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXML(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    _ = try? KDBXReader.vault(fromPlainXML: Data(bytes: bytes, count: count))
    return 0
}
