#!/bin/sh
# Leaves a grandchild holding the pipes, records both pids, then hangs.
sleep 300 &
echo $! > "$(dirname "$0")/grandchild.pid"
echo $$ > "$(dirname "$0")/hang.pid"
wait
