/* ISA-L's igzip: gzip in and out (and its CRC-32, which the tests use to build gzip headers). */
#include <isa-l/igzip_lib.h>
#include <isa-l/crc.h>

/* The size of the buffer igzip's level 1 works in (a macro Swift does not import). */
static inline uint32_t mypass_isal_level1_buffer_size(void) { return ISAL_DEF_LVL1_DEFAULT; }
