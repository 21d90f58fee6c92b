/* renameat2(2) and statx(2), which glibc declares only under _GNU_SOURCE (Swift's Glibc module does not show them). */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

/* Atomically swaps the names `from` and `to`, both in the directory `directory` (both must exist).
   Returns 0 or -1 with errno. */
static inline int mypass_rename_exchange(int directory, const char *from, const char *to) {
    return renameat2(directory, from, directory, to, RENAME_EXCHANGE);
}

/* Renames `from` to `to` in the directory `directory` only if `to` does not exist (else -1 with EEXIST). */
static inline int mypass_rename_no_replace(int directory, const char *from, const char *to) {
    return renameat2(directory, from, directory, to, RENAME_NOREPLACE);
}

/* When a file was created, as the file system keeps it. */
struct mypass_birth_time {
    long long seconds;
    long long nanoseconds;
};

/* The birth time of `name` in the directory `directory` (AT_FDCWD: the working directory; a symlink
   itself, not its target). Returns 1 and fills `time`, 0 when the file system keeps no birth time,
   -1 with errno when the file cannot be examined. */
static inline int mypass_birth_time(int directory, const char *name, struct mypass_birth_time *time) {
    struct statx status;
    if (statx(directory, name, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &status) != 0) return -1;
    if (!(status.stx_mask & STATX_BTIME)) return 0;
    time->seconds = status.stx_btime.tv_sec;
    time->nanoseconds = status.stx_btime.tv_nsec;
    return 1;
}
