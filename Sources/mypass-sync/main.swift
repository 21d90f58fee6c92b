#if canImport(Glibc)
import Glibc
#endif
import MyPassCrypto
import MyPassSync

// Before any secret exists: no core dumps, not dumpable (RELIABILITY.md, Secrets).
ProcessProtection.disableCoreDumps()

// Test convenience (documented in the README): faults planned in MYPASS_SYNC_FAULTS.
SystemCalls.injectFromEnvironment()

// The whole program: parse, run, map the outcome to an exit status.
let status = CommandLineTool.run(arguments: Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
