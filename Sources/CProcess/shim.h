/* Process-wide protections that Swift cannot call directly (prctl is variadic). */
#include <sys/prctl.h>
#include <sys/resource.h>

/* No core dumps, and the process is not dumpable (no core, no ptrace by same-user processes,
   /proc/self/mem closed to others). Returns 0 on success. */
static inline int mypass_disable_core_dumps(void) {
    struct rlimit none = {0, 0};
    int limit = setrlimit(RLIMIT_CORE, &none);
    int dumpable = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    return limit == 0 && dumpable == 0 ? 0 : -1;
}

/* Whether the process is dumpable (1) or not (0). */
static inline int mypass_is_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
}

/* glibc 2.34+: a spawn file action that closes every descriptor from `from` up, so that a helper
   program inherits nothing but its standard streams (declared here: it needs _GNU_SOURCE). */
#include <spawn.h>
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
static inline int mypass_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/* The calls of a Unix-socket server, without _GNU_SOURCE (with it, <sys/socket.h> brings a
   <sys/select.h> whose fd_set differs from the one the other modules see, and a clean build fails):
   accept4(2) and struct ucred's layout (pid, uid, gid) are declared here. */
#include <sys/socket.h>
extern int accept4(int socket, struct sockaddr *address, socklen_t *length, int flags);
struct mypass_peer_credentials { int pid; unsigned int uid; unsigned int gid; };

/* The user id of the process at the other end of the Unix socket `socket` (SO_PEERCRED, as the
   kernel recorded it at connect time). Returns 0, or -1 with errno. */
static inline int mypass_socket_peer_uid(int socket, unsigned int *uid) {
    struct mypass_peer_credentials credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    if (length != sizeof(credentials)) return -1;
    *uid = credentials.uid;
    return 0;
}

/* accept4(2) with the new descriptor close-on-exec. */
static inline int mypass_accept_close_on_exec(int socket) {
    return accept4(socket, NULL, NULL, SOCK_CLOEXEC);
}
