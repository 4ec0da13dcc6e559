#!/bin/sh
# Stands in for ptxas and fails the way ptxas does on bad PTX.
echo "fake ptxas failure: line 1; error   : injected by the C API tests" >&2
echo "ptxas fatal   : Ptx assembly aborted due to errors" >&2
exit 255
