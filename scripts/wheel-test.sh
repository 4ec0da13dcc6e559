#!/usr/bin/env bash
# Builds the Python wheel (scripts/wheel.sh) and uses it as a new user
# would: installs it with its dependencies (NVIDIA's ptxas from
# nvidia-cuda-nvcc) and cuTile Python (without NVIDIA's tileiras) into a
# fresh virtual environment, then, with no CUDA variable set and nothing but
# that environment and the system on PATH,
# - compiles examples/vadd_f32.tileir with the installed tileiras;
# - exports a cuTile kernel to a cubin, which runs the tileiras cuTile finds;
# - checks the paths tileiras_rs reports, and builds and runs a C program
#   against the wheel's CMake package and against its pkg-config file.
# Then the linux aarch64 wheel, under emulation (scripts/wheel-aarch64-test.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# CMake and pkg-config: the system's, else those the set-up installs.
if ! command -v cmake >/dev/null; then
  [ -x "$root/.tools/venv/bin/cmake" ] || bash scripts/setup.sh
  export PATH="$PATH:$root/.tools/venv/bin"
fi
bash scripts/wheel.sh build/wheel/dist
wheel="$(ls build/wheel/dist/tileiras_rs-*_"$(uname -m)".whl)"
work="$root/build/wheel/test"
venv="$work/venv"
rm -rf "$work"
mkdir -p "$work/home"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel" "cuda-tile==1.7.0"

# A user's shell: the environment activated, no CUDA_* variable, no other
# toolkit on PATH.
user() { env -i HOME="$work/home" PATH="$venv/bin:/usr/bin:/bin" VIRTUAL_ENV="$venv" "$@"; }
same() { [ "$1" = "$2" ] || { echo "wheel-test: $3: got '$1', expected '$2'" >&2; exit 1; }; }
if user sh -c 'command -v ptxas' >/dev/null; then
  echo "wheel-test: a ptxas outside the environment is on PATH; the check below would prove nothing" >&2
  exit 1
fi
same "$(user sh -c 'command -v tileiras')" "$venv/bin/tileiras" "tileiras on PATH"
same "$(user sh -c 'command -v tileirdisasm')" "$venv/bin/tileirdisasm" "tileirdisasm on PATH"

echo "== the installed tileiras compiles examples/vadd_f32.tileir"
# (Whole outputs to files: grep -q would stop reading early and end the
# writer with SIGPIPE, a failure under pipefail.)
user tileiras --version > "$work/version.txt"
grep -q tileiras-rs "$work/version.txt"
user tileiras --gpu-name=sm_90 examples/vadd_f32.tileir -o "$work/vadd_f32.cubin"
user tileirdisasm examples/vadd_f32.tileir > "$work/vadd_f32.txt"
grep -q '^entry @vadd_f32_contig(' "$work/vadd_f32.txt"

echo "== cuTile Python exports a kernel with it"
cat > "$work/vadd.py" <<'PY'
import sys
import cuda.tile as ct
from cuda.tile._compile import _find_compiler_bin
from cuda.tile.compilation import (ArrayConstraint, CallingConvention, KernelSignature,
                                   export_kernel)


@ct.kernel
def vadd(a, b, c):
    i = ct.bid(0)
    x = ct.load(a, index=(i,), shape=(256,))
    y = ct.load(b, index=(i,), shape=(256,))
    ct.store(c, index=(i,), tile=x + y)


arr = ArrayConstraint(ct.float32, 1, index_dtype=ct.int32, stride_lower_bound_incl=0,
                      alias_groups=(), may_alias_internally=False)
sig = KernelSignature([arr, arr, arr], CallingConvention.cutile_python_v1(), symbol="vadd")
export_kernel(vadd, [sig], sys.argv[1], gpu_code="sm_90", output_format="cubin")
print(_find_compiler_bin().path)
PY
found="$(cd "$work" && user python vadd.py vadd.cubin)"
same "$found" "$venv/bin/tileiras" "the tileiras cuTile found"

echo "== the cubins are NVIDIA CUDA ELF executables"
for cubin in "$work/vadd_f32.cubin" "$work/vadd.cubin"; do
  python3 - "$cubin" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:4] == b"\x7fELF", sys.argv[1]
etype, machine = struct.unpack_from("<HH", data, 16)
assert (etype, machine) == (2, 190), (sys.argv[1], etype, machine)  # ET_EXEC, EM_CUDA
PY
done

echo "== tileiras_rs paths"
user python - <<'PY'
import os, subprocess, sys
import tileiras_rs as t
for f in (t.get_cmake_dir, t.cmake_prefix, t.include_dir, t.library_dir, t.library_path,
          t.static_library_path, t.pkgconfig_dir, t.bin_dir, t.tileiras_path,
          t.tileirdisasm_path):
    p = f()
    assert os.path.exists(p), (f.__name__, p)
assert os.path.isfile(os.path.join(t.get_cmake_dir(), "tileirasConfig.cmake"))
assert os.path.isfile(os.path.join(t.pkgconfig_dir(), "tileiras.pc"))
header = open(os.path.join(t.include_dir(), "tileiras.h")).read()
assert "tileirasGetVersion" in header and "tileirasProgramCompile" in header
assert t.bin_dir() == os.path.join(sys.prefix, "bin"), t.bin_dir()
out = subprocess.run([sys.executable, "-m", "tileiras_rs", "--cmake-dir"],
                     capture_output=True, text=True, check=True).stdout.strip()
assert out == t.get_cmake_dir(), out
PY

echo "== a C program built against the wheel's CMake package and pkg-config file"
cmake_dir="$(user python -m tileiras_rs --cmake-dir)"
mkdir -p "$work/consumer"
cat > "$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(wheel_consumer LANGUAGES C)
find_package(tileiras CONFIG REQUIRED)
add_executable(version version.c)
target_link_libraries(version PRIVATE tileiras::tileiras)
CMAKE
cat > "$work/consumer/version.c" <<'C'
#include <tileiras.h>
#include <stdio.h>
int main(void) {
  uint32_t major = 0, minor = 0, patch = 0;
  if (tileirasGetVersion(&major, &minor, &patch) != TILEIRAS_SUCCESS) return 1;
  printf("%u.%u.%u\n", major, minor, patch);
  return 0;
}
C
cmake -S "$work/consumer" -B "$work/consumer/build" -Dtileiras_DIR="$cmake_dir" >/dev/null
cmake --build "$work/consumer/build" >/dev/null
version="$(user python -c 'import tileiras_rs; print(tileiras_rs.__version__)')"
same "$("$work/consumer/build/version")" "$version" "version from the CMake consumer"
pc_dir="$(user python -m tileiras_rs --pkgconfig-dir)"
# shellcheck disable=SC2046
cc -o "$work/consumer/pc_version" "$work/consumer/version.c" \
  $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs tileiras)
same "$(LD_LIBRARY_PATH="$(user python -m tileiras_rs --library-dir)" "$work/consumer/pc_version")" "$version" \
  "version from the pkg-config consumer"
echo "wheel-test: $(basename "$wheel") installs and works"
bash scripts/wheel-aarch64-test.sh
