#ifndef TOKENMINT_CSQLITE_SHIM_H
#define TOKENMINT_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
