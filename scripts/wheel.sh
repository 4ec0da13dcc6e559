#!/usr/bin/env bash
# Builds the Python wheel of tileiras-rs (python/pyproject.toml) with maturin:
# `tileiras` and `tileirdisasm` as the wheel's scripts (pip puts them in the
# environment's bin/), and inside the package `tileiras_rs` the shared and
# static libraries, the header, the CMake package and the pkg-config file,
# laid out as the CMake install would lay them under a prefix.
#
#   bash scripts/wheel.sh [--target TRIPLE] [OUT_DIR]   # default build/wheel/dist
#
# Without --target the wheel is for this machine. With
# --target aarch64-unknown-linux-gnu it is cross-built for linux aarch64
# (Grace hosts) with the cross toolchain scripts/setup-aarch64.sh installs
# (run first when missing); its nvidia-cuda-nvcc dependency then resolves to
# NVIDIA's aarch64 packages. Wheels for different platforms share OUT_DIR:
# a build replaces only the wheel of its own platform.
#
# The platform tag is manylinux_2_N for the newest glibc symbol version any
# of the binaries or the library uses (maturin checks the binaries against
# it). Needs cargo, cmake, objdump, strip and python3; maturin is installed into
# build/wheel/tools unless MATURIN names one. Without a cmake on PATH, the one
# scripts/setup.sh installs into .tools/venv/bin is used (the set-up is run
# when it is missing).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

target=""
out_arg=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="${2:?wheel: --target needs a Rust target triple}"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "wheel: unknown option $1" >&2; exit 2 ;;
    *) out_arg="$1"; shift ;;
  esac
done
out_arg="${out_arg:-build/wheel/dist}"
out="$(mkdir -p "$out_arg" && cd "$out_arg" && pwd)"

# The target's machine name (as in the platform tag), binutils and cargo
# arguments.
host_arch="$(uname -m)"
cross=""
cargo_target=()
case "$target" in
  "" | "$host_arch-unknown-linux-gnu")
    arch="$host_arch"
    target=""
    ;;
  aarch64-unknown-linux-gnu)
    arch=aarch64
    cross=aarch64-linux-gnu-
    bash scripts/setup-aarch64.sh
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER="${CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER:-aarch64-linux-gnu-gcc}"
    cargo_target=(--target "$target")
    ;;
  *)
    echo "wheel: no wheel for target $target (this machine's, or aarch64-unknown-linux-gnu)" >&2
    exit 2
    ;;
esac
bin_dir="target/${target:+$target/}release"
work="$root/build/wheel"
stage="$work/${target:-host}"
mkdir -p "$stage"

# CMake: the system's, else the one the set-up installs.
if ! command -v cmake >/dev/null; then
  [ -x "$root/.tools/venv/bin/cmake" ] || bash scripts/setup.sh
  export PATH="$PATH:$root/.tools/venv/bin"
fi

maturin="${MATURIN:-}"
if [ -z "$maturin" ]; then
  maturin="$work/tools/bin/maturin"
  if [ ! -x "$maturin" ]; then
    python3 -m venv "$work/tools"
    "$work/tools/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.7,<2"
  fi
fi

cargo build --release --lib --bins ${cargo_target[@]+"${cargo_target[@]}"}

# The library files, through the project's own CMake install rules.
cmake -S . -B "$stage/cmake" -DCMAKE_BUILD_TYPE=Release "-DTILEIRAS_RUST_TARGET=$target" \
  -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_INSTALL_INCLUDEDIR=include >/dev/null
rm -rf "$stage/prefix"
cmake --install "$stage/cmake" --prefix "$stage/prefix" >/dev/null
pkg="$root/python/tileiras_rs"
rm -rf "$pkg/include" "$pkg/lib"
cp -R "$stage/prefix/include" "$stage/prefix/lib" "$pkg/"
# Debug info is most of their size; the symbols a linker needs stay.
"${cross}strip" --strip-debug "$pkg/lib/libtileiras.a"
"${cross}strip" --strip-unneeded "$pkg/lib/libtileiras.so"

# manylinux_2_N from the newest GLIBC_2.N symbol version referenced.
glibc="$("${cross}objdump" -T "$bin_dir/tileiras" "$bin_dir/tileirdisasm" "$bin_dir/libtileiras.so" |
  grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2,2n -u | tail -n1)"
[ -n "$glibc" ] || { echo "wheel: no GLIBC symbol versions found" >&2; exit 1; }
tag="manylinux_2_${glibc#GLIBC_2.}"
echo "wheel: newest glibc symbol $glibc, platform tag ${tag}_$arch"

rm -f "$out"/tileiras_rs-*_"$arch".whl
(cd python && "$maturin" build --release --compatibility "$tag" \
  ${cargo_target[@]+"${cargo_target[@]}"} --out "$out")
ls "$out"/tileiras_rs-*_"$arch".whl
