#ifndef TOKENMINT_CZINT_SHIM_H
#define TOKENMINT_CZINT_SHIM_H
#include <zint.h>
#endif
