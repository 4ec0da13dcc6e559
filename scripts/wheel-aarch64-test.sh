#!/usr/bin/env bash
# The linux aarch64 wheel (Grace hosts), proven on an x86-64 machine under
# user-mode emulation. Installs what it needs first (scripts/setup-aarch64.sh),
# builds the x86-64 wheel and the aarch64 one (scripts/wheel.sh), installs
# each into its own prefix as pip lays a wheel out (the aarch64 one with
# NVIDIA's aarch64 nvidia-cuda-nvcc wheel beside it), and checks:
# - both wheels hold the same files, the platform-independent ones
#   byte-identical, the aarch64 binaries and library built for aarch64;
# - pip resolves the aarch64 wheel's dependencies for the aarch64 platform
#   to NVIDIA's aarch64 packages;
# - the aarch64 tileiras, run with qemu-aarch64 and NVIDIA's aarch64 ptxas
#   also under emulation, writes cubins and PTX byte-identical to the x86-64
#   tileiras's (with NVIDIA's x86-64 ptxas), on the bundled example and
#   corpus kernels for sm_90 and sm_100; tileirdisasm's listing and host
#   objects too, and a host object is for the machine it runs on by default;
# - killed by SIGKILL or SIGTERM, the emulated tileiras takes its running
#   ptxas along, and leaves no temporary files after SIGTERM;
# - the aarch64 tileiras finds the ptxas of the nvidia-cuda-nvcc installed
#   beside it, with no CUDA variable set;
# - C programs cross-compiled against the aarch64 libtileiras.so (and .a),
#   with the flags of the wheel's pkg-config file, run under qemu-aarch64 and
#   compile the example through the C API to the same bytes.
#
# Where the system packages cannot be installed (not root), it says so and
# skips; under CI (CI=true) that is a failure. Prints the emulated run times.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

if [ "$(uname -m)" != x86_64 ]; then
  echo "wheel-aarch64-test: skipped: this checks the aarch64 wheel from an x86-64 machine (this is $(uname -m))"
  exit 0
fi
rc=0
bash scripts/setup-aarch64.sh || rc=$?
if [ "$rc" -eq 3 ]; then
  echo "wheel-aarch64-test: skipped: the cross toolchain and qemu-user are missing and cannot be installed here"
  exit 0
fi
[ "$rc" -eq 0 ] || exit "$rc"
# CMake and pkg-config: the system's, else those the set-up installs.
if ! command -v cmake >/dev/null || ! command -v pkg-config >/dev/null; then
  [ -x "$root/.tools/venv/bin/cmake" ] || bash scripts/setup.sh
  export PATH="$PATH:$root/.tools/venv/bin"
fi
export QEMU_LD_PREFIX="${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}"

work="$root/build/wheel/aarch64-test"
dist="$root/build/wheel/dist"
rm -rf "$work"
mkdir -p "$work/home" "$work/out"
fail() { echo "wheel-aarch64-test: $*" >&2; exit 1; }
now() { date +%s.%N; }
elapsed() { python3 -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' "$1" "$2"; }

echo "== the x86-64 and aarch64 wheels"
t0="$(now)"
bash scripts/wheel.sh "$dist" >/dev/null
t1="$(now)"
bash scripts/wheel.sh --target aarch64-unknown-linux-gnu "$dist" >/dev/null
t2="$(now)"
echo "wheel-aarch64-test: x86-64 wheel $(elapsed "$t0" "$t1") s, aarch64 wheel $(elapsed "$t1" "$t2") s"
wheel_x86="$(ls "$dist"/tileiras_rs-*_x86_64.whl)"
wheel_arm="$(ls "$dist"/tileiras_rs-*_aarch64.whl)"
nvcc_arm="$(ls "$root"/.tools/aarch64/wheels/nvidia_cuda_nvcc-*aarch64*.whl)"
ls -l "$wheel_x86" "$wheel_arm"

# Python with `installer`, which lays a wheel out as pip does, for any
# platform.
py="$root/build/wheel/tools/bin/python"
[ -x "$py" ] || python3 -m venv "$root/build/wheel/tools"
"$py" -c 'import installer' 2>/dev/null ||
  "$py" -m pip install --quiet --disable-pip-version-check "installer>=0.7,<1"

echo "== same files; the aarch64 ones built for aarch64"
"$py" - "$wheel_x86" "$wheel_arm" <<'PY'
import sys, zipfile
x86, arm = (zipfile.ZipFile(p) for p in sys.argv[1:])
def files(z):
    # RECORD lists hashes and the SBOM names the target: both differ.
    return {i.filename: i for i in z.infolist()
            if not i.filename.endswith(("/RECORD", ".cyclonedx.json"))}
fx, fa = files(x86), files(arm)
assert fx.keys() == fa.keys(), sorted(fx.keys() ^ fa.keys())
tags = [l for l in arm.read(next(n for n in fa if n.endswith("/WHEEL"))).decode().splitlines()
        if l.startswith("Tag:")]
assert len(tags) == 1 and tags[0].startswith("Tag: py3-none-manylinux_2_") \
    and tags[0].endswith("_aarch64"), tags
machines = {"x86": 62, "arm": 183}  # EM_X86_64, EM_AARCH64
for name in fx:
    a, b = x86.read(name), arm.read(name)
    if name.endswith((".so", "/tileiras", "/tileirdisasm")):
        for z, data in (("x86", a), ("arm", b)):
            assert data[:4] == b"\x7fELF", name
            assert int.from_bytes(data[18:20], "little") == machines[z], (z, name)
        assert fx[name].external_attr >> 16 & 0o111 == fa[name].external_attr >> 16 & 0o111
    elif name.endswith(".a"):
        assert a[:8] == b[:8] == b"!<arch>\n", name
    elif not name.endswith("/WHEEL"):
        assert a == b, f"{name} differs between the wheels"
print(f"{len(fx)} files in each; {tags[0]}")
PY

echo "== pip resolves the aarch64 wheel's dependencies for aarch64"
# The platforms pip accepts on an aarch64 machine with the glibc the wheel
# needs: every manylinux_2_N up to it, and manylinux2014 (the only tag of
# cuda-tile's aarch64 wheel). --target only because older pips ask for it
# with --platform; --dry-run writes nothing.
tag="$(basename "$wheel_arm" .whl)"
tag="${tag##*-}"
glibc_minor="${tag#manylinux_2_}"
glibc_minor="${glibc_minor%%_*}"
platforms=(--platform manylinux2014_aarch64)
for ((m = 17; m <= glibc_minor; m++)); do platforms+=(--platform "manylinux_2_${m}_aarch64"); done
"$py" -m pip install --quiet --disable-pip-version-check --dry-run --ignore-installed \
  --only-binary=:all: "${platforms[@]}" --python-version 3.11 --target "$work/resolved" \
  --report "$work/resolve.json" "${wheel_arm}[sass]" "cuda-tile==1.7.0"
"$py" - "$work/resolve.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
got = {i["metadata"]["name"].lower(): i["download_info"]["url"].rsplit("/", 1)[-1]
       for i in report["install"]}
for name in ("nvidia-cuda-nvcc", "nvidia-cuda-nvdisasm", "cuda-tile"):
    assert name in got, (name, sorted(got))
for name, wheel in sorted(got.items()):
    assert wheel.endswith(("_aarch64.whl", "-none-any.whl")), wheel
    print(f"  {wheel}")
PY

echo "== both wheels installed as pip lays them out"
"$py" -m installer --prefix "$work/x86_64" "$wheel_x86"
"$py" -m installer --prefix "$work/aarch64" "$wheel_arm"
"$py" -m installer --prefix "$work/aarch64" "$nvcc_arm"
site_arm="$(ls -d "$work"/aarch64/lib/python3*/site-packages)"
ptxas_arm="$site_arm/nvidia/cu13/bin/ptxas"
for f in "$work/x86_64/bin/tileiras" "$work/aarch64/bin/tileiras" "$ptxas_arm"; do
  [ -x "$f" ] || fail "$f is missing after the installs"
done
# A CUDA root whose ptxas is NVIDIA's aarch64 one under emulation (the
# emulated tileiras starts it as any program: qemu-user does not follow exec).
mkdir -p "$work/emulated-cuda/bin"
cat > "$work/emulated-cuda/bin/ptxas" <<SH
#!/bin/sh
exec qemu-aarch64 -L "$QEMU_LD_PREFIX" "$ptxas_arm" "\$@"
SH
chmod +x "$work/emulated-cuda/bin/ptxas"
v86="$("$root/.tools/cuda/bin/ptxas" --version | grep -i release)"
varm="$("$work/emulated-cuda/bin/ptxas" --version | grep -i release)"
[ "$v86" = "$varm" ] || fail "ptxas versions differ: '$v86' (x86-64) and '$varm' (aarch64)"
echo "ptxas on both hosts: $varm"
x86() { CUDA_ROOT="$root/.tools/cuda" "$work/x86_64/bin/tileiras" "$@"; }
arm() { CUDA_ROOT="$work/emulated-cuda" qemu-aarch64 "$work/aarch64/bin/tileiras" "$@"; }

echo "== byte-identical cubins and PTX from both builds"
inputs=(
  examples/vadd_f32.tileir
  tests/data/differential/corpus/matmul_f16_tma.tileir
  tests/data/differential/corpus/layernorm_rows_f32.tileir
  tests/data/differential/corpus/atomic_ops_i32.tileir
  tests/data/differential/corpus/matmul_fp8_e4m3.tileir
  tests/data/lower/kernels/attention_f16.tileir
)
total=0
for gpu in sm_90 sm_100; do
  for input in "${inputs[@]}"; do
    name="$(basename "$input" .tileir).$gpu"
    for emit in cubin ptx; do
      # a cubin carries host callbacks for the host tileiras runs on unless
      # --host-arch says otherwise: both for x86-64 here
      x86 --gpu-name=$gpu --emit=$emit "$input" -o "$work/out/$name.x86_64.$emit"
      t0="$(now)"
      arm --gpu-name=$gpu --emit=$emit --host-arch=x86_64 "$input" -o "$work/out/$name.aarch64.$emit"
      t="$(elapsed "$t0" "$(now)")"
      total="$(python3 -c "print(f'{$total + $t:.1f}')")"
      cmp "$work/out/$name.x86_64.$emit" "$work/out/$name.aarch64.$emit" ||
        fail "$name.$emit differs between the x86-64 and aarch64 builds"
      echo "  $name.$emit: $(wc -c < "$work/out/$name.aarch64.$emit") bytes, identical; emulated ${t} s"
    done
  done
done
echo "wheel-aarch64-test: ${#inputs[@]} kernels x 2 targets x cubin+PTX identical; emulated runs ${total} s in all"

echo "== each build's cubins carry host callbacks for its own machine by default"
input=tests/data/differential/corpus/matmul_f16_tma.tileir
x86 --gpu-name=sm_90 "$input" -o "$work/out/mm.x86_64-default.cubin"
x86 --gpu-name=sm_90 --host-arch=aarch64 "$input" -o "$work/out/mm.x86_64-aarch64.cubin"
arm --gpu-name=sm_90 "$input" -o "$work/out/mm.aarch64-default.cubin"
cmp "$work/out/mm.x86_64-aarch64.cubin" "$work/out/mm.aarch64-default.cubin" ||
  fail "the aarch64 build's default cubin differs from the x86-64 build's with --host-arch=aarch64"
python3 - "$work/out" <<'PY'
import struct, sys
def nv_host_machine(path):
    d = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
    sec = lambda i: struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize)
    names = sec(shstrndx)[4]
    for i in range(shnum):
        s = sec(i)
        if d[names + s[0]:d.index(b"\0", names + s[0])] == b".nv.host":
            assert d[s[4]:s[4] + 4] == b"\x7fELF", path
            return struct.unpack_from("<H", d, s[4] + 18)[0]
    raise SystemExit(f"{path}: no .nv.host section")
out = sys.argv[1]
for name, machine in (("x86_64-default", 62), ("x86_64-aarch64", 183), ("aarch64-default", 183)):
    got = nv_host_machine(f"{out}/mm.{name}.cubin")
    assert got == machine, (name, got)
print("  x86-64 build: x86-64 callbacks; aarch64 build: aarch64 callbacks; --host-arch picks either")
PY

echo "== tileirdisasm and host objects"
"$work/x86_64/bin/tileirdisasm" examples/vadd_f32.tileir > "$work/out/vadd.x86_64.txt"
qemu-aarch64 "$work/aarch64/bin/tileirdisasm" examples/vadd_f32.tileir > "$work/out/vadd.aarch64.txt"
cmp "$work/out/vadd.x86_64.txt" "$work/out/vadd.aarch64.txt" || fail "tileirdisasm listings differ"
for host in x86_64 aarch64; do
  x86 --gpu-name=sm_90 --emit=obj --host-arch=$host examples/vadd_f32.tileir -o "$work/out/vadd.$host.x86_64.o"
  arm --gpu-name=sm_90 --emit=obj --host-arch=$host examples/vadd_f32.tileir -o "$work/out/vadd.$host.aarch64.o"
  cmp "$work/out/vadd.$host.x86_64.o" "$work/out/vadd.$host.aarch64.o" ||
    fail "host objects for $host differ between the builds"
done
x86 --gpu-name=sm_90 --emit=obj examples/vadd_f32.tileir -o "$work/out/vadd.default.x86_64.o"
arm --gpu-name=sm_90 --emit=obj examples/vadd_f32.tileir -o "$work/out/vadd.default.aarch64.o"
cmp "$work/out/vadd.default.x86_64.o" "$work/out/vadd.x86_64.x86_64.o" || fail "x86-64 default host object"
cmp "$work/out/vadd.default.aarch64.o" "$work/out/vadd.aarch64.aarch64.o" || fail "aarch64 default host object"
echo "  identical; each build's default host object is for its own machine"

# With nothing set, the aarch64 tileiras (and library) must pick the ptxas
# of the nvidia-cuda-nvcc installed beside it. Where this kernel runs aarch64
# programs (binfmt_misc), it compiles; where it does not, the exec of that
# very ptxas fails, and the message names it.
if "$ptxas_arm" --version >/dev/null 2>&1; then
  runs_arm=1
else
  runs_arm=""
fi
found_check() { # what, status, output file, compiled file
  if [ -n "$runs_arm" ]; then
    [ "$2" -eq 0 ] || { cat "$3" >&2; fail "$1: compile with the ptxas beside it failed"; }
    cmp "$4" "$work/out/vadd_f32.sm_90.aarch64-host.cubin" || fail "$1: cubin differs"
    echo "  $1: compiled with $ptxas_arm"
  else
    [ "$2" -ne 0 ] || fail "$1: ran an aarch64 ptxas on a machine that cannot"
    grep -qF "$ptxas_arm: Program could not be executed: Exec format error" "$3" ||
      { cat "$3" >&2; fail "$1: did not try the ptxas beside it"; }
    echo "  $1: chose $ptxas_arm (this kernel cannot run it without qemu)"
  fi
}
# What the aarch64 build writes by default: cubins with aarch64 callbacks,
# as the x86-64 build writes them with --host-arch=aarch64.
for gpu in sm_90 sm_100; do
  x86 --gpu-name=$gpu --host-arch=aarch64 examples/vadd_f32.tileir \
    -o "$work/out/vadd_f32.$gpu.aarch64-host.cubin"
  cp "$work/out/vadd_f32.$gpu.x86_64.ptx" "$work/out/vadd_f32.$gpu.aarch64-host.ptx"
done
echo "== the ptxas of the environment, found with no CUDA variable"
rc=0
env -i HOME="$work/home" PATH=/usr/bin:/bin qemu-aarch64 -L "$QEMU_LD_PREFIX" \
  "$work/aarch64/bin/tileiras" --gpu-name=sm_90 examples/vadd_f32.tileir \
  -o "$work/out/found.cubin" > "$work/out/found.txt" 2>&1 || rc=$?
found_check "tileiras" "$rc" "$work/out/found.txt" "$work/out/found.cubin"

echo "== a killed emulated tileiras takes its running ptxas along"
# PR_SET_PDEATHSIG (SIGKILL) and the tool's own handler (SIGTERM, which
# also removes its temporary files and those the SIGKILLed run left).
mkdir -p "$work/hanging-cuda/bin" "$work/tmp"
cat > "$work/hanging-cuda/bin/ptxas" <<'SH'
#!/bin/sh
echo $$ > "$(dirname "$0")/ptxas.pid"
exec sleep 300
SH
chmod +x "$work/hanging-cuda/bin/ptxas"
pidfile="$work/hanging-cuda/bin/ptxas.pid"
gone() { # no such process, or a zombie that nobody has reaped yet
  local state
  state="$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null || true)"
  [ -z "$state" ] || [ "$state" = Z ]
}
for sig in KILL TERM; do
  rm -f "$pidfile"
  CUDA_ROOT="$work/hanging-cuda" TMPDIR="$work/tmp" qemu-aarch64 "$work/aarch64/bin/tileiras" \
    --gpu-name=sm_90 examples/vadd_f32.tileir -o "$work/out/hang.cubin" 2>/dev/null &
  tool=$!
  for _ in $(seq 200); do [ -s "$pidfile" ] && break; sleep 0.1; done
  [ -s "$pidfile" ] || { kill -KILL "$tool"; fail "the hanging ptxas never started"; }
  hung="$(cat "$pidfile")"
  kill -"$sig" "$tool"
  status=0
  { wait "$tool"; } 2>/dev/null || status=$?
  [ "$status" -eq $((128 + $(kill -l "$sig"))) ] || fail "SIG$sig: the tool ended with status $status"
  for _ in $(seq 100); do gone "$hung" && break; sleep 0.1; done
  gone "$hung" || { kill -KILL "$hung"; fail "SIG$sig to the emulated tool left its ptxas running"; }
  echo "  SIG$sig: the tool and its ptxas ended"
done
[ -z "$(ls -A "$work/tmp")" ] || fail "temporary files left behind: $(ls -A "$work/tmp")"

echo "== C programs cross-compiled against the aarch64 library, run under qemu-aarch64"
cat > "$work/compile.c" <<'C'
/* compile IN GPU cubin|ptx OUT: compiles a bytecode file through the C API. */
#include <tileiras.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  FILE *f = fopen(argv[1], "rb");
  if (!f) return 2;
  static unsigned char code[1 << 22];
  size_t n = fread(code, 1, sizeof code, f);
  fclose(f);
  tileirasConfig config;
  if (tileirasConfigInit(&config) != TILEIRAS_SUCCESS) return 3;
  config.gpu_name = argv[2];
  int ptx = strcmp(argv[3], "ptx") == 0;
  config.output_kind = ptx ? TILEIRAS_OUTPUT_PTX : TILEIRAS_OUTPUT_CUBIN;
  tileirasProgram prog;
  if (tileirasProgramCreate(&prog, &config, code, n) != TILEIRAS_SUCCESS) return 4;
  if (tileirasProgramCompile(prog) != TILEIRAS_SUCCESS) {
    size_t len = 0;
    tileirasProgramGetLogSize(prog, &len);
    char *log = malloc(len + 1);
    tileirasProgramGetLog(prog, log);
    fprintf(stderr, "%s\n", log);
    return 5;
  }
  size_t size = 0;
  const void *data = NULL;
  if (tileirasProgramGetOutputPointer(prog, &data, &size) != TILEIRAS_SUCCESS) return 6;
  if (ptx) size -= 1; /* the NUL the API counts */
  FILE *o = fopen(argv[4], "wb");
  if (!o || fwrite(data, 1, size, o) != size || fclose(o) != 0) return 7;
  tileirasProgramDestroy(&prog);
  return 0;
}
C
pc="$site_arm/tileiras_rs/lib/pkgconfig"
# shellcheck disable=SC2046
aarch64-linux-gnu-gcc -O2 -Wall -Werror -o "$work/compile" "$work/compile.c" \
  $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs tileiras) \
  -Wl,-rpath,"$site_arm/tileiras_rs/lib"
# shellcheck disable=SC2046
aarch64-linux-gnu-gcc -O2 -Wall -Werror -static-libgcc -o "$work/compile_static" "$work/compile.c" \
  $(PKG_CONFIG_PATH="$pc" pkg-config --cflags tileiras) "$site_arm/tileiras_rs/lib/libtileiras.a" \
  $(PKG_CONFIG_PATH="$pc" pkg-config --static --libs-only-l tileiras | sed 's/-ltileiras//')
for prog in compile compile_static; do
  python3 - "$work/$prog" <<'PY'
import sys
head = open(sys.argv[1], "rb").read(20)
assert head[:4] == b"\x7fELF" and int.from_bytes(head[18:20], "little") == 183, sys.argv[1]
PY
done
if aarch64-linux-gnu-objdump -p "$work/compile_static" | grep -q 'NEEDED.*libtileiras'; then
  fail "compile_static needs libtileiras.so"
fi
aarch64-linux-gnu-objdump -p "$work/compile" | grep -q 'NEEDED.*libtileiras\.so' ||
  fail "compile does not link libtileiras.so"
for gpu in sm_90 sm_100; do
  for emit in cubin ptx; do
    for prog in compile compile_static; do
      t0="$(now)"
      CUDA_ROOT="$work/emulated-cuda" qemu-aarch64 "$work/$prog" examples/vadd_f32.tileir $gpu $emit \
        "$work/out/capi.$prog.$gpu.$emit"
      t="$(elapsed "$t0" "$(now)")"
      cmp "$work/out/capi.$prog.$gpu.$emit" "$work/out/vadd_f32.$gpu.aarch64-host.$emit" ||
        fail "$prog: vadd_f32.$gpu.$emit through the C API differs from the x86-64 tileiras's (--host-arch=aarch64)"
      echo "  $prog vadd_f32.$gpu.$emit: identical; emulated ${t} s"
    done
  done
done
rc=0
env -i HOME="$work/home" PATH=/usr/bin:/bin qemu-aarch64 -L "$QEMU_LD_PREFIX" \
  "$work/compile" examples/vadd_f32.tileir sm_90 cubin "$work/out/capi.found.cubin" \
  > "$work/out/capi.found.txt" 2>&1 || rc=$?
found_check "libtileiras.so" "$rc" "$work/out/capi.found.txt" "$work/out/capi.found.cubin"
echo "wheel-aarch64-test: $(basename "$wheel_arm") builds, installs and compiles as the x86-64 wheel does"
