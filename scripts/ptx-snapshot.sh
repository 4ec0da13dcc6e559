#!/usr/bin/env bash
# Writes the PTX our tileiras makes (--emit=ptx) of every bytecode file under
# tests/data (the differential sources, the lowering tests' kernels, the corpus,
# the repro and tensor-map kernels) for sm_80, sm_90, sm_100 and sm_120, one
# file per (bytecode, target) under OUT; a compile that fails leaves its status
# and diagnostics in a .err file instead. Two snapshots compare with `diff -r`:
# a change to the lowering that is meant to change nothing must leave none.
#
#   scripts/ptx-snapshot.sh OUT [gpu ...]
#   scripts/ptx-snapshot.sh /tmp/before && (change) && scripts/ptx-snapshot.sh /tmp/after
#   diff -r /tmp/before /tmp/after
#   TILEIRAS=/path/to/other/tileiras scripts/ptx-snapshot.sh /tmp/other   (another build)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: scripts/ptx-snapshot.sh OUT [gpu ...]}"
shift
gpus=("$@")
[ ${#gpus[@]} -gt 0 ] || gpus=(sm_80 sm_90 sm_100 sm_120)
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cargo build --release --quiet --bin tileiras --manifest-path "$here/Cargo.toml"
bin="${TILEIRAS:-$here/target/release/tileiras}"
cd "$here/tests/data"
list="$(mktemp)"
trap 'rm -f "$list"' EXIT
find differential lower corpus repro tensor_map -name '*.tileir*' -type f | sort >"$list"
one() {
    local bin=$1 out=$2 gpu=$3 f=$4
    local dest="$out/$f.$gpu"
    mkdir -p "$(dirname "$dest")"
    local status=0
    "$bin" --gpu-name="$gpu" --emit=ptx -o "$dest.ptx" "$f" 2>"$dest.err" || status=$?
    if [ "$status" -eq 0 ]; then
        rm -f "$dest.err"
    else
        echo "status $status" >>"$dest.err"
    fi
}
export -f one
for gpu in "${gpus[@]}"; do
    xargs -a "$list" -P "$(nproc)" -I{} bash -c 'one "$@"' _ "$bin" "$out" "$gpu" {}
done
echo "ptx-snapshot: $(wc -l <"$list") files x ${#gpus[@]} targets in $out: $(find "$out" -name '*.ptx' | wc -l) PTX, $(find "$out" -name '*.err' | wc -l) errors"
