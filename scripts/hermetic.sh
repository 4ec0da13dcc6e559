#!/usr/bin/env bash
# Runs a command with everything beside the checkout hidden: in a private
# mount namespace, each folder next to the repository's root gets an empty
# read-only folder mounted over it, so a test or script that reads outside
# the repository fails instead of passing on data a fresh clone lacks.
#
#   bash scripts/hermetic.sh COMMAND [ARG ...]
#
# Folders holding what the run itself needs stay visible: HOME, CARGO_HOME,
# RUSTUP_HOME, the temporary folder and the folders of cargo, rustc,
# python3 and cc. Nothing is hidden when the root's parent is `/` or HOME.
# Making the namespace needs root (or user namespaces); without it the
# command runs as it is, with a word, except in CI, which insists.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd -P)"
parent="$(dirname "$root")"
[ $# -gt 0 ] || { echo "usage: hermetic.sh COMMAND [ARG ...]" >&2; exit 2; }

# Set on every path, so a script that runs itself through this one
# (scripts/test.sh) knows it has.
[ -n "${TILEIRAS_HERMETIC:-}" ] && exec "$@"
export TILEIRAS_HERMETIC=1
if [ "$parent" = / ] || [ "$parent" = "$(cd "$HOME" && pwd -P)" ]; then
  echo "hermetic: the checkout sits in $parent: nothing beside it is hidden" >&2
  exec "$@"
fi
if ! unshare -m --propagation private true 2>/dev/null; then
  if [ -n "${CI:-}" ]; then
    echo "hermetic: cannot make a mount namespace (unshare -m) to hide what lies beside the checkout" >&2
    exit 1
  fi
  echo "hermetic: unshare -m needs root: what lies beside the checkout stays visible" >&2
  exec "$@"
fi

# The paths the run needs, resolved.
keep=("$HOME" "${CARGO_HOME:-$HOME/.cargo}" "${RUSTUP_HOME:-$HOME/.rustup}" "${TMPDIR:-/tmp}")
for tool in cargo rustc python3 cc; do
  t="$(command -v "$tool" 2>/dev/null)" && keep+=("$(dirname "$(readlink -f "$t")")")
done
hide=()
for d in "$parent"/* "$parent"/.[!.]*; do
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  d="$(cd "$d" && pwd -P)"
  [ "$d" = "$root" ] && continue
  needed=
  for k in "${keep[@]}"; do
    k="$(readlink -f "$k" 2>/dev/null || echo "$k")"
    case "$k/" in "$d"/*) needed=1 ;; esac
  done
  [ -n "$needed" ] || hide+=("$d")
done
echo "hermetic: hiding ${#hide[@]} folder(s) beside the checkout"
exec unshare -m --propagation private bash -c '
  n=$1; shift
  for d in "${@:1:$n}"; do
    mount -t tmpfs -o ro,size=4k hidden "$d" || exit 1
  done
  shift "$n"
  exec "$@"' _ "${#hide[@]}" "${hide[@]}" "$@"
