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
