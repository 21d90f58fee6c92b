/* renameat2(2) and statx(2), which glibc declares only under _GNU_SOURCE (Swift's Glibc module does not show them). */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* Atomically swaps the names `from` and `to`, both in the directory `directory` (both must exist).
   Returns 0 or -1 with errno. */
static inline int mypass_rename_exchange(int directory, const char *from, const char *to) {
    return renameat2(directory, from, directory, to, RENAME_EXCHANGE);
}

/* Renames `from` to `to` in the directory `directory` only if `to` does not exist (else -1 with EEXIST). */
static inline int mypass_rename_no_replace(int directory, const char *from, const char *to) {
    return renameat2(directory, from, directory, to, RENAME_NOREPLACE);
}

/* What one statx(2) call says of a file: which file it is, and its times. */
struct mypass_file_times {
    unsigned long long device;
    unsigned long long inode;
    long long size;
    long long modified_seconds, modified_nanoseconds;
    long long changed_seconds, changed_nanoseconds;
    int has_birth;
    long long born_seconds, born_nanoseconds;
};

/* Fills `times` for `name` in the directory `directory` (AT_FDCWD: the working directory; a symlink
   itself, not its target), all from one call. `has_birth` is 0 where the file system keeps no birth
   time. Returns 0, or -1 with errno. */
static inline int mypass_file_times(int directory, const char *name, struct mypass_file_times *times) {
    struct statx status;
    if (statx(directory, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME, &status) != 0) return -1;
    times->device = makedev(status.stx_dev_major, status.stx_dev_minor);
    times->inode = status.stx_ino;
    times->size = (long long)status.stx_size;
    times->modified_seconds = status.stx_mtime.tv_sec;
    times->modified_nanoseconds = status.stx_mtime.tv_nsec;
    times->changed_seconds = status.stx_ctime.tv_sec;
    times->changed_nanoseconds = status.stx_ctime.tv_nsec;
    times->has_birth = (status.stx_mask & STATX_BTIME) != 0;
    times->born_seconds = times->has_birth ? status.stx_btime.tv_sec : 0;
    times->born_nanoseconds = times->has_birth ? status.stx_btime.tv_nsec : 0;
    return 0;
}

