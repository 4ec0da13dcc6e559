#!/bin/sh
# Dies of SIGSEGV. FAKE_CORE=1 raises the core limit first; otherwise the
# limit the harness gave is kept. Runs in its own folder so a core lands there.
cd "$(dirname "$0")" || exit 99
if [ "${FAKE_CORE:-}" = 1 ]; then ulimit -c unlimited; fi
if [ "${FAKE_CORE:-}" = 0 ]; then ulimit -c 0; fi
echo "about to crash" >&2
kill -SEGV $$
