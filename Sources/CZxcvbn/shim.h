/* zxcvbn-c: password strength estimation (the estimator KeePassXC uses), from Debian's libzxcvbn-dev. */
#include <zxcvbn.h>
