#!/usr/bin/env bash
# Installs what the linux aarch64 wheel's cross build and its test need, and
# nothing else: the Rust target aarch64-unknown-linux-gnu, a cross C
# toolchain with its C library (Debian's gcc-aarch64-linux-gnu and
# libc6-dev-arm64-cross, whose sysroot /usr/aarch64-linux-gnu qemu loads
# aarch64 programs against), user-mode emulation (qemu-user, for
# qemu-aarch64), and NVIDIA's aarch64 ptxas: the aarch64 nvidia-cuda-nvcc
# wheel of the CUDA version scripts/setup.sh pins, kept under
# .tools/aarch64/wheels, its ptxas unpacked as
# .tools/aarch64/nvidia/cu13/bin/ptxas (the path a pip install gives it).
#
# Safe to run again: it does nothing when everything is there. The system
# packages need root (apt-get). Without root, and with them missing, it says
# so and exits 3, which scripts/wheel-aarch64-test.sh reports as a skip;
# under CI (CI=true) that is a failure (exit 1) instead.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
dir="$tools/aarch64"
rust_target=aarch64-unknown-linux-gnu
sysroot=/usr/aarch64-linux-gnu
cuda_version="$(sed -n 's/^cuda_version=//p' "$root/scripts/setup.sh")"
[ -n "$cuda_version" ] || { echo "setup-aarch64: no cuda_version= in scripts/setup.sh" >&2; exit 1; }
stamp="$dir/.installed-$cuda_version"
ptxas="$dir/nvidia/cu13/bin/ptxas"
quiet=""
[ "${CI:-}" = true ] && quiet=1

cannot() {
  if [ "${CI:-}" = true ]; then
    echo "setup-aarch64: $1 (CI must run the aarch64 checks)" >&2
    exit 1
  fi
  echo "setup-aarch64: $1; the aarch64 wheel cannot be built or tested here" >&2
  exit 3
}

have_rust_target() {
  [ -d "$(rustc --print sysroot)/lib/rustlib/$rust_target/lib" ]
}

# System packages: each is wanted only when what it provides is missing.
apt=()
command -v aarch64-linux-gnu-gcc >/dev/null || apt+=(gcc-aarch64-linux-gnu)
[ -f "$sysroot/lib/libc.so.6" ] && [ -f "$sysroot/include/stdio.h" ] || apt+=(libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null || apt+=(qemu-user)

if [ ${#apt[@]} -eq 0 ] && have_rust_target && [ -f "$stamp" ] && [ -x "$ptxas" ]; then
  exit 0
fi

if [ ${#apt[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    cannot "missing ${apt[*]}, which needs root and apt-get to install"
  fi
  log="$(mktemp)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${apt[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "setup-aarch64: apt-get install ${apt[*]} failed" >&2
    exit 1
  fi
  rm -f "$log"
  [ -n "$quiet" ] || echo "setup-aarch64: installed ${apt[*]}"
fi

if ! have_rust_target; then
  command -v rustup >/dev/null || cannot "the Rust target $rust_target is missing and there is no rustup"
  rustup target add "$rust_target" ${quiet:+--quiet} >/dev/null 2>&1 ||
    rustup target add "$rust_target"
fi

if [ ! -f "$stamp" ] || [ ! -x "$ptxas" ]; then
  python="$tools/venv/bin/python"
  [ -x "$python" ] || python=python3
  rm -rf "$dir/wheels" "$dir/nvidia"
  mkdir -p "$dir/wheels"
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
    --platform manylinux2014_aarch64 --only-binary=:all: \
    --dest "$dir/wheels" "nvidia-cuda-nvcc==$cuda_version"
  wheel="$(ls "$dir/wheels/nvidia_cuda_nvcc-$cuda_version-"*aarch64*.whl)"
  "$python" - "$wheel" "$dir" <<'PY'
import os, sys, zipfile
wheel, dest = sys.argv[1:]
name = "nvidia/cu13/bin/ptxas"
with zipfile.ZipFile(wheel) as z:
    path = z.extract(name, dest)
os.chmod(path, 0o755)
with open(path, "rb") as f:
    head = f.read(20)
# An ELF executable for EM_AARCH64 (183).
assert head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == 183, head
PY
  touch "$stamp"
fi
for tool in aarch64-linux-gnu-gcc aarch64-linux-gnu-strip aarch64-linux-gnu-objdump qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "setup-aarch64: $tool missing after install" >&2; exit 1; }
done
have_rust_target || { echo "setup-aarch64: Rust target $rust_target missing after install" >&2; exit 1; }
[ -n "$quiet" ] || echo "setup-aarch64: aarch64 cross build and emulation ready (ptxas under .tools/aarch64)"
