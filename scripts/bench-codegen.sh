#!/usr/bin/env bash
# Compiles corpus kernels (tests/data/corpus) with our pipeline and with
# NVIDIA's tileiras (its PTX captured by a ptxas wrapper beside a copy of it),
# assembles both with the real ptxas (tileiras' own flags) and prints SASS
# instruction counts (the whole kernel without the NOPs that pad it, and its
# largest loop: the instructions from a backward branch's target up to the
# branch) and registers side by side.
#   scripts/bench-codegen.sh [--gpu sm_90] [kernel ...]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
corpus="${CORPUS:-$here/tests/data/corpus}"
cuda="${CUDA_ROOT:-$here/.tools/cuda}"
gpu=sm_90
if [ "${1:-}" = "--gpu" ]; then gpu="$2"; shift 2; fi
arch="$gpu"; case "$gpu" in sm_90|sm_100|sm_103|sm_107|sm_110|sm_120|sm_121) arch="${gpu}a";; esac
kernels=("$@")
if [ ${#kernels[@]} -eq 0 ]; then
  kernels=(vadd_f32_contig vadd_f32_strided vadd_f32_divisible)
  [ -f "$here/tests/data/lower/supported.txt" ] && mapfile -t kernels < <(grep -v '^#' "$here/tests/data/lower/supported.txt")
fi
cargo build --release --quiet --bin tileiras --manifest-path "$here/Cargo.toml"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
# NVIDIA's tileiras runs the ptxas beside its resolved path (a hard link or a
# copy, not a symbolic link) and loads ../lib/libnvvm.so.4: a shadow tree
# whose ptxas saves the .ptx it is given and stops there.
mkdir -p "$tmp/nv/bin" "$tmp/nv/lib"
ln "$cuda/bin/tileiras" "$tmp/nv/bin/tileiras" 2>/dev/null || cp "$cuda/bin/tileiras" "$tmp/nv/bin/tileiras"
ln -s "$(readlink -f "$cuda/lib/libnvvm.so.4")" "$tmp/nv/lib/libnvvm.so.4"
cat >"$tmp/nv/bin/ptxas" <<'EOF'
#!/bin/sh
for a in "$@"; do
  case "$a" in *.ptx) cp "$a" "$BENCH_CODEGEN_PTX" ;; esac
done
exit 3
EOF
chmod +x "$tmp/nv/bin/ptxas"
# Instructions, without the NOPs that pad the code to its alignment.
sass_count() { "$cuda/bin/nvdisasm" -c "$1" | grep -E '^\s+/\*[0-9a-f]{4,}\*/' | grep -cvE '\sNOP ?;' || true; }
loop_count() {
  "$cuda/bin/nvdisasm" -c "$1" | python3 -c '
import re, sys
at, pending, best = {}, [], 0
for line in sys.stdin:
    m = re.match(r"^(\.L_x_\d+):", line)
    if m:
        pending.append(m.group(1))
        continue
    m = re.match(r"^\s+/\*([0-9a-f]{4,})\*/", line)
    if not m:
        continue
    a = int(m.group(1), 16)
    for l in pending:
        at[l] = a
    pending = []
    b = re.search(r"BRA `\((\.L_x_\d+)\)", line)
    if b and at.get(b.group(1), a) < a:
        best = max(best, (a - at[b.group(1)]) // 16 + 1)
print(best)'
}
regs() { "$cuda/bin/ptxas" -arch "$arch" "$1" -o /dev/null --opt-level 3 --enable-extended-smem=true -v 2>&1 | sed -n 's/.*Used \([0-9]*\) registers.*/\1/p' | head -1; }
printf '%-26s %8s %8s %6s %6s %6s %6s\n' kernel "ours" "nvidia" "loop" "nv" "regs" "nv"
for k in "${kernels[@]}"; do
  f="$corpus/$k/$k.v13_3.tileir"; [ -f "$f" ] || f="$corpus/$k/$k.v13_4.tileir"
  if ! "$here/target/release/tileiras" --gpu-name="$gpu" --emit=ptx "$f" -o "$tmp/$k.ptx" 2>"$tmp/err"; then
    printf '%-26s %s\n' "$k" "FAILED: $(head -c 100 "$tmp/err")"; continue
  fi
  "$cuda/bin/ptxas" -arch "$arch" "$tmp/$k.ptx" -o "$tmp/$k.cubin" --opt-level 3 --enable-extended-smem=true
  ours=$(sass_count "$tmp/$k.cubin"); oloop=$(loop_count "$tmp/$k.cubin"); oregs=$(regs "$tmp/$k.ptx")
  nv=-; nloop=-; nregs=-
  ref="$tmp/$k.ref.ptx"
  rm -f "$ref"
  BENCH_CODEGEN_PTX="$ref" env -u CUDA_ROOT -u CUDA_HOME -u CUDA_PATH \
    "$tmp/nv/bin/tileiras" --gpu-name="$gpu" "$f" -o "$tmp/$k.nv.cubin" >/dev/null 2>&1 || true
  if [ -f "$ref" ]; then
    "$cuda/bin/ptxas" -arch "$arch" "$ref" -o "$tmp/$k.ref.cubin" --opt-level 3 --enable-extended-smem=true
    nv=$(sass_count "$tmp/$k.ref.cubin"); nloop=$(loop_count "$tmp/$k.ref.cubin"); nregs=$(regs "$ref")
  fi
  printf '%-26s %8s %8s %6s %6s %6s %6s\n' "$k" "$ours" "$nv" "$oloop" "$nloop" "$oregs" "$nregs"
done
