#if canImport(Glibc)
import Glibc
#endif
import MyPassCore
import MyPassCrypto
import MyPassSync

// Before any secret exists: no core dumps, not dumpable, no backtrace with memory contents on a
// crash (RELIABILITY.md, Secrets).
ProcessProtection.disableCoreDumps()
ProcessProtection.disableCrashBacktraces()

// SIGINT and SIGTERM end every command within moments, a file replacement in progress finished
// first; `watch`, `sync --watch` and `clip` stop in their own way first (ShutdownSignals).
// The daemon rereads its configuration on SIGHUP: blocked in every thread (before any exists), read
// by a dispatch source.
if CommandLine.arguments.dropFirst().first == "daemon" { ReloadSignal.block() }
ShutdownSignals.install()

// Arguments must be UTF-8: Swift would repair any other bytes with U+FFFD, so an existing file
// would be "not found" and `-o` would write a name the user did not give.
if let position = RawArguments.firstNotUTF8() {
    var streams = StandardStreams()
    streams.printError("error: argument \(position) is not valid UTF-8; file names and values must be UTF-8 (nothing was read or written)")
    exit(ExitCode.usage.rawValue)
}

// The whole program: parse, run, map the outcome to an exit status.
let status = CommandLineTool.run(arguments: Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
