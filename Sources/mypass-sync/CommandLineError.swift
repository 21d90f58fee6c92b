/// Errors the command-line layer itself raises.
enum CommandLineError: Error, Equatable {
    /// The arguments do not fit the command; `command` names whose usage to show.
    case usage(message: String, command: String?)
}
