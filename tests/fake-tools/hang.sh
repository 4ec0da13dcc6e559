#!/bin/sh
# Records its pid, then sleeps far past any test's timeout (same pid).
echo $$ > "$(dirname "$0")/hang.pid"
exec sleep 300
