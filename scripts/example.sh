#!/usr/bin/env bash
# The main job on the bundled example: installs what is needed, builds the
# compiler, compiles examples/vadd_f32.tileir (a cuTile vector add) for sm_90
# and says where the output went.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
export CUDA_ROOT="$root/.tools/cuda"
cargo build --release --bin tileiras
mkdir -p build/example
out="build/example/vadd_f32.cubin"
rm -f "$out"
status=0
target/release/tileiras --gpu-name=sm_90 examples/vadd_f32.tileir -o "$out" || status=$?
if [ "$status" -eq 0 ]; then
  echo "example: wrote $root/$out ($(wc -c <"$out") bytes)"
else
  echo "example: tileiras exited with status $status; no output written" >&2
  exit "$status"
fi
