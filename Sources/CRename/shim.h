/* renameat2(2), which glibc declares only under _GNU_SOURCE (Swift's Glibc module does not show it). */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>

/* Atomically swaps the two names (both must exist). Returns 0 or -1 with errno. */
static inline int mypass_rename_exchange(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE);
}

/* Renames only if `to` does not exist (else -1 with EEXIST). */
static inline int mypass_rename_no_replace(const char *from, const char *to) {
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
}
