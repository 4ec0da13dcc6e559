#!/bin/sh
# Like ptxas rejecting its PTX: text on stderr, status 255.
echo "ptxas application ptx input, line 6; error   : Conflicting directives: .maxntid and .reqntid cannot both be specified" >&2
echo "ptxas fatal   : Ptx assembly aborted due to errors" >&2
exit 255
