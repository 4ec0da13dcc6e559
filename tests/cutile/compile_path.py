# SPDX-License-Identifier: Apache-2.0
"""cuTile Python's own compile path against this repository's tileiras, no
GPU needed. Run by tests/cutile_compile_path.rs as

    python compile_path.py <tileiras> <tileirdisasm> <work dir>

with cuTile Python (cuda-tile) installed and CUDA_ROOT naming ptxas.

cuTile looks for tileiras in NVIDIA's pip package first, then on PATH. The
set-up installs NVIDIA's package for comparison tests, so
``_find_pip_tileiras`` is made to report it absent (as when the package is
not installed) and ours is put first on PATH; everything else is cuTile's
own code. ``_CompilerBinary.run``, the function that runs tileiras, is
wrapped to record each command line and then calls the original.

Checks, each printing ``ok <name>`` when it passes:
  found       cuTile's lookup picks ours from PATH
  version     the ``tileiras --version`` probe (cuTile's disk cache key)
  bytecode    the bytecode-version probe (empty modules for sm_120)
  kernel      a kernel exported to a cubin with the exact flags cuTile passes
  cache       the same with cuTile's disk cache on (remarks flags), then a hit
  error       a kernel tileiras rejects: cuTile's _parse_tileir_stderr points
              at the right file, line and column of this file
"""
import ast
import os
import shutil
import struct
import subprocess
import sys

tileiras, tileirdisasm, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
bin_dir = os.path.join(work, "bin")
os.makedirs(bin_dir, exist_ok=True)
for tool, target in (("tileiras", tileiras), ("tileirdisasm", tileirdisasm)):
    link = os.path.join(bin_dir, tool)
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(target, link)
os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
os.environ["CUDA_TILE_TEMP_DIR"] = os.path.join(work, "tmp")
os.environ["CUDA_TILE_CACHE_DIR"] = "off"
assert os.environ.get("CUDA_ROOT"), "CUDA_ROOT must name the CUDA root holding ptxas"

import cuda.tile as ct  # noqa: E402
from cuda.tile import _compile  # noqa: E402
from cuda.tile._bytecode.version import BytecodeVersion  # noqa: E402
from cuda.tile._cext import default_tile_context  # noqa: E402
from cuda.tile.compilation import (ArrayConstraint, CallingConvention,  # noqa: E402
                                   KernelSignature, export_kernel)

_compile._find_pip_tileiras = lambda: None

calls = []
_original_run = _compile._CompilerBinary.run


def _recording_run(self, args, flags, timeout_sec=None):
    calls.append((self.path, list(args), list(flags)))
    return _original_run(self, args, flags, timeout_sec)


_compile._CompilerBinary.run = _recording_run


PROBE_FLAGS = ["--gpu-name", "sm_120"]


def compiles():
    """The recorded runs that were not bytecode-version probes (export_kernel
    probes again: cuTile caches the probe per argument list)."""
    return [c for c in calls if c[2] != PROBE_FLAGS]


def ok(name):
    print("ok", name, flush=True)


# found: PATH lookup, our binary.
binary = _compile._find_compiler_bin()
assert binary.path == os.path.join(bin_dir, "tileiras"), binary.path
assert os.path.realpath(binary.path) == os.path.realpath(tileiras)
assert os.path.realpath(_compile._find_tileirdisasm_bin()) == os.path.realpath(tileirdisasm)
ok("found")

# version: what cuTile keys its disk cache on.
version = _compile._get_compiler_version_string()
direct = subprocess.run([tileiras, "--version"], capture_output=True, text=True, check=True).stdout
assert version == direct, (version, direct)
assert "tileiras-rs" in version, version
ok("version")

# bytecode: cuTile compiles an empty module of each version, newest first,
# until one passes; every version it knows (13.5 is dev-only) must pass.
temp_dir = default_tile_context.config.temp_dir
newest_released = _compile._get_max_supported_bytecode_version(temp_dir)
assert newest_released == max(_compile._SUPPORTED_VERSIONS), newest_released
newest_dev = _compile._get_max_supported_bytecode_version(temp_dir, allow_dev=True)
assert newest_dev == max(BytecodeVersion), newest_dev
probes = [c for c in calls if c[2] == PROBE_FLAGS]
assert len(probes) == 2 and len(calls) == 2, calls
for path, args, _ in probes:
    assert path == binary.path
    assert len(args) == 3 and args[1] == "-o", args
    assert args[0].endswith(".bytecode") and args[2].endswith(".cubin"), args
    with open(args[2], "rb") as f:
        assert f.read(4) == b"\x7fELF", args[2]
ok("bytecode")


def array(dtype, ndim=1, **kw):
    return ArrayConstraint(dtype, ndim, index_dtype=ct.int32, stride_lower_bound_incl=0,
                           alias_groups=(), may_alias_internally=False, **kw)


def signature(name, params):
    return KernelSignature(params, CallingConvention.cutile_python_v1(), symbol=name)


@ct.kernel
def vadd(a, b, c):
    i = ct.bid(0)
    x = ct.load(a, index=(i,), shape=(256,))
    y = ct.load(b, index=(i,), shape=(256,))
    ct.store(c, index=(i,), tile=x + y)


def check_cubin(data, symbol):
    assert data[:4] == b"\x7fELF", data[:16]
    assert struct.unpack_from("<HH", data, 16) == (2, 190)  # ET_EXEC, EM_CUDA
    assert symbol.encode() + b"\0" in data, symbol


# kernel: cuTile's compile_cubin flags, cache off.
assert default_tile_context.config.cache_dir is None
vadd_sig = signature("vadd_f32", [array(ct.float32)] * 3)
out = os.path.join(work, "vadd_sm90.cubin")
before = len(compiles())
export_kernel(vadd, [vadd_sig], out, gpu_code="sm_90", output_format="cubin")
assert len(compiles()) == before + 1, compiles()[before:]
path, args, flags = compiles()[-1]
assert path == binary.path
assert flags == ["--gpu-name", "sm_90", "-O3", "--lineinfo"], flags
assert len(args) == 3 and args[0].endswith(".bytecode") and args[1] == "-o", args
assert args[2] == args[0][: -len(".bytecode")] + ".cubin", args
with open(out, "rb") as f:
    cubin = f.read()
check_cubin(cubin, "vadd_f32")
ok("kernel")

# cache: with the disk cache on and bytecode 13.4, cuTile also asks for
# remarks; a second export of the same kernel is a hit and runs nothing.
cache_dir = os.path.join(work, "cache")
shutil.rmtree(cache_dir, ignore_errors=True)
default_tile_context.config.cache_dir = cache_dir
out = os.path.join(work, "vadd_sm120.cubin")
before = len(compiles())
export_kernel(vadd, [vadd_sig], out, gpu_code="sm_120", output_format="cubin")
assert len(compiles()) == before + 1, compiles()[before:]
path, args, flags = compiles()[-1]
remarks = args[0][: -len(".bytecode")] + ".remarks.yaml"
assert flags == ["--gpu-name", "sm_120", "-O3", "--lineinfo", "--remark-format=yaml",
                 "--remarks=all", f"--remarks-output-file={remarks}"], flags
assert os.path.isfile(remarks), remarks
with open(out, "rb") as f:
    first = f.read()
check_cubin(first, "vadd_f32")
assert os.path.isfile(os.path.join(cache_dir, "cache.db"))
again = os.path.join(work, "vadd_sm120_again.cubin")
export_kernel(vadd, [vadd_sig], again, gpu_code="sm_120", output_format="cubin")
assert len(compiles()) == before + 1, compiles()[before + 1:]
with open(again, "rb") as f:
    assert f.read() == first
default_tile_context.config.cache_dir = None
ok("cache")


# error: f4E2M1FN (sm_100 on, for cuTile) has no NaN, so a load padded with NaN is a valid program
# (an f4 array needs its unit stride static) that no tileiras compiles (NVIDIA's 13.5 exits 5,
# ours 4); the message must point at the load.
@ct.kernel
def f4_nan_padding(a, c):
    x = ct.load(a, index=(0,), shape=(64,), padding_mode=ct.PaddingMode.NAN)  # the error
    ct.store(c, index=(0,), tile=ct.astype(x, ct.float32))


with open(__file__) as f:
    lines = f.read().splitlines()
marker = [i for i, t in enumerate(lines, 1) if t.endswith("# the error")]
assert len(marker) == 1
line = marker[0]
# cuTile records Python's column of the call (ast col_offset, from 0).
loads = [n for n in ast.walk(ast.parse("\n".join(lines)))
         if isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "load"
         and n.lineno == line]
assert len(loads) == 1
column = loads[0].col_offset
assert column == lines[line - 1].index("ct.load(")
before = len(compiles())
try:
    export_kernel(f4_nan_padding, [signature("f4_nan_padding",
                                             [array(ct.float4_e2m1fn, stride_constant=(1,)),
                                              array(ct.float32)])],
                  os.path.join(work, "f4.cubin"), gpu_code="sm_100", output_format="cubin")
except ct.TileCompilerExecutionError as e:
    error = e
else:
    raise AssertionError("tileiras compiled a load of f4E2M1FN padded with NaN")
assert len(compiles()) == before + 1, compiles()[before:]
assert compiles()[-1][2] == ["--gpu-name", "sm_100", "-O3", "--lineinfo"], compiles()[-1]
assert not error.loc.is_unknown(), error.message
assert os.path.basename(error.loc.filename) == os.path.basename(__file__), error.loc
assert (error.loc.line, error.loc.col) == (line, column), (str(error.loc), line, column)
assert error.message.startswith("Return code 4\n"), error.message
assert "NaN padding for f4E2M1FN" in error.message, error.message
assert "loc(" not in error.message, error.message
ok("error")
