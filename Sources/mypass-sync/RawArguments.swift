#if canImport(Glibc)
import Glibc
#endif

/// The process's arguments as the bytes the kernel handed over.
enum RawArguments {
    /// The position (1 = the first after the program) of the first argument whose bytes are not
    /// valid UTF-8; nil when all are.
    static func firstNotUTF8() -> Int? {
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))
            if String(validating: bytes, as: UTF8.self) == nil { return index }
        }
        return nil
    }
}
