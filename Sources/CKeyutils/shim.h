/* libkeyutils: the Linux kernel keyring, for quick unlock (cached derived keys with an expiry). */
#include <keyutils.h>
