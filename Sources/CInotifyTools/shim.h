/* libinotifytools: watching vault directories. Not thread-safe: owned from one place in MyPassSync. */
#include <inotifytools/inotifytools.h>
#include <inotifytools/inotify.h>
