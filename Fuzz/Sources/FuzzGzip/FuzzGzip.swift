import Foundation
@_spi(Fuzzing) import KDBXFormat

/// The gzip inflater as a payload reaches it: the first byte sets the size of the pieces (1-255)
/// the rest is fed in, so that headers, blocks and trailers are cut at every place.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGzip(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let stream = Data(bytes: bytes + 1, count: count - 1)
    _ = try? FuzzingEntryPoints.inflateGzip(stream, pieceSize: Int(bytes[0]))
    return 0
}
