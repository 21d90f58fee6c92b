internal import Foundation
internal import MyPassSync
#if canImport(Glibc)
internal import Glibc
#endif

/// SIGINT and SIGTERM end any command within a few seconds, writing nothing half: they are blocked
/// in every thread from the start of the process (`install`, before any thread exists, so that
/// every later thread inherits the mask) and read by dispatch signal sources (signalfd), so that a
/// key derivation or a blocking call in any thread cannot hold them off. A command that stops in its
/// own way (`watch` between checks, `sync --watch` between rounds, `clip` clearing the clipboard)
/// registers a stop and has `grace` seconds for it; otherwise, or after the grace, the process ends
/// with 128 + the signal's number once a file replacement in progress has finished
/// (the file systems' `ShutdownGate`), the terminal put back if a password prompt was showing.
final class ShutdownSignals: Sendable {
    private static let numbers = [SIGINT, SIGTERM]
    /// How long a registered stop has before the process is ended anyway.
    static let grace: TimeInterval = 3
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    private static let lock = NSLock()
    nonisolated(unsafe) private static var stops: [ObjectIdentifier: @Sendable () -> Void] = [:]
    nonisolated(unsafe) private static var order: [ObjectIdentifier] = []

    /// Blocks the signals in this thread and all threads started from now on, and starts reading them.
    static func install() {
        var set = sigset_t()
        sigemptyset(&set)
        for number in numbers { sigaddset(&set, number) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
        sources = numbers.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { received(number) }
            source.resume()
            return source
        }
    }

    /// Registers `onSignal` as the command's own stop until `cancel()`.
    init(onSignal: @escaping @Sendable () -> Void) {
        Self.lock.withLock {
            Self.stops[ObjectIdentifier(self)] = onSignal
            Self.order.append(ObjectIdentifier(self))
        }
    }

    /// The command's own stop is no longer wanted.
    func cancel() {
        Self.lock.withLock {
            Self.stops[ObjectIdentifier(self)] = nil
            Self.order.removeAll { $0 == ObjectIdentifier(self) }
        }
    }

    private static func received(_ number: Int32) {
        let stop = lock.withLock { order.last.flatMap { stops[$0] } }
        guard let stop else { end(number) }
        stop()
        DispatchQueue.global().asyncAfter(deadline: .now() + grace) { end(number) }
    }

    /// Ends the process once no file replacement is in progress.
    private static func end(_ number: Int32) -> Never {
        // The gates of every file system this process writes through: the commands' (a debug build's
        // planned faults have one of their own) and the real one.
        CommandFileSystem.current.shutdownGate.closeAndWait()
        FileSystem.real.shutdownGate.closeAndWait()
        TerminalRestore.restore()
        _exit(128 + number)
    }
}
