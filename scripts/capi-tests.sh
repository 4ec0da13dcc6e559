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
# The pkg-config file: a C program built with only what it says.
pc_dir="$root/build/prefix/lib/pkgconfig"
flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs tileiras)"
echo "pkg-config --cflags --libs tileiras: $flags"
cat > build/capi-tests/pkgconfig_user.c <<'C'
#include <tileiras.h>
#include <stdio.h>
int main(void) {
  uint32_t major = 0, minor = 0, patch = 0;
  if (tileirasGetVersion(&major, &minor, &patch) != TILEIRAS_SUCCESS) return 1;
  printf("pkg-config user: tileiras %u.%u.%u\n", major, minor, patch);
  return 0;
}
C
# shellcheck disable=SC2086
cc -o build/capi-tests/pkgconfig_user build/capi-tests/pkgconfig_user.c $flags
LD_LIBRARY_PATH="$root/build/prefix/lib" build/capi-tests/pkgconfig_user
