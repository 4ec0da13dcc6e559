/* The public header compiles alone, and twice, in strict C99. */
#include "tileiras.h"
#include "tileiras.h"

int tileiras_header_alone_c(void) { return TILEIRAS_SUCCESS; }
