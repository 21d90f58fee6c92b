public import Foundation
internal import SyncFiles
internal import SyncState
internal import SyncCommit
internal import SyncWatch
internal import SyncRemote

/// The desktop clipboard, through the command-line tools that own it: `wl-copy`/`wl-paste` under
/// Wayland, else `xclip` or `xsel` under X11. Values go to the tools on standard input, never in
/// their arguments; the tools keep serving the value in the background after `copy` returns.
public struct SystemClipboard: Sendable {
    /// The tool family in use.
    public enum Tool: String, Sendable {
        case wlClipboard = "wl-copy", xclip, xsel
    }

    /// Why there is no clipboard to use.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    /// The tool in use.
    public let tool: Tool
    private let executables: [String: String]
    private let environment: [String: String]

    /// The clipboard of this session: Wayland when `WAYLAND_DISPLAY` is set and `wl-copy` and
    /// `wl-paste` are on the `PATH`, else X11 when `DISPLAY` is set and `xclip` or `xsel` is.
    public static func detect(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> SystemClipboard {
        let path = (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        func find(_ name: String) -> String? {
            path.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        }
        if environment["WAYLAND_DISPLAY"].map({ !$0.isEmpty }) == true, let copy = find("wl-copy"), let paste = find("wl-paste") {
            return SystemClipboard(tool: .wlClipboard, executables: ["wl-copy": copy, "wl-paste": paste], environment: environment)
        }
        if environment["DISPLAY"].map({ !$0.isEmpty }) == true {
            if let xclip = find("xclip") { return SystemClipboard(tool: .xclip, executables: ["xclip": xclip], environment: environment) }
            if let xsel = find("xsel") { return SystemClipboard(tool: .xsel, executables: ["xsel": xsel], environment: environment) }
            throw Unavailable(description: "no clipboard tool: install xclip or xsel (X11) or wl-clipboard (Wayland)")
        }
        if environment["WAYLAND_DISPLAY"].map({ !$0.isEmpty }) == true {
            throw Unavailable(description: "no clipboard tool: install wl-clipboard (Wayland)")
        }
        throw Unavailable(description: "no clipboard: neither WAYLAND_DISPLAY nor DISPLAY is set (no graphical session)")
    }

    /// Puts `value` on the clipboard.
    public func copy(_ value: String) throws {
        let (executable, arguments) = switch tool {
        case .wlClipboard: ("wl-copy", [String]())
        case .xclip: ("xclip", ["-selection", "clipboard", "-in"])
        case .xsel: ("xsel", ["--clipboard", "--input"])
        }
        let status = try run(executable, arguments, input: Data(value.utf8)).status
        guard status == 0 else { throw Unavailable(description: "\(executable) failed (exit status \(status))") }
    }

    /// What the clipboard holds as text; nil when it holds nothing (or something that is not text).
    public func contents() throws -> String? {
        let (executable, arguments) = switch tool {
        case .wlClipboard: ("wl-paste", ["--no-newline"])
        case .xclip: ("xclip", ["-selection", "clipboard", "-out"])
        case .xsel: ("xsel", ["--clipboard", "--output"])
        }
        let result = try run(executable, arguments, input: nil, readingOutput: true)
        return result.status == 0 ? String(decoding: result.output, as: UTF8.self) : nil
    }

    /// Empties the clipboard.
    public func clear() throws {
        let (executable, arguments, input): (String, [String], Data?) = switch tool {
        case .wlClipboard: ("wl-copy", ["--clear"], nil)
        case .xclip: ("xclip", ["-selection", "clipboard", "-in"], Data())
        case .xsel: ("xsel", ["--clipboard", "--clear"], nil)
        }
        let status = try run(executable, arguments, input: input).status
        guard status == 0 else { throw Unavailable(description: "\(executable) could not clear the clipboard (exit status \(status))") }
    }

    /// Empties the clipboard only if it still holds `copied` (something the user copied since is
    /// left alone); true when it was cleared.
    @discardableResult
    public func clear(ifStillHolding copied: String) throws -> Bool {
        guard try contents() == copied else { return false }
        try clear()
        return true
    }

    /// Runs a clipboard tool (see `ChildProcess`: its standard error and, unless read, its standard
    /// output go to /dev/null, so that the process a copy tool leaves behind to serve the clipboard
    /// holds none of the caller's outputs open).
    private func run(_ name: String, _ arguments: [String], input: Data?, readingOutput: Bool = false) throws -> (status: Int32, output: Data) {
        try ChildProcess.run(executables[name] ?? name, arguments, environment: environment, input: input, readingOutput: readingOutput)
    }
}
