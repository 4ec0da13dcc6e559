#!/usr/bin/env bash
# The long differential sweep: every case of tests/differential.rs (NVIDIA's
# PTX against ours in the PTX emulator) with more seeds than CI runs.
#   scripts/differential-sweep.sh [SEEDS] [FILTER]
# SEEDS defaults to 24; FILTER keeps the cases whose name contains it
# (e.g. corpus/, random/p01, targeted/). With DIFFERENTIAL_RANDOM_COUNT set,
# it first writes that many fresh random programs (tests/data/lower/random/gen.py
# with DIFFERENTIAL_RANDOM_SEED, default 7) to a temporary folder and runs
# them instead of the committed ones. DIFFERENTIAL_DUMP=DIR keeps the inputs
# and outputs of every mismatching run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export CUDA_ROOT="${CUDA_ROOT:-$root/.tools/cuda}"
export DIFFERENTIAL_SEEDS="${1:-24}"
export DIFFERENTIAL_FILTER="${2:-}"
if [ -n "${DIFFERENTIAL_RANDOM_COUNT:-}" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$root/.tools/venv/bin/python" tests/data/lower/random/gen.py \
    --count "$DIFFERENTIAL_RANDOM_COUNT" --seed "${DIFFERENTIAL_RANDOM_SEED:-7}" --out "$tmp"
  export DIFFERENTIAL_RANDOM="$tmp"
fi
cargo test --release --test differential -- --nocapture
