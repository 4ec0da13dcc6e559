#!/usr/bin/env bash
# A bounded fuzzing run of every target in fuzz/ (read, lower, assemble),
# each starting from its committed seed corpus (fuzz/seeds/<target>/, the
# project's own bytecode minimised with `cargo fuzz cmin`) plus the inputs
# kept under tests/data/fuzz/. Runs on stable Rust (`--sanitizer none`).
#
#   bash scripts/fuzz-smoke.sh            # FUZZ_SECONDS (default 40) per target
#   FUZZ_SECONDS=3600 bash scripts/fuzz-smoke.sh lower   # one target, an hour
#
# cargo-fuzz, unless installed, goes into .tools/cargo-fuzz. The
# assemble target runs NVIDIA's ptxas (CUDA_ROOT, default .tools/cuda, as
# scripts/setup.sh installs it). A crash stops the run with status 1 and
# names the input libFuzzer saved; keep it as a regression test under
# tests/data/fuzz/ with a line in its expected.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
echo "== fuzz smoke: each fuzz target for a bounded time from its seeds"
seconds=${FUZZ_SECONDS:-40}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(read lower assemble)
fi

# cargo-fuzz: one already installed, else .tools/cargo-fuzz of the checkout.
fuzz_root=$root/.tools/cargo-fuzz
export PATH=$PATH:$fuzz_root/bin
if ! command -v cargo-fuzz >/dev/null; then
    cargo install --locked --quiet --root "$fuzz_root" cargo-fuzz --version '>=0.12, <0.14'
fi
export CUDA_ROOT=${CUDA_ROOT:-$root/.tools/cuda}
if [ ! -x "$CUDA_ROOT/bin/ptxas" ]; then
    echo "fuzz-smoke: no ptxas under $CUDA_ROOT: run scripts/setup.sh" >&2
    exit 1
fi

cd fuzz
cargo fuzz build --sanitizer none
for t in "${targets[@]}"; do
    seeds=seeds/$t
    [ "$t" = assemble ] && seeds=seeds/lower
    corpus=corpus/$t
    mkdir -p "$corpus"
    cp "$seeds"/* "$root"/tests/data/fuzz/*.tileir "$corpus"/
    echo "fuzz-smoke: $t for ${seconds}s from $(ls "$corpus" | wc -l) inputs"
    start=$(date +%s)
    if ! cargo fuzz run --sanitizer none "$t" "$corpus" -- \
        -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=120 \
        -print_final_stats=1 >"corpus/$t.log" 2>&1; then
        tail -n 40 "corpus/$t.log" >&2
        echo "fuzz-smoke: $t failed; the input is in fuzz/artifacts/$t/" >&2
        exit 1
    fi
    grep -E '^stat::number_of_executed_units' "corpus/$t.log" || true
    grep -E '^#[0-9]+[[:space:]]' "corpus/$t.log" | tail -n 1 || true
    echo "fuzz-smoke: $t ok ($(($(date +%s) - start))s)"
done
