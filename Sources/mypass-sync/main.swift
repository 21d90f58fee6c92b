#if canImport(Glibc)
import Glibc
#endif

// The whole program: parse, run, map the outcome to an exit status.
let status = CommandLineTool.run(arguments: Array(CommandLine.arguments.dropFirst()))
exit(status.rawValue)
