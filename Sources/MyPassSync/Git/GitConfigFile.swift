internal import Foundation

/// The git settings file that `git config --local` or `--global` writes, found the way git finds it,
/// so that the file examined before a write is the file written (`git config --file`).
enum GitConfigFile {
    /// A repository's settings: the common git folder's `config`, shared by every linked worktree
    /// (`git rev-parse --git-common-dir`; a worktree's own `.git/worktrees/NAME` holds none).
    static func repository(commonDirectory: String) -> String {
        commonDirectory + "/config"
    }

    /// The user's settings: `GIT_CONFIG_GLOBAL` when set; otherwise `~/.gitconfig`, unless it does not
    /// cannot be read and `$XDG_CONFIG_HOME/git/config` (`configHome`) can.
    static func global(environment: [String: String], home: String, configHome: String) -> String {
        if let explicit = environment["GIT_CONFIG_GLOBAL"], !explicit.isEmpty {
            return explicit.hasPrefix("/") ? explicit : FileManager.default.currentDirectoryPath + "/" + explicit
        }
        let user = home + "/.gitconfig", xdg = configHome + "/git/config"
        return access(user, R_OK) != 0 && access(xdg, R_OK) == 0 ? xdg : user
    }
}
