#!/usr/bin/env bash
# Builds the Python wheel of tileiras-rs (python/pyproject.toml) with maturin:
# `tileiras` and `tileirdisasm` as the wheel's scripts (pip puts them in the
# environment's bin/), and inside the package `tileiras_rs` the shared and
# static libraries, the header, the CMake package and the pkg-config file,
# laid out as the CMake install would lay them under a prefix.
#
#   bash scripts/wheel.sh [OUT_DIR]      # default build/wheel/dist
#
# The platform tag is manylinux_2_N for the newest glibc symbol version any
# of the binaries or the library uses (maturin checks the binaries against
# it). Needs cargo, cmake, objdump, strip and python3; maturin is installed into
# build/wheel/tools unless MATURIN names one.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$(mkdir -p "${1:-build/wheel/dist}" && cd "${1:-build/wheel/dist}" && pwd)"
work="$root/build/wheel"
mkdir -p "$work"

maturin="${MATURIN:-}"
if [ -z "$maturin" ]; then
  maturin="$work/tools/bin/maturin"
  if [ ! -x "$maturin" ]; then
    python3 -m venv "$work/tools"
    "$work/tools/bin/python" -m pip install --quiet --disable-pip-version-check "maturin>=1.7,<2"
  fi
fi

cargo build --release --lib --bins

# The library files, through the project's own CMake install rules.
cmake -S . -B "$work/cmake" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_INSTALL_INCLUDEDIR=include >/dev/null
rm -rf "$work/prefix"
cmake --install "$work/cmake" --prefix "$work/prefix" >/dev/null
pkg="$root/python/tileiras_rs"
rm -rf "$pkg/include" "$pkg/lib"
cp -R "$work/prefix/include" "$work/prefix/lib" "$pkg/"
# Debug info is most of their size; the symbols a linker needs stay.
strip --strip-debug "$pkg/lib/libtileiras.a"
strip --strip-unneeded "$pkg/lib/libtileiras.so"

# manylinux_2_N from the newest GLIBC_2.N symbol version referenced.
glibc="$(objdump -T target/release/tileiras target/release/tileirdisasm target/release/libtileiras.so |
  grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2,2n -u | tail -n1)"
[ -n "$glibc" ] || { echo "wheel: no GLIBC symbol versions found" >&2; exit 1; }
tag="manylinux_2_${glibc#GLIBC_2.}"
echo "wheel: newest glibc symbol $glibc, platform tag $tag"

rm -f "$out"/tileiras_rs-*.whl
(cd python && "$maturin" build --release --compatibility "$tag" --out "$out")
ls "$out"/tileiras_rs-*.whl
