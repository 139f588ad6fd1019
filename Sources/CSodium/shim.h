#ifndef TOKENMINT_CSODIUM_SHIM_H
#define TOKENMINT_CSODIUM_SHIM_H
#include <sodium.h>
#endif
