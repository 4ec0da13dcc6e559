#!/bin/sh
# A ptxas stand-in that succeeds: a tiny "cubin" (the ELF magic) on stdout,
# and one line per argument on stderr, so tests can read the argv back.
for a in "$@"; do printf '%s\n' "$a" >&2; done
printf '\177ELF-fake-cubin'
