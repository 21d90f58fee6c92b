/* zlib: gzip compression of the KDBX payload. */
#include <zlib.h>
