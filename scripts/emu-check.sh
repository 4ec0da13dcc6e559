#!/usr/bin/env bash
# Runs one differential case's kernel in the PTX emulator with its strict
# checks of asynchronous code on (proxy fences, mbarrier transactions,
# wgmma/tcgen05 waits, setmaxnreg) and compares its results with NVIDIA's
# PTX on the same inputs: this compiler's PTX by default, or any PTX file
# (NVIDIA's, a hand-edited one) with --ptx. Usage:
#
#   scripts/emu-check.sh CASE.tileir [--ptx FILE] [--host OBJ] [--target sm_XX] [--seed N]
#
# (--help lists every flag). Exit status: 0 clean, 1 a report or results
# differing from NVIDIA's, 2 bad usage. NVIDIA's tools come from
# $CUDA_ROOT, by default the ones scripts/setup.sh installs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export CUDA_ROOT="${CUDA_ROOT:-$root/.tools/cuda}"
exec cargo run --manifest-path "$root/Cargo.toml" --release --quiet --example emu_check -- "$@"
