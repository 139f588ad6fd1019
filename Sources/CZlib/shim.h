#ifndef TOKENMINT_CZLIB_SHIM_H
#define TOKENMINT_CZLIB_SHIM_H
#include <zlib.h>
#endif
