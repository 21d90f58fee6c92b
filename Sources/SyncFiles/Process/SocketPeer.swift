internal import CProcess

/// The calls of a Unix-socket server that glibc declares only under `_GNU_SOURCE` (declared in `CProcess`).
public enum SocketPeer {
    /// The user id of the process connected on `socket` (`SO_PEERCRED`), or nil when it cannot be told.
    public static func userID(of socket: Int32) -> UInt32? {
        var uid: UInt32 = 0
        return mypass_socket_peer_uid(socket, &uid) == 0 ? uid : nil
    }

    /// The next connection on the listening `socket`, its descriptor close-on-exec (`accept4`); -1 with errno.
    public static func accept(on socket: Int32) -> Int32 {
        mypass_accept_close_on_exec(socket)
    }
}
