import Foundation
import MyPassCore
import Testing

@Suite("mypass-sync help, version and usage errors (end to end)")
struct HelpAndVersionTests {
    @Test("--version prints the version on stdout and exits 0", arguments: [["--version"], ["version"]])
    func version(arguments: [String]) throws {
        let outcome = try ToolRunner.run(arguments)
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput == "mypass-sync \(ProductInfo.version)\n")
        #expect(outcome.standardError.isEmpty)
    }

    @Test("--help and no arguments print the overview with every command and exit 0", arguments: [["--help"], ["-h"], [], ["help"]])
    func overview(arguments: [String]) throws {
        let outcome = try ToolRunner.run(arguments)
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput.hasPrefix("OVERVIEW: "))
        #expect(outcome.standardOutput.contains("USAGE: mypass-sync <command>"))
        #expect(outcome.standardOutput.contains("EXIT CODES:"))
        for command in ["help", "version"] {
            #expect(outcome.standardOutput.contains("\n  \(command) "))
        }
        #expect(outcome.standardError.isEmpty)
    }

    @Test("each command has its own help", arguments: [["help", "version"], ["version", "--help"], ["help", "help"]])
    func commandHelp(arguments: [String]) throws {
        let outcome = try ToolRunner.run(arguments)
        #expect(outcome.status == 0)
        #expect(outcome.standardOutput.hasPrefix("OVERVIEW: "))
        #expect(outcome.standardOutput.contains("USAGE: mypass-sync \(arguments.first == "help" ? arguments[1] : arguments[0])"))
    }

    @Test("usage errors go to stderr with a hint and exit 2", arguments: [
        ["frobnicate"], ["help", "frobnicate"], ["version", "extra"], ["help", "a", "b"],
    ])
    func usageError(arguments: [String]) throws {
        let outcome = try ToolRunner.run(arguments)
        #expect(outcome.status == 2)
        #expect(outcome.standardOutput.isEmpty)
        #expect(outcome.standardError.hasPrefix("error: "))
        #expect(outcome.standardError.contains("See 'mypass-sync "))
    }
}
