// The public header compiles alone, and twice, as C++.
#include "tileiras.h"
#include "tileiras.h"

int tileiras_header_alone_cxx() { return TILEIRAS_SUCCESS; }
