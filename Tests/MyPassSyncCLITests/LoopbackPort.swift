import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Ports on 127.0.0.1 for the servers the tests start.
enum LoopbackPort {
    struct Unavailable: Error {}

    /// A port nothing listens on (bound and released: the server takes it right after).
    static func free() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw Unavailable() }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits (up to 20 s, while `alive` holds) until something accepts connections on `port`.
    static func waitUntilListening(_ port: Int, while alive: () -> Bool) -> Bool {
        var connected = false
        _ = pollUntil(timeout: 20, interval: 0.05) {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            close(descriptor)
            return connected || !alive()
        }
        return connected
    }
}
