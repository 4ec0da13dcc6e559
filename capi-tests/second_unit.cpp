// A second translation unit including the header: no duplicate symbols.
#include "tileiras.h"

int second_unit_status() { return tileirasProgramCompile(nullptr); }
