import Foundation

// Figures, not pass/fail. `swift run -c release mypass-bench [crypto | vault [N] | merge [N] | watch [N] | open FILE | deflate PAYLOAD REPS | generate N DIR | quick-unlock store|open FILE]`.
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case nil, "crypto":
    try runCryptoBenchmarks()
case "vault":
    let entries = arguments.count > 1 ? Int(arguments[1]) ?? 10_000 : 10_000
    try runVaultBenchmark(entries: entries, directory: FileManager.default.temporaryDirectory)
case "merge":
    let entries = arguments.count > 1 ? Int(arguments[1]) ?? 10_000 : 10_000
    try runMergeBenchmark(entries: entries, directory: FileManager.default.temporaryDirectory)
case "watch":
    let entries = arguments.count > 1 ? Int(arguments[1]) ?? 1_000 : 1_000
    try runWatchBenchmark(entries: entries)
case "generate":
    // The benchmark workloads without timing them (for scripts/bench): bench-N.kdbx and the merge files.
    guard arguments.count == 3, let entries = Int(arguments[1]) else { fatalError("usage: mypass-bench generate ENTRIES DIR") }
    let directory = URL(fileURLWithPath: arguments[2])
    try writeBenchmarkVault(entries: entries, directory: directory)
    _ = try writeMergeWorkload(entries: entries, directory: directory)
case "quick-unlock":
    guard arguments.count == 3 else { fatalError("usage: mypass-bench quick-unlock store|open FILE") }
    try runQuickUnlockBenchmark(mode: arguments[1], path: arguments[2])
case "deflate":
    // The save's deflate on a payload file (scripts/bench writes the benchmark vault's): median of REPS.
    guard arguments.count == 3, let repetitions = Int(arguments[2]) else { fatalError("usage: mypass-bench deflate PAYLOAD REPS") }
    try runDeflateBenchmark(path: arguments[1], repetitions: repetitions)
case "open":
    guard arguments.count == 2 else { fatalError("usage: mypass-bench open FILE") }
    try runOpenBenchmark(path: arguments[1])
default:
    print("usage: mypass-bench [crypto | vault [ENTRIES] | merge [ENTRIES] | watch [ENTRIES] | open FILE | deflate PAYLOAD REPS | generate ENTRIES DIR]")
}
