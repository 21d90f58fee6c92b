/* ISA-L's igzip: the gzip deflate of a save's payload. */
#include <isa-l/igzip_lib.h>

/* The size of the buffer igzip's level 1 works in (a macro Swift does not import). */
static inline uint32_t mypass_isal_level1_buffer_size(void) { return ISAL_DEF_LVL1_DEFAULT; }
