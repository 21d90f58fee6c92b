/* libidn2: internationalised domain names (IDNA2008 with the UTS#46 mapping). */
#include <stdlib.h>
#include <idn2.h>
