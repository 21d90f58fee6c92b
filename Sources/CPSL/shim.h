/* libpsl: the Public Suffix List (ICANN and PRIVATE sections, wildcard and exception rules). */
#include <libpsl.h>
