/* renameat2(2), which glibc declares only under _GNU_SOURCE (Swift's Glibc module does not show it). */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdio.h>

/* Atomically swaps the names `from` and `to`, both in the directory `directory` (both must exist).
   Returns 0 or -1 with errno. */
static inline int mypass_rename_exchange(int directory, const char *from, const char *to) {
    return renameat2(directory, from, directory, to, RENAME_EXCHANGE);
}

/* Renames `from` to `to` in the directory `directory` only if `to` does not exist (else -1 with EEXIST). */
static inline int mypass_rename_no_replace(int directory, const char *from, const char *to) {
    return renameat2(directory, from, directory, to, RENAME_NOREPLACE);
}
