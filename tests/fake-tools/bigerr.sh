#!/bin/sh
# Several MB on stderr and some on stdout, then failure.
echo "start"
head -c 6000000 /dev/zero | tr '\0' 'e' >&2
echo "middle"
head -c 3000000 /dev/zero | tr '\0' 'o'
echo "end" >&2
exit 3
