#!/usr/bin/env bash
# Builds and installs the library with CMake into build/prefix, then builds
# the C and C++ tests in capi-tests/ as a separate project that finds the
# installed package, and runs them with ctest (valgrind included).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cmake -S . -B build/cmake -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/cmake
rm -rf build/prefix
cmake --install build/cmake --prefix "$root/build/prefix" >/dev/null
rm -rf build/capi-tests
cmake -S capi-tests -B build/capi-tests -DCMAKE_PREFIX_PATH="$root/build/prefix" >/dev/null
cmake --build build/capi-tests
ctest --test-dir build/capi-tests --output-on-failure
pkg="$(PKG_CONFIG_PATH="$root/build/prefix/lib/pkgconfig" pkg-config --libs tileiras 2>/dev/null || true)"
echo "pkg-config --libs tileiras: ${pkg:-(pkg-config not installed)}"
