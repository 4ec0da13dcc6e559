#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Export real cuTile kernels from cuTile's own test suite as differential cases.

Run with a Python that has NVIDIA's cuTile (`cuda-tile`) installed; no GPU, driver,
torch, numpy or pytest is needed:

    python scripts/export-cutile-kernels.py --tests PATH/TO/cutile/test \
        [--set cutile|bench] [--out tests/data/differential/SET] \
        [--disasm PATH/TO/tileirdisasm] [--check PATH/TO/tileiras] [--only REGEX] \
        [--keep-going]

`--set cutile` (the default) exports the kernels of cuTile's tests to
tests/data/differential/cutile; `--set bench` exports the kernels of cuTile's benchmarks
at their large tiles to tests/data/differential/bench (`define_cases_bench`). A run
writes only its own set's folder.

`--tests` is the `test` directory of NVIDIA/cutile-python (Apache-2.0), or a tarball
holding it as `cutile/test`.
Each case becomes NAME.tileir (the bytecode cuTile writes for the kernel and the
argument specialisation the test launches it with) and NAME.json (grid, one
argument description per entry parameter, ulp bound, note).

How it works:
  * `torch`, `pytest` and `numpy` are replaced by permissive stub modules so that the
    test files import; the kernels (`@ct.kernel` objects at module or class level) are
    then taken from the imported test modules, so their source is the test's own.
    Kernels a test declares locally are taken from its first `ct.launch` (`launched`).
  * cuTile's C extension loads the CUDA driver through `cuGetProcAddress_v2`; a stub
    written with ctypes answers every driver entry point with success (driver version
    13.0, one device of compute capability 8.0), so nothing touches a GPU.
  * Arrays are small fake objects with `__cuda_array_interface__` (shape, strides,
    typestr, a fake device pointer aligned to 256 bytes, no two overlapping), so
    `KernelSignature.from_kernel_args` derives exactly the specialisation `ct.launch`
    would (divisibility, stride-1 dimensions, constants, scalar types).  bfloat16
    arrays are specialised as float16 and then retyped to bfloat16.
  * `ct.compilation.export_kernel(..., output_format="tileir_bytecode")` writes the
    bytecode (gpu_code sm_80, or sm_120 for float8 cases, bytecode version 13.4).
  * The JSON parameter list is derived from the signature's constraints (see
    `flatten`) and, with `--disasm`, checked against the entry signature that
    `tileirdisasm` prints.
  * Debug locations in the bytecode name files relative to the tests' directory or to
    cuTile's package (see `install_portable_debug_paths`).
"""

import argparse
import ctypes
import dataclasses
import importlib
import json
import math
import os
import pathlib
import re
import struct
import subprocess
import sys
import tempfile
import types
from io import BytesIO


# --------------------------------------------------------------------------------------
# Stubs for the GPU-side libraries the test files import.
# --------------------------------------------------------------------------------------

class _Any:
    """Stands for any torch/pytest/numpy object at import time of a test file."""

    def __init__(self, name="any"):
        self._n = name

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return _Any(self._n + "." + k)

    def __call__(self, *a, **kw):
        # Decorators (pytest.mark.parametrize(...)(fn), pytest.fixture(fn)) keep fn.
        if len(a) == 1 and not kw and (isinstance(a[0], (types.FunctionType, type))
                                        or hasattr(a[0], "_annotated_function")):
            return a[0]
        return _Any(self._n + "()")

    def __getitem__(self, k):
        return _Any(self._n + "[]")

    def __iter__(self):
        return iter(())

    def __mro_entries__(self, bases):
        return (object,)

    def __setitem__(self, k, v):
        pass

    def _self(self, *a):
        return self

    __or__ = __ror__ = __and__ = __rand__ = __add__ = __radd__ = __sub__ = __rsub__ = _self
    __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __floordiv__ = __mod__ = _self
    __neg__ = __pos__ = __pow__ = __rpow__ = __matmul__ = __invert__ = _self
    __iadd__ = __isub__ = __imul__ = __itruediv__ = __lt__ = __le__ = __gt__ = __ge__ = _self
    __enter__ = _self

    def __exit__(self, *a):
        return False

    def __int__(self):
        return 1

    def __index__(self):
        return 1

    def __float__(self):
        return 1.0

    def __len__(self):
        return 1

    def __bool__(self):
        return True

    def __repr__(self):
        return f"<stub {self._n}>"


class _StubModule(types.ModuleType):
    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return _Any(self.__name__ + "." + k)


def install_stub_modules():
    for name in ["torch", "torch.testing", "torch.cuda", "torch.nn", "torch.nn.functional",
                 "torch.utils", "torch.utils.dlpack", "pytest", "numpy", "cupy",
                 "ml_dtypes"]:
        m = _StubModule(name)
        m.__path__ = []
        sys.modules[name] = m
    # Kernels use numpy's and torch's dtypes and constants inside the kernel body
    # (np.float32, torch.int32, np.inf): give the stubs cuTile's own dtypes and the
    # float constants.
    import cuda.tile as ct
    np = sys.modules["numpy"]
    for name in ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64"]:
        setattr(np, name, getattr(ct, name))
    torch = sys.modules["torch"]
    for name in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "bfloat16", "float32", "float64"]:
        setattr(torch, name, getattr(ct, name))
    torch.bool = ct.bool_
    np.inf = math.inf
    np.nan = math.nan
    np.newaxis = None


# --------------------------------------------------------------------------------------
# A CUDA driver that is not there.
# --------------------------------------------------------------------------------------

_keep_alive = {}
_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76


def _driver_stub(name):
    def f(a0, a1, a2, a3):
        if name == b"cuDriverGetVersion":
            ctypes.cast(a0, ctypes.POINTER(ctypes.c_int))[0] = 13000
        elif name == b"cuDeviceGetCount":
            ctypes.cast(a0, ctypes.POINTER(ctypes.c_int))[0] = 1
        elif name == b"cuDeviceGetAttribute":
            ctypes.cast(a0, ctypes.POINTER(ctypes.c_int))[0] = {
                _CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: 8,
                _CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: 0,
            }.get(a1 or 0, 1)
        elif name in (b"cuLaunchKernel", b"cuLaunchKernelEx", b"cuLibraryLoadData"):
            raise RuntimeError("the export must not launch or load anything")
        return 0
    cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                          ctypes.c_void_p)(f)
    _keep_alive[name] = cb
    return cb


def install_fake_driver():
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                             ctypes.c_int, ctypes.c_uint64, ctypes.c_void_p)

    def get_proc(name, pfn, version, flags, status):
        pfn[0] = ctypes.cast(_driver_stub(name), ctypes.c_void_p).value
        return 0

    cb = proto(get_proc)
    _keep_alive["cuGetProcAddress_v2"] = cb
    m = types.ModuleType("cuda.tile._load_libcuda")
    m._cuGetProcAddress_v2 = cb
    m.cuGetProcAddress_v2_ptrptr = ctypes.addressof(cb)
    sys.modules["cuda.tile._load_libcuda"] = m


# --------------------------------------------------------------------------------------
# Fake arrays and case descriptions.
# --------------------------------------------------------------------------------------

ELEM = {
    # elem: (typestr, bytes)
    "i1": ("|b1", 1), "i8": ("|i1", 1), "i16": ("<i2", 2), "i32": ("<i4", 4),
    "i64": ("<i8", 8), "u8": ("|u1", 1), "u16": ("<u2", 2), "u32": ("<u4", 4),
    "u64": ("<u8", 8), "f16": ("<f2", 2), "bf16": ("<f2", 2), "f32": ("<f4", 4),
    "f64": ("<f8", 8),
    # float8 arrays are specialised as int8 and then retyped (see `retype_narrow_floats`)
    "f8e4m3": ("|i1", 1), "f8e5m2": ("|i1", 1),
}


class A:
    """An array argument: shape, element type, optional strides (in elements)."""

    def __init__(self, shape, elem, init="random", out=False, strides=None, buflen=None):
        self.shape = tuple(shape)
        self.buflen = buflen  # the buffer behind a view can be longer than the view
        self.elem = elem
        self.init = init
        self.out = out
        if strides is None:
            strides, acc = [], 1
            for d in reversed(self.shape):
                strides.append(acc)
                acc *= d
            strides = tuple(reversed(strides))
        self.strides = tuple(strides)
        self.ptr = None

    @property
    def length(self):
        if any(d == 0 for d in self.shape):
            n = 1
        else:
            n = 1 + sum((d - 1) * s for d, s in zip(self.shape, self.strides))
        return max(n, self.buflen or 0)

    @property
    def __cuda_array_interface__(self):
        typestr, size = ELEM[self.elem]
        return {"shape": self.shape, "typestr": typestr, "data": (self.ptr, False),
                "version": 3, "strides": tuple(s * size for s in self.strides)}


def T(*elems):
    """A tuple argument."""
    return tuple(elems)


@dataclasses.dataclass
class Case:
    name: str
    kernel: str          # "module:attr" or "module:Class.attr"
    args: list
    grid: tuple
    note: str
    ulp: int = 0
    gpu: str = "sm_80"  # the target the bytecode is exported for (`--check` compiles for it)


CASES = []


def case(name, kernel, args, grid, note, ulp=0, gpu="sm_80"):
    grid = tuple(grid) + (1,) * (3 - len(grid))
    CASES.append(Case(name, kernel, list(args), grid, note, ulp, gpu))


def cdiv(a, b):
    return (a + b - 1) // b


# --------------------------------------------------------------------------------------
# The cases: kernel, arguments as the test passes them, grid as the test launches it.
# Sizes follow the test; where a test's arrays exceed ~64K elements or its grid ~64
# blocks, a smaller size of the same shape class (ragged where the test is) is used
# and the note says so.
# --------------------------------------------------------------------------------------

def define_cases():
    cf = "test_control_flow:"
    # TestForLoop.test_basic_for_loop: N=256, tile=128, n=5.
    for k in ["plus_n_one_arg", "plus_n_two_args", "plus_n_step2", "plus_n_two_loops",
              "plus_n_two_loops_once_each", "plus_n_scalar_acc"]:
        case(f"cf_{k}", cf + "TestForLoop." + k, [A((256,), "f32", out=True), 5, 128], (2,),
             f"test_control_flow.py TestForLoop.test_basic_for_loop[{k}]: N=256 tile=128 n=5")
    for k in ["plus_n_nested_for_loops", "plus_n_nested_for_loops_for_two_variables"]:
        case(f"cf_{k}", cf + "TestForLoop." + k, [A((256,), "f32", out=True), 5, 128], (2,),
             f"test_control_flow.py TestForLoop.test_nested_for_loops[{k}]: N=256 tile=128 n=5")
    for n in [5, 1, 0]:
        case(f"cf_plus_n_until_2_n{n}", cf + "TestForLoop.plus_n_until_2",
             [A((256,), "f32", out=True), n, 128], (2,),
             f"test_control_flow.py TestForLoop.test_break_in_for_loop_1[n={n}]: N=256 tile=128")
    for n in [0, 3, 8]:
        case(f"cf_nested_cont_break_if_n{n}", cf + "TestForLoop.nested_cont_break_if",
             [A((256,), "f32", out=True), n, 128], (2,),
             f"test_control_flow.py TestForLoop.test_nested_break_continue_in_for_loop[n={n}]:"
             " N=256 tile=128")
    case("cf_tuple_fibonacci", cf + "TestForLoop.tuple_fibonacci", [A((3,), "f32", out=True)],
         (1,), "test_control_flow.py TestForLoop.test_tuple_carried_variable: x of 3 f32")
    for k in ["plus_n", "break_in_while", "continue_in_while"]:
        case(f"cf_while_{k}", cf + "TestWhileLoop." + k, [A((256,), "f32", out=True), 5, 128],
             (2,), f"test_control_flow.py TestWhileLoop.{k}: N=256 tile=128 n=5")
    for k in ["constant_assigned_inside_loop", "same_constant_two_branches_inside_loop"]:
        case(f"cf_{k}", cf + "TestWhileLoop." + k, [A((1,), "f32", out=True)], (1,),
             f"test_control_flow.py TestWhileLoop.test_{k}: x of 1 f32")
    case("cf_break_const_value", cf + "TestWhileLoop.break_const_value",
         [A((1,), "i32", out=True)], (1,),
         "test_control_flow.py TestWhileLoop.test_break_with_const_value: x of 1 i32")
    for k in ["plus_one_if_true", "plus_or_minus_one"]:
        for cond, tag in [(True, "true"), (False, "false"), (1, "1"), (0, "0")]:
            case(f"cf_{k}_{tag}", cf + "TestIfCondtion." + k,
                 [A((256,), "f32", out=True), cond, 128], (2,),
                 f"test_control_flow.py TestIfCondtion.test_basic_if[{k}, condition={cond!r}]:"
                 " N=256 tile=128 (bool specialises to i1, int to i32)")
    for c0, c1 in [(1, 0), (0, 1)]:
        case(f"cf_plus_one_two_ifs_{c0}{c1}", cf + "TestIfCondtion.plus_one_two_ifs",
             [A((256,), "f32", out=True), c0, c1, 128], (2,),
             f"test_control_flow.py TestIfCondtion.test_two_ifs[{c0}, {c1}]: N=256 tile=128")
    case("cf_plus_one_nested_ifs", cf + "TestIfCondtion.plus_one_nested_ifs",
         [A((256,), "f32", out=True), True, False, 128], (2,),
         "test_control_flow.py TestIfCondtion.test_nested_ifs[True, False]: N=256 tile=128")
    for k in ["plus_one_two_conditions_and", "plus_one_and_in_variable",
              "plus_one_two_conditions_or"]:
        case(f"cf_{k}", cf + "TestIfCondtion." + k,
             [A((256,), "f32", out=True), 1, 0, 128], (2,),
             f"test_control_flow.py TestIfCondtion.test_if_two_conditions[{k}, 1, 0]:"
             " N=256 tile=128")
    for c0, c1, c2, base in [(1, 5, -5, 100), (0, 0, True, 0), (True, False, -5, 100),
                             (False, 5, 0, 0)]:
        tag = "_".join(str(v).lower() for v in (c0, c1, c2, base)).replace("-", "m")
        case(f"cf_multiple_conditions_in_if_{tag}", cf + "TestIfCondtion.multiple_conditions_in_if",
             [A((256,), "f32", out=True), c0, c1, c2, base, 128], (2,),
             f"test_control_flow.py TestIfCondtion.test_if_multiple_conditions"
             f"[{c0!r}, {c1!r}, {c2!r}, base={base}]: N=256 tile=128")
    case("cf_if_else_assignment", cf + "TestIfCondtion.if_else_assignment",
         [A((256,), "f32", out=True), True, 128], (2,),
         "test_control_flow.py TestIfCondtion.test_if_else_assignment[True]: N=256 tile=128")
    case("cf_if_else_assignment_type_match", cf + "TestIfCondtion.if_else_assignment_type_match",
         [A((256,), "f32", out=True), 5, 128], (2,),
         "test_control_flow.py TestIfCondtion.test_if_else_assignment_type_match[5]:"
         " N=256 tile=128")
    case("cf_chain_comparison", cf + "TestIfCondtion.chain_comparison",
         [A((256,), "f32", out=True), 0, 2, 128], (2,),
         "test_control_flow.py TestIfCondtion.test_chain_comparison: N=256 tile=128 left=0"
         " right=2")
    case("cf_tuple_if_else", cf + "TestIfCondtion.tuple_if_else", [A((3,), "f32", out=True)],
         (1,), "test_control_flow.py TestIfCondtion.test_if_else_tuple_result: x of 3 f32")
    case("cf_array_if_else", cf + "TestIfCondtion.array_if_else",
         [A((1,), "i32", out=True), A((1,), "i32", out=True)], (2,),
         "test_control_flow.py TestIfCondtion.test_if_else_array_result: x, y of 1 i32,"
         " grid 2")
    case("cf_plus_n_skip_2", cf + "TestMixedControlFlow.plus_n_skip_2",
         [A((256,), "f32", out=True), 5, 128], (2,),
         "test_control_flow.py TestMixedControlFlow.test_basic_continue[5]: N=256 tile=128")
    case("cf_more_nested_control_flow", cf + "TestMixedControlFlow.more_nested_control_flow",
         [A((256,), "f32", out=True), 5, False, 128], (2,),
         "test_control_flow.py TestMixedControlFlow.test_more_nested_control_flow[5]:"
         " N=256 tile=128 cond=False")
    case("cf_valid_undefined_variable", cf + "TestUndefinedVariable.valid_undefined_variable",
         [A((256,), "f32"), A((256,), "f32", init="zeros", out=True), 128], (2,),
         "test_control_flow.py TestUndefinedVariable.test_valid_undefined_variable: N=256"
         " tile=128")
    case("cf_valid_undefined_variable_in_loop",
         cf + "TestUndefinedVariable.valid_undefined_variable_in_loop",
         [A((256,), "f32"), A((256,), "f32", init="zeros", out=True), 128], (2,),
         "test_control_flow.py TestUndefinedVariable.valid_undefined_variable_in_loop"
         " (the test launches valid_undefined_variable; this is the loop kernel it declares)"
         ": N=256 tile=128")
    case("cf_same_constant_both_branches", cf + "TestUndefinedVariable.same_constant_both_branches",
         [A((1,), "f32", out=True)], (1,),
         "test_control_flow.py TestUndefinedVariable.test_same_constant_both_branches")
    case("cf_loop3_kernel", cf + "TestUndefinedVariable.loop3_kernel",
         [A((8, 16, 16), "f32"), A((8, 16, 16), "f32", init="zeros", out=True)], (1,),
         "test_control_flow.py TestUndefinedVariable.test_3loops: 8x16x16 f32, grid 1")
    for er in [True, False]:
        case(f"cf_early_return_{str(er).lower()}", cf + "early_return_kernel",
             [A((512, 128), "f32"), A((512, 1), "f32"), A((512, 128), "f32", init="zeros",
                                                          out=True), 16, 128, er], (32,),
             f"test_control_flow.py test_early_return[{er}]: x 512x128, y 512x1 f32, B=16,"
             " N=128, grid 32")


def define_cases_atomic():
    at = "test_atomic:"
    ops = {"xchg": 0, "add": 1, "max": 2, "min": 3, "and": 4, "or": 5, "xor": 6}
    # test_atomic_arith / test_atomic_bitwise, mode "array": 512 elements, TILE=128, grid 4.
    arith = [("xchg", "f32", "f32"), ("xchg", "i64", "i64"), ("add", "i32", "i32"),
             ("add", "u64", "u64"), ("add", "f32", "f32"), ("add", "f64", "f64"),
             ("add", "f32", "f16"), ("add", "i64", "i8"), ("max", "i32", "i32"),
             ("max", "u32", "u32"), ("min", "i64", "i64"), ("min", "u64", "u64"),
             ("and", "i32", "i32"), ("or", "u64", "u64"), ("xor", "i64", "i64")]
    for op, xd, yd in arith:
        for raw in [0, 1]:
            if raw and (op, xd) not in [("add", "i32"), ("max", "u32"), ("xchg", "f32"),
                                        ("xor", "i64")]:
                continue
            tag = "_raw" if raw else ""
            test = "test_atomic_bitwise" if op in ("and", "or", "xor") else "test_atomic_arith"
            case(f"atomic_{op}_{xd}_{yd}{tag}", at + "atomic_arith_kernel",
                 [A((512,), xd, out=True), A((512,), yd), A((512,), xd, init="zeros", out=True),
                  128, ops[op], raw], (4,),
                 f"test_atomic.py {test}[{op}-{xd}, y={yd}, array, test_raw_memory={bool(raw)}]:"
                 " 512 elements, TILE=128")
    for op, xd in [("add", "i32"), ("max", "i64"), ("xchg", "f64"), ("or", "u32")]:
        for raw in [0, 1]:
            tag = "_raw" if raw else ""
            test = "test_atomic_bitwise" if op in ("and", "or", "xor") else "test_atomic_arith"
            case(f"atomic_scalar_{op}_{xd}{tag}", at + "scalar_atomic_arith_kernel",
                 [A((1,), xd, out=True), A((1,), xd), A((1,), xd, init="zeros", out=True),
                  ops[op], raw], (1,),
                 f"test_atomic.py {test}[{op}-{xd}, y={xd}, scalar,"
                 f" test_raw_memory={bool(raw)}]: 1 element")
    for xd, yd in [("i32", "i32"), ("u64", "u64"), ("f32", "f32"), ("f64", "f32"),
                   ("i64", "i16")]:
        for raw in [0, 1]:
            tag = "_raw" if raw else ""
            case(f"atomic_cas_{xd}_{yd}{tag}", at + "atomic_cas",
                 [A((512,), xd, out=True), A((512,), yd), A((512,), xd, init="zeros", out=True),
                  128, raw], (4,),
                 f"test_atomic.py test_atomic_cas[{xd}, y={yd}, array,"
                 f" test_raw_memory={bool(raw)}]: 512 elements, TILE=128")
    for raw in [0, 1]:
        tag = "_raw" if raw else ""
        case(f"atomic_scalar_cas_i64{tag}", at + "scalar_atomic_cas",
             [A((1,), "i64", out=True), A((1,), "i64"), A((1,), "i64", init="zeros", out=True),
              raw], (1,),
             f"test_atomic.py test_atomic_cas[i64, y=i64, scalar, test_raw_memory={bool(raw)}]")
    case("atomic_mixed_scalar_tile", at + "mixed_scalar_tile_atomic",
         [A((5,), "i32", out=True), A((1,), "i32")], (1,),
         "test_atomic.py test_mixed_scalar_tile_atomic[False]: x, y i32 (x given 5 elements"
         " since the kernel touches x[0..4]; the test's x has 1)")
    case("atomic_raw_memory_mixed_scalar_tile", at + "raw_memory_mixed_scalar_tile_atomic",
         [A((5,), "i32", out=True), A((1,), "i32")], (1,),
         "test_atomic.py test_mixed_scalar_tile_atomic[True]: (x given 5 elements since the"
         " kernel touches x[0..4]; the test's x has 1)")
    case("atomic_offset_add_with_mask", at + "offset_atomic_add_with_mask",
         [A((512,), "i32", init="zeros", out=True), A((512,), "i32"), 128], (4,),
         "test_atomic.py test_atomic_offset_mask: n=512 i32, tile=128")
    case("atomic_offset_cas_with_mask", at + "offset_atomic_cas_with_mask",
         [A((512,), "i32", init="range:-1:1", out=True), A((512,), "i32", init="range:-1:1"),
          A((512,), "i32"), A((512,), "i32", init="zeros", out=True), 128, 256], (4,),
         "test_atomic.py test_atomic_offset_cas_mask: n=512 i32, tile=128, N_HALF=256"
         " (x and expected drawn from {-1, 0} so that some compares succeed)")


def define_cases_reduction():
    rd = "test_reduction:"
    # Float sums/products: integer-valued inputs ("range") so that the result does not
    # depend on the order of the additions and the comparison can be exact.
    for op in ["max", "min"]:
        for dt in ["f16", "bf16", "f32"]:
            for keep in [True, False]:
                if not keep and dt != "f32":
                    continue
                out_shape = (512, 1) if keep else (512,)
                case(f"reduce_{op}_{dt}_{'keep' if keep else 'squeeze'}",
                     rd + f"make_reduce_axis1_2d(ct.{op})",
                     [A((512, 128), dt), A(out_shape, dt, init="zeros", out=True), 16, 128, keep],
                     (32,), f"test_reduction.py test_reduce_maxminf[{op}, keepdims={keep},"
                     f" {dt}, tile=16, shape=(512, 128)]")
    for op, dt in [("max", "i8"), ("min", "i64"), ("max", "i16")]:
        case(f"reduce_{op}_{dt}", rd + f"make_reduce_axis1_2d(ct.{op})",
             [A((512, 128), dt), A((512,), dt, init="zeros", out=True), 16, 128, False], (32,),
             f"test_reduction.py test_reduce_maxmini[{op}, keepdims=False, {dt}, tile=16,"
             " shape=(512, 128)]")
    for op, dt in [("max", "f32"), ("min", "f16")]:
        for keep in [True, False]:
            case(f"reduce_{op}_all_{dt}_{'keep' if keep else 'squeeze'}",
                 rd + f"make_reduce_axisNone(ct.{op})",
                 [A((512, 128), dt), A((1, 1), dt, init="zeros", out=True), 512, 128, keep], (1,),
                 f"test_reduction.py test_reduce_maxminf_all_axes[{op}, keepdims={keep}, {dt},"
                 " shape=(512, 128)]")
    for op, axes in [("max", (1, 2)), ("min", (-1, -2)), ("max", (2, -2))]:
        for keep in [True, False]:
            tag = "_".join(str(a).replace("-", "m") for a in axes)
            case(f"reduce_{op}_two_axes_{tag}_{'keep' if keep else 'squeeze'}",
                 rd + f"make_reduce_max_two_axes(ct.{op})",
                 [A((32, 32, 64), "f32"),
                  A((32, 1, 1) if keep else (32,), "f32", init="zeros", out=True),
                  16, 32, 64, keep, *axes], (2,),
                 f"test_reduction.py test_reduce_maxminf_two_axes[axes={axes}, {op},"
                 f" keepdims={keep}, f32, tile=16, shape=(32, 32, 64)]")
    for dt, init in [("f32", "range:-4:4"), ("f16", "range:-4:4"), ("bf16", "range:-2:2")]:
        for keep in [True, False]:
            case(f"reduce_sum_{dt}_{'keep' if keep else 'squeeze'}",
                 rd + "make_reduce_axis1_2d(ct.sum)",
                 [A((512, 128), dt, init=init),
                  A((512, 1) if keep else (512,), dt, init="zeros", out=True), 16, 128, keep],
                 (32,), f"test_reduction.py test_reduce_sumprodf[sum, keepdims={keep}, {dt},"
                 " tile=16, shape=(512, 128)] (integer-valued inputs: exact in any order)")
    case("reduce_prod_f32", rd + "make_reduce_axis1_2d(ct.prod)",
         [A((512, 128), "f32", init="range:1:3"), A((512,), "f32", init="zeros", out=True),
          16, 128, False], (32,),
         "test_reduction.py test_reduce_sumprodf[prod, keepdims=False, f32, tile=16,"
         " shape=(512, 128)] (inputs 1 and 2: exact in any order)")
    for op, dt in [("sum", "i32"), ("prod", "i64"), ("sum", "i8"), ("prod", "i16")]:
        case(f"reduce_{op}_{dt}", rd + f"make_reduce_axis1_2d(ct.{op})",
             [A((512, 128), dt), A((512,), dt, init="zeros", out=True), 16, 128, False], (32,),
             f"test_reduction.py test_reduce_sumprodi[{op}, keepdims=False, {dt}, tile=16,"
             " shape=(512, 128)]")
    case("reduce_sum_bool", rd + "make_reduce_axis1_2d(ct.sum)",
         [A((512, 128), "i1"), A((512,), "i32", init="zeros", out=True), 16, 128, False], (32,),
         "test_reduction.py test_reduce_sumprodb[sum, keepdims=False, tile=16,"
         " shape=(512, 128)]")
    case("reduce_sum_all_f32", rd + "make_reduce_axisNone(ct.sum)",
         [A((512, 128), "f32", init="range:-4:4"), A((1, 1), "f32", init="zeros", out=True),
          512, 128, True], (1,),
         "test_reduction.py test_reduce_sumprodf_all_axes[sum, keepdims=True, f32,"
         " shape=(512, 128)] (integer-valued inputs)")
    for op, dt, shape in [("argmax", "f32", (32, 16)), ("argmin", "f16", (32, 16)),
                          ("argmax", "i32", (2, 4, 4)), ("argmin", "i8", (2, 4, 4)),
                          ("argmax", "bf16", (32, 16))]:
        for keep in [False, True]:
            if keep and dt not in ("f32", "i32"):
                continue
            if len(shape) == 2:
                k = f"make_reduce_axis1_2d(ct.{op})"
                yshape = (32, 1) if keep else (32,)
                extra = [16, shape[1], keep]
            else:
                k = f"make_reduce_axis1_3d(ct.{op})"
                yshape = (2, 1, 4) if keep else (2, 4)
                extra = [16, shape[1], shape[2], keep]
            case(f"reduce_{op}_{dt}_{len(shape)}d_{'keep' if keep else 'squeeze'}", rd + k,
                 [A(shape, dt), A(yshape, "i32", init="zeros", out=True), *extra],
                 (1,), f"test_reduction.py test_reduce_argmaxmin[{op}, keepdims={keep}, {dt},"
                 f" tile=16, shape={shape}] (ragged: tile 16 over {shape[0]} rows)")
    for op in ["argmax", "argmin"]:
        case(f"reduce_{op}_all_f32", rd + f"make_reduce_axisNone(ct.{op})",
             [A((512, 128), "f32"), A((1, 1), "i32", init="zeros", out=True), 512, 128, True],
             (1,), f"test_reduction.py test_reduce_argmaxmin_all_axes[keepdims=True, {op}, f32,"
             " shape=(512, 128)]")
    for op in ["min", "max"]:
        for pn in [False, True]:
            case(f"reduce_{op}_nan_{'propagate' if pn else 'ignore'}",
                 rd + f"launched(test_reduce_maxmin_nan, ct.{op}, None, None, None, {pn})",
                 [A((5, 8), "f32"), A((5,), "f32", init="zeros", out=True), 8, 8], (1,),
                 f"test_reduction.py test_reduce_maxmin_nan[{op}, propagate_nan={pn}]: 5x8 f32"
                 " loaded as an 8x8 tile padded with NaN")
    for op in ["argmin", "argmax"]:
        for pn in [False, True]:
            case(f"reduce_{op}_nan_{'propagate' if pn else 'ignore'}",
                 rd + f"launched(test_reduce_argmaxmin_nan, ct.{op}, None, None, None, {pn})",
                 [A((5, 8), "f32"), A((5,), "i32", init="zeros", out=True), 8, 8], (1,),
                 f"test_reduction.py test_reduce_argmaxmin_nan[{op}, propagate_nan={pn}]: 5x8"
                 " f32 loaded as an 8x8 tile padded with NaN")
    for fl in ["lambda", "def", "operator"]:
        case(f"reduce_custom_{fl}", rd + f"launched(test_custom_reduction_simple, '{fl}')",
             [A((16, 16), "i32"), A((16,), "i32", init="zeros", out=True)], (1,),
             f"test_reduction.py test_custom_reduction_simple[{fl}]: 16x16 i32")
    case("reduce_custom_keepdims", rd + "launched(test_custom_reduction_keepdims)",
         [A((16, 16), "i32"), A((1, 16), "i32", init="zeros", out=True)], (1,),
         "test_reduction.py test_custom_reduction_keepdims: 16x16 i32")
    case("reduce_custom_last_axis", rd + "launched(test_custom_reduction_last_axis)",
         [A((16, 16), "i32"), A((16,), "i32", init="zeros", out=True)], (1,),
         "test_reduction.py test_custom_reduction_last_axis: 16x16 i32")
    case("reduce_custom_minimum_with_index",
         rd + "launched(test_custom_reduction_minimum_with_index)",
         [A((4, 8), "i32", init="range:-8:8"), A((4,), "i32", init="zeros", out=True),
          A((4,), "i32", init="zeros", out=True)], (1,),
         "test_reduction.py test_custom_reduction_minimum_with_index: 4x8 i32 (values drawn"
         " from [-8, 8) so that ties occur)")
    case("reduce_custom_with_capture", rd + "launched(test_custom_reduction_with_capture)",
         [A((16, 16), "i32"), A((), "i32", init="range:1:100"),
          A((16,), "i32", init="zeros", out=True)], (1,),
         "test_reduction.py test_custom_reduction_with_capture: 16x16 i32, 0-d modulus"
         " (drawn from [1, 100))")
    case("reduce_custom_welford", rd + "launched(test_custom_reduction_welford)",
         [A((1024,), "f32", init="finite"), A((1024,), "f32", init="range:0:100"),
          A((2,), "f32", init="zeros", out=True)], (1,),
         "test_reduction.py test_custom_reduction_welford: 1024 f32 values and weights"
         " (divisions and an order-dependent combine: compare with a tolerance)", ulp=64)


def define_cases_scan_softmax_select():
    sc = "test_scan:"
    for dt, init in [("f32", "range:-4:4"), ("f16", "range:-4:4"), ("bf16", "range:-2:2")]:
        for rev in [False, True]:
            if rev and dt != "f32":
                continue
            case(f"scan_cumsum_{dt}{'_reverse' if rev else ''}", sc + "cumsum_axis1",
                 [A((32, 32), dt, init=init), A((32, 32), dt, init="zeros", out=True), rev, 32,
                  32], (1,),
                 f"test_scan.py test_cumsumf[reverse={rev}, {dt}, shape=(32, 32)]"
                 " (integer-valued inputs: exact in any order)")
    for dt in ["i32", "i64", "i8"]:
        case(f"scan_cumsum_{dt}", sc + "cumsum_axis1",
             [A((32, 32), dt), A((32, 32), dt, init="zeros", out=True), dt == "i8", 32, 32],
             (1,), f"test_scan.py test_cumsumi[reverse={dt == 'i8'}, {dt}, shape=(32, 32)]")
    case("scan_cumsum_bool", sc + "cumsum_axis1",
         [A((32, 32), "i1"), A((32, 32), "i32", init="zeros", out=True), False, 32, 32], (1,),
         "test_scan.py test_cumsumb[reverse=False, shape=(32, 32)]")
    for dt, init in [("f32", "range:1:3"), ("f16", "range:1:3")]:
        for rev in [False, True]:
            case(f"scan_cumprod_{dt}{'_reverse' if rev else ''}", sc + "cumprod_axis0",
                 [A((16, 32), dt, init=init), A((16, 32), dt, init="zeros", out=True), rev, 16,
                  32], (1,),
                 f"test_scan.py test_cumprodf[reverse={rev}, {dt}, shape=(16, 32)]"
                 " (inputs 1 and 2: exact in any order)")
    case("scan_cumprod_i16", sc + "cumprod_axis0",
         [A((16, 32), "i16"), A((16, 32), "i16", init="zeros", out=True), True, 16, 32], (1,),
         "test_scan.py test_cumprodi[reverse=True, i16, shape=(16, 32)]")
    for fl in ["lambda", "def", "operator"]:
        case(f"scan_custom_cumsum_{fl}",
             sc + f"launched(test_scan_custom_cumsum, (16, 16), None, True, '{fl}')",
             [A((16, 16), "i32"), A((16, 16), "i32", init="zeros", out=True), fl != "def"],
             (1,), f"test_scan.py test_scan_custom_cumsum[{fl}, reverse={fl != 'def'}, i32,"
             " shape=(16, 16)]")
    case("scan_custom_cumprod_f32", sc + "launched(test_scan_custom_cumprod, (16, 32), None, True)",
         [A((16, 32), "f32", init="range:1:3"), A((16, 32), "f32", init="zeros", out=True), True,
          16, 32], (1,),
         "test_scan.py test_scan_custom_cumprod[reverse=True, f32, shape=(16, 32)]"
         " (inputs 1 and 2)")
    case("scan_custom_last_axis", sc + "launched(test_custom_scan_last_axis)",
         [A((16, 16), "i32"), A((16, 16), "i32", init="zeros", out=True)], (1,),
         "test_scan.py test_custom_scan_last_axis: 16x16 i32")

    sm = "test_softmax:"
    for dt in ["f32", "f16", "bf16"]:
        case(f"softmax_{dt}", sm + "softmax",
             [A((512, 128), dt, init="finite"), A((512, 128), dt, init="zeros", out=True), 16,
              128], (32,), f"test_softmax.py test_softmax[{dt}, tile=16, shape=(512, 128)]"
             " (exp and a 128-wide sum: compare with a tolerance)", ulp=8)
    for dt in ["f32", "f16"]:
        case(f"softmax_per_row_{dt}", sm + "softmax_per_row",
             [A((512, 128), dt, init="finite"), A((512, 128), dt, init="zeros", out=True), 512,
              128], (32,), f"test_softmax.py test_softmax_per_row[{dt}, tile=16,"
             " shape=(512, 128)]: grid 32, each block loops over rows", ulp=8)

    se = "test_select:"
    for dt in ["f32", "f16", "bf16"]:
        case(f"select_masked_copy_{dt}", se + "masked_copy",
             [A((128,), "i1"), A((128,), dt), A((128,), dt), A((128,), dt, init="zeros",
                                                                out=True), 128], (1,),
             f"test_select.py test_mask_copy[{dt}, tile=128, shape=(128,)]")
    case("select_scalar_f32", se + "select_scalar",
         [A((128,), "i1"), A((128,), "f32", init="zeros", out=True), 128], (1,),
         "test_select.py test_select_scalar[f32, tile=128, shape=(128,)]")
    for dt, xt, mt in [("f32", (128, 128), (1, 128)), ("f16", (1, 128), (128, 1)),
                       ("bf16", (128, 1), (128, 128)), ("f32", (1, 1), (128, 128))]:
        out = tuple(max(a, b) for a, b in zip(xt, mt))
        case(f"select_tensor_scalar_{dt}_x{xt[0]}x{xt[1]}_m{mt[0]}x{mt[1]}",
             se + "select_tensor_scalar",
             [A(mt, "i1"), A(xt, dt), A(out, dt, init="zeros", out=True), *mt, *xt], (1,),
             f"test_select.py test_select_tensor_scalar[mask_tile={mt}, x_tile={xt}, {dt}]")

    pu = "test_pack_unpack:"
    for dt, nb in [("f32", 4), ("f16", 2), ("i64", 8), ("i8", 1), ("f64", 8), ("bf16", 2)]:
        case(f"pack_to_bytes_{dt}", pu + "launched(test_pack_to_bytes, None)",
             [A((128,), dt), A((128 * nb,), "u8", init="zeros", out=True), 128], (1,),
             f"test_pack_unpack.py test_pack_to_bytes[{dt}]: tile=128")
    for dt, nb in [("f32", 4), ("i16", 2), ("u64", 8)]:
        case(f"unpack_from_bytes_{dt}", pu + "launched(test_unpack_from_bytes, None)",
             [A((32 * nb,), "u8"), A((32,), dt, init="zeros", out=True), 32 * nb], (1,),
             f"test_pack_unpack.py test_unpack_from_bytes[{dt}]: 32 elements")
    for xd, yd, n in [("f32", "f32", 128), ("f16", "i32", 64), ("i64", "f16", 512),
                      ("u8", "bf16", 64)]:
        xn = 128
        case(f"pack_unpack_1d_{xd}_to_{yd}", pu + "pack_unpack_1d",
             [A((xn,), xd), A((n,), yd, init="zeros", out=True), xn], (1,),
             f"test_pack_unpack.py "
             + ("test_pack_unpack_roundtrip" if xd == yd else "test_cross_type_pack_unpack")
             + f"[{xd}, {yd}]: tile=128")
    case("pack_unpack_roundtrip_0d_i32", pu + "launched(test_pack_unpack_roundtrip_0d, None)",
         [A((), "i32"), A((), "i32", init="zeros", out=True)], (1,),
         "test_pack_unpack.py test_pack_unpack_roundtrip_0d[i32]")
    case("pack_unpack_roundtrip_2d_f16", pu + "launched(test_pack_unpack_roundtrip_2d, None)",
         [A((64, 128), "f16"), A((64, 128), "f16", init="zeros", out=True), 32, 64], (2, 2),
         "test_pack_unpack.py test_pack_unpack_roundtrip_2d[f16]: 64x128, tiles 32x64")
    case("unpack_pack_roundtrip_f16", pu + "launched(test_unpack_pack_roundtrip, ct.float16)",
         [A((128,), "u8"), A((128,), "u8", init="zeros", out=True), 128], (1,),
         "test_pack_unpack.py test_unpack_pack_roundtrip[f16]: 128 bytes")

    tr = "test_transpose:"
    for k in ["permute_tile_2d_explicit_axes", "permute_tile_2d_negative_axes",
              "transpose_tile_2d_explicit_axes", "transpose_tile_2d_default_axes"]:
        for dt, um in [("f32", True), ("f16", False)]:
            case(f"{k}_{dt}_{'method' if um else 'function'}", tr + k,
                 [A((128, 64), dt), A((64, 128), dt, init="zeros", out=True), um], (1,),
                 f"test_transpose.py test_permute_2d[{k}, use_method={um}, {dt}]: 128x64")
    case("transpose_tile_3d_explicit_axes_bf16", tr + "transpose_tile_3d_explicit_axes",
         [A((1, 8, 2), "bf16"), A((1, 2, 8), "bf16", init="zeros", out=True)], (1,),
         "test_transpose.py test_transpose_3d[bf16]: 1x8x2")
    case("transpose_tile_2d_same_axis", tr + "transpose_tile_2d_same_axis",
         [A((128, 64), "f32"), A((128, 64), "f32", init="zeros", out=True)], (1,),
         "test_transpose.py test_transpose_2d_same_axis: 128x64 f32")
    for dt, (m, n), (tm, tn) in [("f32", (200, 136), (32, 32)), ("f16", (96, 80), (64, 16))]:
        case(f"transpose_kernel_{dt}_{m}x{n}", "kernels.transpose:transpose_kernel",
             [A((m, n), dt), A((n, m), dt, init="zeros", out=True), tm, tn],
             (cdiv(m, tm), cdiv(n, tn)),
             f"kernels/transpose.py transpose_kernel (as bench_transpose.py launches it) on a"
             f" ragged {m}x{n} {dt} matrix, tiles {tm}x{tn}")


def define_cases_mma():
    mm = "test_mma:"
    # Integer-valued float inputs (drawn from [-4, 4)) keep every product and partial sum
    # exact, so NVIDIA's and our instruction order give the same bits.
    m, n, k = 2, 8, 16
    for dt, acc in [("bf16", "f32"), ("f16", "f16"), ("f16", "f32"), ("f32", "f32"),
                    ("f64", "f64")]:
        case(f"mma_{dt}_{acc}", mm + "mma_kernel",
             [A((m, k), dt, init="range:-4:4"), A((k, n), dt, init="range:-4:4"),
              A((m, n), acc, init="range:-4:4", out=True), m, n, k, False], (1,),
             f"test_mma.py test_mma_regular_float[{dt}-{acc}, tile_size=(2, 8, 16)]"
             " (integer-valued inputs)")
    case("mma_tf32", mm + "mma_tf32_kernel",
         [A((8, 4), "f32", init="range:-4:4"), A((4, 2), "f32", init="range:-4:4"),
          A((8, 2), "f32", init="range:-4:4", out=True), 8, 2, 4], (1,),
         "test_mma.py test_mma_tf32[tile_size=(8, 2, 4)] (integer-valued inputs, exact in tf32)")
    for dt in ["i8", "u8"]:
        case(f"mma_{dt}_i32", mm + "mma_kernel",
             [A((2, 1), dt, init="range:0:32"), A((1, 2), dt, init="range:0:32"),
              A((2, 2), "i32", out=True), 2, 2, 1, False], (1,),
             f"test_mma.py test_mma_int[{dt}-i32, tile_size=(2, 2, 1)]")
    case("mma_i8_u8_i32", mm + "mma_kernel",
         [A((2, 1), "i8", init="range:0:32"), A((1, 2), "u8", init="range:0:32"),
          A((2, 2), "i32", out=True), 2, 2, 1, False], (1,),
         "test_mma.py test_mma_mixed_int_uint[tile_size=(2, 2, 1)]")
    case("mma_batch_f32", mm + "mma_batch_kernel",
         [A((4, 16), "f32", init="range:-4:4"), A((2, 16, 8), "f32", init="range:-4:4"),
          A((2, 4, 8), "f32", init="range:-4:4", out=True), 2, 4, 8, 16], (1,),
         "test_mma.py test_batch_mma: b=2 m=4 n=8 k=16 f32 (integer-valued inputs)")
    for xd, yd, acc in [("bf16", "bf16", "bf16"), ("f16", "f16", "f16"), ("f32", "f32", "f32"),
                        ("f64", "f64", "f64"), ("f16", "f32", "f32"), ("bf16", "f64", "f64")]:
        case(f"matmul_{xd}_{yd}", mm + "matmul_kernel",
             [A((2, 16), xd, init="range:-4:4"), A((16, 8), yd, init="range:-4:4"),
              A((2, 8), acc, init="zeros", out=True), 2, 8, 16], (1,),
             f"test_mma.py test_matmul[{yd}, {xd}, tile_size=(2, 8, 16)] (integer-valued"
             " inputs)")
    for dt in ["u8", "i8"]:
        case(f"matmul_int_{dt}", mm + "matmul_kernel",
             [A((16, 16), dt, init="range:0:32"), A((16, 16), dt, init="range:0:32"),
              A((16, 16), dt, init="zeros", out=True), 16, 16, 16], (1,),
             f"test_mma.py test_matmul_int[{dt}, tile_size=(16, 16, 16)] (wrapping)")
    b, m, n, k = 2, 4, 8, 16
    for ra, rb in [(1, 1), (1, 2), (1, 3), (2, 2), (2, 3)]:
        ash = {1: (k,), 2: (m, k), 3: (b, m, k)}[ra]
        bsh = {1: (k,), 2: (k, n), 3: (b, k, n)}[rb]
        csh = {(1, 1): (1,), (1, 2): (n,), (1, 3): (b, n), (2, 2): (m, n),
               (2, 3): (b, m, n)}[(ra, rb)]
        case(f"matmul_nd_{ra}d_{rb}d", mm + "matmul_nd_kernel",
             [A(ash, "f32", init="range:-4:4"), A(bsh, "f32", init="range:-4:4"),
              A(csh, "f32", init="zeros", out=True), b, m, n, k], (1,),
             f"test_mma.py test_matmul_nd[ranks=({ra}, {rb})]: b=2 m=4 n=8 k=16 f32"
             " (integer-valued inputs)")

    km = "kernels.matmul:"
    for dt, cdt, (M, N, K), (tm, tn, tk) in [
            ("f16", "f16", (100, 72, 40), (32, 32, 16)),
            ("f32", "f32", (64, 48, 33), (32, 16, 16)),
            ("bf16", "f32", (40, 24, 64), (16, 16, 32))]:
        case(f"kmatmul_{dt}_{M}x{N}x{K}", km + "matmul_kernel",
             [A((M, K), dt, init="range:-4:4"), A((K, N), dt, init="range:-4:4"),
              A((M, N), cdt, init="zeros", out=True), tm, tn, tk],
             (cdiv(M, tm) * cdiv(N, tn),),
             f"kernels/matmul.py matmul_kernel (as bench_matmul.py launches it) on ragged"
             f" {M}x{N}x{K}, tiles {tm}x{tn}x{tk}, {dt} in, {cdt} out (f32 inputs go through"
             " tf32; integer-valued inputs keep everything exact)")
    M, N, K, tm, tn, tk = 64, 32, 96, 32, 16, 16
    case("kmatmul_persistent_f16", km + "persistent_matmul_kernel",
         [A((M, K), "f16", init="range:-4:4"), A((K, N), "f16", init="range:-4:4"),
          A((M, N), "f16", init="zeros", out=True), tm, tn, tk], (3,),
         f"kernels/matmul.py persistent_matmul_kernel {M}x{N}x{K}, tiles {tm}x{tn}x{tk}, 3"
         " persistent blocks over 4 output tiles")
    case("kmatmul_batch_f16", km + "batch_matmul_kernel",
         [A((3, 40, 24), "f16", init="range:-4:4"), A((3, 24, 36), "f16", init="range:-4:4"),
          A((3, 40, 36), "f16", init="zeros", out=True), 16, 16, 16], (3, 3, 3),
         "kernels/matmul.py batch_matmul_kernel (as bench_matmul.py launches it): batch 3,"
         " ragged 40x36x24, tiles 16x16x16")
    M, N, K, tm, tn, tk, sk = 48, 32, 64, 16, 16, 16, 2
    nt = cdiv(M, tm) * cdiv(N, tn)
    case("kmatmul_split_k_f16", km + "matmul_split_k_kernel",
         [A((M, K), "f16", init="range:-4:4"), A((K, N), "f16", init="range:-4:4"),
          A((M, N), "f16", init="zeros", out=True), A((nt,), "i32", init="zeros", out=True),
          A((nt,), "i32", init="zeros", out=True), tm, tn, tk, sk], (nt, sk),
         f"kernels/matmul.py matmul_split_k_kernel (as bench_matmul.py launches it): {M}x{N}x{K}"
         f", tiles {tm}x{tn}x{tk}, SPLIT_K={sk}; blocks of one output tile take a spin lock"
         " (atomic_cas on LOCKS) in turn")

    at = "kernels.attention:fmha_kernel"
    for dt, b, qh, kh, ql, kl, causal, pos in [
            ("f16", 1, 8, 8, 15, 63, True, False),
            ("f16", 1, 8, 8, 32, 63, False, False),
            ("f32", 1, 8, 8, 15, 63, False, True),
            ("bf16", 1, 16, 8, 1, 63, True, True),
            ("f16", 1, 16, 8, 32, 32, True, False),
            ("f32", 4, 8, 8, 1, 32, False, True)]:
        d, tm, tn = 32, 8, 16
        pos_v = kl - 1 if pos else 0
        case(f"fmha_{dt}_b{b}_qh{qh}_q{ql}_k{kl}_{'causal' if causal else 'full'}"
             f"{'_pos' if pos else ''}", at,
             [A((b, qh, ql, d), dt, init="finite"), A((b, kh, kl, d), dt, init="finite"),
              A((b, kh, kl, d), dt, init="finite"),
              A((b, qh, ql, d), dt, init="zeros", out=True), 1 / math.sqrt(d), pos_v, d, qh,
              tm, tn, qh // kh, causal, kl % tn == 0], (cdiv(ql, tm), b * qh),
             f"test_attention.py test_flash_attention[{dt}, use_input_pos={pos},"
             f" is_causal={causal}, tile_size=(8, 16), hidden_size=32, k_len={kl}, q_len={ql},"
             f" k_heads={kh}, q_heads={qh}, batch_size={b}] (exp2, approximate division)",
             ulp=16)

    ln = "kernels.layer_norm:"
    for dt, (M, N), tn in [("f32", (48, 300), 128), ("f16", (16, 1000), 256)]:
        case(f"layer_norm_fwd_{dt}_{M}x{N}", ln + "layer_norm_fwd",
             [A((M, N), dt, init="finite"), A((N,), dt, init="finite"),
              A((N,), dt, init="finite"), A((M, N), dt, init="zeros", out=True),
              A((M,), "f32", init="zeros", out=True), A((M,), "f32", init="zeros", out=True),
              1e-5, tn], (M,),
             f"kernels/layer_norm.py layer_norm_fwd (as bench_layer_norm.py launches it) on"
             f" ragged {M}x{N} {dt}, TILE_N={tn}, eps=1e-5 (sums, division, sqrt)", ulp=16)
    M, N, tn, G = 48, 300, 128, 8
    case("layer_norm_bwd_dx_partial_dwdb_f32", ln + "layer_norm_bwd_dx_partial_dwdb",
         [A((M, N), "f32", init="zeros", out=True), A((M, N), "f32", init="finite"),
          A((G, N), "f32", init="zeros", out=True), A((G, N), "f32", init="zeros", out=True),
          A((M, N), "f32", init="finite"), A((N,), "f32", init="finite"),
          A((M,), "f32", init="finite"), A((M,), "f32", init="finite"),
          A((G,), "i32", init="zeros", out=True), tn], (M,),
         f"kernels/layer_norm.py layer_norm_bwd_dx_partial_dwdb (as bench_layer_norm.py"
         f" launches it) on ragged {M}x{N} f32, GROUP_SIZE_M={G}, TILE_N={tn}; blocks of a"
         " group take a spin lock (atomic_cas on Locks) in turn, so DW/DB sums depend on the"
         " block order", ulp=64)
    case("layer_norm_bwd_dwdb_f32", ln + "layer_norm_bwd_dwdb",
         [A((G, N), "f32", init="finite"), A((G, N), "f32", init="finite"),
          A((N,), "f32", init="zeros", out=True), A((N,), "f32", init="zeros", out=True),
          32, tn], (cdiv(N, tn),),
         f"kernels/layer_norm.py layer_norm_bwd_dwdb (as bench_layer_norm.py launches it):"
         f" {G}x{N} partials, TILE_M=32, TILE_N={tn}", ulp=16)

    rn = "kernels.rms_norm:"
    for k, dt, (M, N), ts in [("rms_norm_kernel", "f32", (40, 300), 128),
                              ("rms_norm_kernel", "bf16", (8, 1024), 256),
                              ("rms_norm_kernel_gather", "f16", (40, 300), 128),
                              ("rms_norm_kernel_gather", "f32", (33, 64), 64)]:
        case(f"{k}_{dt}_{M}x{N}", rn + k,
             [A((M, N), dt, init="finite"), A((N,), dt, init="finite"),
              A((M, N), dt, init="zeros", out=True), A((M,), "f32", init="zeros", out=True),
              N, 1e-6, ts], (M,),
             f"kernels/rms_norm.py {k} (as bench_rms_norm.py launches it) on {M}x{N} {dt},"
             f" TILE_SIZE={ts}, eps=1e-6 (rsqrt)", ulp=16)
    case("rms_norm_kernel_static_persistent_f16_100x256", rn + "rms_norm_kernel_static_persistent",
         [A((100, 256), "f16", init="finite"), A((100, 256), "f16", init="zeros", out=True),
          A((256,), "f16", init="finite"), 16, 64, 256, 1e-6], (4,),
         "kernels/rms_norm.py rms_norm_kernel_static_persistent (as bench_rms_norm.py launches"
         " it) on ragged 100x256 f16, tiles 16x64, 4 persistent blocks over 7 row tiles",
         ulp=16)


def define_cases_gather_scatter():
    gs = "test_gather_scatter:"
    for n, tile, xd, yd in [(225, 128, "f32", "f32"), (260, 256, "f16", "f32"),
                            (128, 128, "i8", "i32"), (260, 128, "i1", "i1"),
                            (225, 256, "bf16", "bf16"), (260, 128, "i64", "i64")]:
        case(f"gs_array_copy_1d_{xd}_{yd}_{n}_t{tile}", gs + "array_copy_1d",
             [A((n,), xd), A((n,), yd, init="zeros", out=True), tile], (cdiv(n, tile),),
             f"test_gather_scatter.py test_array_copy_1d[{yd}, {xd}, tile={tile},"
             f" shape=({n},)]")
    for (m, n), (tx, ty), xd, yd in [((192, 192), (64, 64), "f32", "f32"),
                                     ((128, 192), (128, 32), "f16", "f16"),
                                     ((192, 192), (128, 32), "i16", "i32")]:
        case(f"gs_array_copy_2d_{xd}_{yd}_{m}x{n}_t{tx}x{ty}", gs + "array_copy_2d",
             [A((m, n), xd), A((m, n), yd, init="zeros", out=True), tx, ty],
             (cdiv(m, tx), cdiv(n, ty)),
             f"test_gather_scatter.py test_array_copy_2d[{yd}, {xd}, tile=({tx}, {ty}),"
             f" shape=({m}, {n})]")
    case("gs_scalar_copy", gs + "scalar_copy", [A((1,), "f32"), A((1,), "f32", init="zeros",
                                                                  out=True)], (1,),
         "test_gather_scatter.py test_scalar_copy")
    for pv, tag in [(7, "7"), (7.0, "7f"), (math.inf, "inf"), (-math.inf, "minf")]:
        case(f"gs_custom_padding_constant_{tag}", gs + "custom_padding_constant",
             [A((6,), "f32"), A((8,), "f32", init="zeros", out=True), pv], (1,),
             f"test_gather_scatter.py test_custom_padding_constant[{pv}]: 6 elements gathered"
             " as 8")
    for k in ["literal_negative_infinity_padding", "custom_padding_1d"]:
        case(f"gs_{k}", gs + k, [A((6,), "f32"), A((8,), "f32", init="zeros", out=True)], (1,),
             f"test_gather_scatter.py test_{k}: 6 elements gathered as 8")
    case("gs_custom_padding_1d_broadcasted_to_2d", gs + "custom_padding_1d_broadcasted_to_2d",
         [A((5,), "f32"), A((8,), "f32", init="zeros", out=True)], (1,),
         "test_gather_scatter.py test_custom_padding_1d_broadcasted_to_2d: 5 elements")
    case("gs_scatter_bounds_checking", gs + "copy_8",
         [A((8,), "f32"), A((5,), "f32", out=True, buflen=8)], (1,),
         "test_gather_scatter.py test_scatter_bounds_checking: y is a 5-element view of an"
         " 8-element buffer; the last 3 elements must survive")
    case("gs_copy_8_unchecked", gs + "copy_8_unchecked",
         [A((8,), "f32"), A((8,), "f32", init="zeros", out=True)], (1,),
         "test_gather_scatter.py test_unchecked")
    case("gs_gather_with_custom_mask_1d", gs + "gather_with_custom_mask_1d",
         [A((8,), "f32"), A((8,), "f32", init="zeros", out=True), A((8,), "i1")], (1,),
         "test_gather_scatter.py test_gather_with_custom_mask_1d")
    case("gs_gather_with_mask_and_bounds_check", gs + "gather_with_mask_and_bounds_check",
         [A((10,), "f32"), A((8,), "f32", init="zeros", out=True),
          A((8,), "i32", init="range:0:24"), A((8,), "i1")], (1,),
         "test_gather_scatter.py test_gather_with_mask_and_bounds_check: indices drawn from"
         " [0, 24) into 10 elements (bounds-checked, so out-of-range ones are padded)")
    case("gs_scatter_with_custom_mask", gs + "scatter_with_custom_mask",
         [A((8,), "f32"), A((8,), "f32", out=True), A((8,), "i1")], (1,),
         "test_gather_scatter.py test_scatter_with_custom_mask")
    case("gs_gather_2d_with_broadcast_mask", gs + "gather_2d_with_broadcast_mask",
         [A((4, 4), "f32"), A((16,), "f32", init="zeros", out=True), A((4, 1), "i1")], (1,),
         "test_gather_scatter.py test_gather_2d_with_broadcast_mask")
    for mv in [True, False]:
        case(f"gs_gather_with_scalar_mask_{str(mv).lower()}", gs + "gather_with_scalar_mask",
             [A((8,), "f32"), A((8,), "f32", init="zeros", out=True), mv], (1,),
             f"test_gather_scatter.py test_gather_with_scalar_mask[{mv}]")

    va = "kernels.vec_add:"
    for k, shape, tiles in [("vec_add_kernel_1d", (1000,), (1024,)),
                            ("vec_add_kernel_1d_gather", (3000,), (1024,)),
                            ("vec_add_kernel_2d", (100, 20), (32, 32)),
                            ("vec_add_kernel_2d_gather", (70, 300), (2, 512))]:
        grid = tuple(cdiv(d, t) for d, t in zip(shape, tiles))
        case(f"{k}_{'x'.join(map(str, shape))}", va + k,
             [A(shape, "f32"), A(shape, "f32"), A(shape, "f32", init="zeros", out=True),
              *tiles], grid,
             f"kernels/vec_add.py {k} as vec_add() launches it (tile sizes from the shape) on"
             f" ragged {shape} f32")


def define_cases_elementwise():
    un = "test_unary_elementwise:"
    # Shape 512 and tile 64, as the tests' fixtures give.
    approx = {"exp": 2, "exp2": 2, "log": 2, "log2": 2, "sin": 2, "cos": 2, "tan": 4,
              "sinh": 4, "cosh": 4, "tanh": 4, "rsqrt": 2, "sqrt": 1}
    for op, xd, yd, init, test in [
            ("sqrt", "f32", "f32", "random", "test_array_root_ops"),
            ("sqrt", "i32", "f32", "range:0:100", "test_array_root_ops"),
            ("rsqrt", "f16", "f16", "random", "test_array_root_ops"),
            ("log", "f32", "f32", "random", "test_array_log"),
            ("log2", "bf16", "bf16", "random", "test_array_log"),
            ("exp", "f32", "f32", "random", "test_array_exp"),
            ("exp2", "f16", "f16", "random", "test_array_exp"),
            ("sin", "f32", "f32", "finite", "test_array_trig"),
            ("cos", "f16", "f16", "finite", "test_array_trig"),
            ("tan", "f32", "f32", "finite", "test_array_trig"),
            ("sinh", "f32", "f32", "finite", "test_array_trig"),
            ("cosh", "bf16", "bf16", "finite", "test_array_trig"),
            ("tanh", "f32", "f32", "random", "test_array_trig"),
            ("tanh", "i16", "f32", "random", "test_array_trig"),
            ("floor", "f32", "f32", "random", "test_array_rounding"),
            ("ceil", "f16", "f16", "random", "test_array_rounding")]:
        case(f"unary_{op}_{xd}", un + f"array_kernel('{op}', 'ty = ct.{op}(tx)', TMP)",
             [A((512,), xd, init=init), A((512,), yd, init="zeros", out=True), 64], (8,),
             f"test_unary_elementwise.py {test}[{op}, {xd}]: shape (512,), tile 64",
             ulp=approx.get(op, 0))
    for body, tag, xd, yd in [("ty = -tx", "neg", "f32", "f32"),
                              ("ty = ct.negative(tx)", "negative", "i8", "i8"),
                              ("ty = -tx", "neg", "i1", "i32"),
                              ("ty = +tx", "pos", "bf16", "bf16"),
                              ("ty = abs(tx)", "abs", "i64", "i64"),
                              ("ty = ct.abs(tx)", "ct_abs", "f16", "f16"),
                              ("ty = ~tx", "bitwise_not", "i32", "i32"),
                              ("ty = ct.bitwise_not(tx)", "ct_bitwise_not", "i1", "i1")]:
        case(f"unary_{tag}_{xd}", un + f"array_kernel('{tag}', '{body}', TMP)",
             [A((512,), xd), A((512,), yd, init="zeros", out=True), 64], (8,),
             f"test_unary_elementwise.py ({body}) on {xd}: shape (512,), tile 64")
    case("unary_scalar_neg_f32", un + "scalar_kernel('neg', 'c = -x', TMP)",
         [1.5, A((512,), "f32", init="zeros", out=True), 64], (8,),
         "test_unary_elementwise.py test_scalar_neg[f32, is_constant=False]: x is a runtime"
         " scalar")

    bi = "test_binary_elementwise:"
    for expr, tag, xd, yd, zd in [
            ("tz = tx + ty", "add", "f32", "f32", "f32"),
            ("tz = tx - ty", "sub", "i8", "i32", "i32"),
            ("tz = tx * ty", "mul", "f16", "f32", "f32"),
            ("tz = ct.add(tx, ty)", "ct_add", "bf16", "bf16", "bf16"),
            ("tz = ct.mul(tx, ty)", "ct_mul", "i64", "i16", "i64"),
            ("tz = ct.sub(tx, ty)", "ct_sub", "i32", "f16", "f16")]:
        case(f"binary_{tag}_{xd}_{yd}", bi + f"array_kernel('core_arithmetic', '{expr}', TMP)",
             [A((512,), xd), A((512,), yd), A((512,), zd, init="zeros", out=True), 64], (8,),
             f"test_binary_elementwise.py test_array_core_arithmetic[{expr}, {yd}, {xd}]:"
             " shape (512,), tile 64")
    for sym, fn in [(">", "ct.greater"), ("<=", "ct.less_equal"), ("==", "ct.equal"),
                    ("!=", "ct.not_equal")]:
        for dt in ["f32", "i16", "bf16"]:
            if sym in ("<=", "!=") and dt == "bf16":
                continue
            body = f"tz = tx {sym} ty" if dt != "i16" else f"tz = {fn}(tx, ty)"
            tag = {">": "gt", "<=": "le", "==": "eq", "!=": "ne"}[sym]
            case(f"binary_cmp_{tag}_{dt}", bi + f"array_kernel('cmp', '{body}', TMP)",
                 [A((512,), dt), A((512,), dt), A((512,), "i1", init="zeros", out=True), 64],
                 (8,), f"test_binary_elementwise.py test_array_compare[{dt}, {body}]: shape"
                 " (512,), tile 64")
    for fn in ["ct.maximum", "ct.minimum"]:
        for pn in [False, True]:
            for dt in ["f32", "f16"]:
                case(f"binary_{fn[3:]}_nan_{'propagate' if pn else 'ignore'}_{dt}",
                     bi + f"array_kernel('maxmin_nan', 'tz = {fn}(tx, ty,"
                     f" propagate_nan={pn})', TMP)",
                     [A((512,), dt), A((512,), dt), A((512,), dt, init="zeros", out=True), 64],
                     (8,), f"test_binary_elementwise.py test_array_maxmin_nan[{dt}, {fn},"
                     f" propagate_nan={pn}]: shape (512,), tile 64")
    for body, tag, dt in [("tz = max(tx, ty)", "max", "i32"), ("tz = min(tx, ty)", "min", "f32")]:
        case(f"binary_{tag}_{dt}", bi + f"array_kernel('{tag}', '{body}', TMP)",
             [A((512,), dt), A((512,), dt), A((512,), dt, init="zeros", out=True), 64], (8,),
             f"test_binary_elementwise.py test_array_{tag}[{dt}, {body}]")
    for xd, yd, zd, fn in [("i32", "i32", "i32", "%"), ("f32", "f32", "f32", "%"),
                           ("i8", "i64", "i64", "ct.mod"), ("f16", "f32", "f32", "ct.mod")]:
        body = f"tz = tx {fn} ty" if fn == "%" else f"tz = {fn}(tx, ty)"
        case(f"binary_mod_{xd}_{yd}{'_ct' if fn != '%' else ''}",
             bi + f"array_kernel('mod', '{body}', TMP)",
             [A((512,), xd, init="range:0:100"), A((512,), yd, init="range:1:101"),
              A((512,), zd, init="zeros", out=True), 64], (8,),
             f"test_binary_elementwise.py test_array_mod[{yd}, {xd}, {fn}]: x in [0, 100),"
             " y in [1, 101)")
    for op, tag, zd in [("ct.cdiv", "cdiv", "i32"), ("/", "truediv", "f32"),
                        ("//", "floordiv", "i32"), ("ct.floordiv", "ct_floordiv", "i64")]:
        xd = "i64" if zd == "i64" else "i16"
        body = f"tz = {op}(tx, y)" if op.startswith("ct.") else f"tz = tx {op} y"
        case(f"binary_array_scalar_{tag}_{xd}", bi + f"array_scalar_kernel('div', '{body}', TMP)",
             [A((512,), xd, init="range:0:100"), 23, A((512,), zd, init="zeros", out=True), 64],
             (8,), f"test_binary_elementwise.py test_array_scalar_div[{op}, {xd}]: y=23",
             ulp=1 if tag == "truediv" else 0)
    for op, tag in [("/", "truediv"), ("//", "floordiv")]:
        case(f"binary_array_scalar_{tag}_f32", bi + f"array_scalar_kernel('div', 'tz = tx {op} y', TMP)",
             [A((512,), "f32"), 23.0, A((512,), "f32", init="zeros", out=True), 64], (8,),
             f"test_binary_elementwise.py test_array_scalar_div_float[{op}, f32]: y=23.0",
             ulp=1 if tag == "truediv" else 0)
    case("binary_array_scalar_add_f16", bi + "array_scalar_kernel('add', 'tz = tx + y', TMP)",
         [A((512,), "f16"), 5.0, A((512,), "f32", init="zeros", out=True), 64], (8,),
         "test_binary_elementwise.py test_array_scalar_add[f16]: y=5.0, z f32")
    case("binary_divmod_i32_i16", bi + "launched(test_divmod, (512,), 64, None, None, divmod)",
         [A((512,), "i32", init="range:0:100"), A((512,), "i16", init="range:1:101"),
          A((512,), "i32", init="zeros", out=True), A((512,), "i32", init="zeros", out=True)],
         (8,), "test_binary_elementwise.py test_divmod[i16, i32, divmod]: x in [0, 100), y in"
         " [1, 101)")
    for fn in ["explicit_broadcast_add", "implicit_broadcast_add"]:
        case(f"binary_{fn}_f32", bi + fn,
             [A((128,), "f32"), A((128,), "f32"), A((128, 128), "f32", init="zeros", out=True),
              64], (2, 2),
             f"test_binary_elementwise.py test_broadcast[{fn}, f32] with shape (128,) instead"
             " of (512,) to keep z at 16K elements; tile 64")


def noncontig(shape):
    """Strides of torch's make_tensor(..., noncontiguous=True): the last dimension steps by
    2 through a buffer twice as long."""
    strides, acc = [], 2
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def define_cases_memory():
    ls = "test_load_store:"
    case("ls_load_store_with_hints_f16", ls + "load_store_with_hints_kernel",
         [A((32,), "f16"), A((32,), "f16", init="zeros", out=True)], (2,),
         "test_load_store.py test_load_store_with_hints: 32 f16, TILE_SIZE=16")
    for lat, tma in [(5, False), (None, None)]:
        case(f"ls_matmul_latency_{lat}_tma_{tma}".lower(),
             ls + f"ct.kernel(make_ct_matmul_kernel({lat}, {tma}))",
             [A((32, 128), "f32", init="range:-4:4"), A((128, 32), "f32", init="range:-4:4"),
              A((32, 32), "f32", init="zeros", out=True), 32, 16, 64], (1, 2),
             f"test_load_store.py TestArrayAssumption.test_load_store[allow_tma={tma},"
             f" latency={lat}]: m=32 n=32 k=128, tiles 32x16x64 (integer-valued inputs)")
    case("ls_gather_scatter_latency_5", ls + "ct.kernel(make_array_copy_2d_kernel(5))",
         [A((256, 200), "f32"), A((256, 200), "f32", init="zeros", out=True), 128, 128], (2, 2),
         "test_load_store.py TestArrayAssumption.test_gather_scatter[latency=5] on a ragged"
         " 256x200 array instead of 1024x1024; tile 128x128")
    for n, tile, xd, yd in [(225, 64, "f16", "f32"), (225, 128, "i8", "f32"),
                            (128, 64, "i1", "i32"), (225, 64, "bf16", "bf16")]:
        case(f"ls_array_copy_{xd}_{yd}_{n}_t{tile}", ls + "array_copy_1d",
             [A((n,), xd), A((n,), yd, init="zeros", out=True), tile], (cdiv(n, tile),),
             f"test_load_store.py test_array_copy_dtype_implicit_cast[{yd}, {xd}, tile={tile},"
             f" shape=({n},)]")
    for k in ["load_store_0d_shape", "load_store_scalar", "load_store_0d_tile_index"]:
        case(f"ls_{k}", ls + k, [A((5,), "f16"), A((5,), "f16", init="zeros", out=True)], (1,),
             f"test_load_store.py test_load_store_scalar_or_0d[{k}]: 5 f16")
    case("ls_copy_2d_no_check_bounds", ls + "copy_2d_no_check_bounds",
         [A((64, 64), "f32"), A((64, 64), "f32", init="zeros", out=True), 32, 32], (2, 2),
         "test_load_store.py test_load_store_check_bounds: 64x64, tile 32x32")

    cs = "test_cast:"
    for um in [True, False]:
        case(f"cast_astype_i32_to_f32_{'method' if um else 'function'}",
             cs + "array_astype_to_float32",
             [A((512,), "i32"), A((512,), "f32", init="zeros", out=True), 64, um], (8,),
             f"test_cast.py test_astype[use_method={um}]: shape (512,), tile 64")
    for rm in ["None", "ct.RoundingMode.RZ", "ct.RoundingMode.RM", "ct.RoundingMode.RP"]:
        tag = rm.split(".")[-1].lower()
        case(f"cast_astype_f64_to_f32_{tag}", cs + f"make_astype_to_f32_kernel({rm})",
             [A((2,), "f64"), A((2,), "f32", init="zeros", out=True), 2, True], (1,),
             f"test_cast.py test_astype_rounding_mode_f64_f32[{rm}, use_method=True]")
    for dt in ["f16", "f32", "bf16", "f64"]:
        case(f"cast_tf32_{dt}", cs + "kernel_astype_tf32",
             [A((1024,), dt), A((1024,), dt, init="zeros", out=True), 32], (32,),
             f"test_cast.py test_cast_tf32[{dt}]: 32x32 viewed as 1024, tile 32")
    for xd, yd in [("f32", "i32"), ("i64", "f64"), ("f16", "i16"), ("u8", "i8")]:
        case(f"cast_bitcast_{xd}_{yd}", cs + "array_bitcast",
             [A((512,), xd), A((512,), yd, init="zeros", out=True), 64], (8,),
             f"test_cast.py test_array_bitcast[{xd}, {yd}]: shape (512,), tile 64")
    case("cast_astype_bool_to_float", cs + "array_astype_bool_to_float",
         [A((1,), "f32", init="zeros", out=True)], (1,), "test_cast.py test_astype_bool_to_float")
    case("cast_scalar_astype", cs + "scalar_astype", [5, A((1,), "f32", init="zeros", out=True)],
         (1,), "test_cast.py test_astype_scalar: scalar 5 (i32) to f32")

    rs = "test_reshape:"
    case("reshape_expanded_copy_f16", rs + "expanded_copy",
         [A((128,), "f16"), A((128, 1), "f16", init="zeros", out=True), 128], (1,),
         "test_reshape.py test_expand_dims[f16, tile=128, shape=(128,)]")
    for um in [True, False]:
        case(f"reshape_copy_f32_{'method' if um else 'function'}", rs + "reshape_copy",
             [A((128 * 128,), "f32"), A((128, 128), "f32", init="zeros", out=True), 128, 128,
              um], (1,), f"test_reshape.py test_reshape_copy[use_method={um}, f32, c_tile=128,"
             " r_tile=128]")
    case("reshape_implicit_dim_bf16", rs + "reshape_implicit_dim",
         [A((128 * 128,), "bf16"), A((128, 128), "bf16", init="zeros", out=True), 128, 128],
         (1,), "test_reshape.py test_reshape_implicit_dim[bf16, 128, 128]")
    for ex, ix, ysh in [("tx[:, None, :]", "(bid0, 0, bid1)", (128, 1, 128)),
                        ("tx[None, ..., None]", "(0, bid0, bid1, 0)", (1, 128, 128, 1)),
                        ("tx[:, :, np.newaxis]", "(bid0, bid1, 0)", (128, 128, 1))]:
        tag = "x".join(map(str, ysh))
        case(f"reshape_new_axis_{tag}",
             rs + f"jit_kernel('new_axis_indexing', new_axis_indexing_kernel_template.format("
             f"name='new_axis_indexing', expand_expr='{ex}', index_expr='{ix}'), TMP,"
             " {'np': np})",
             [A((128, 128), "f32"), A(ysh, "f32", init="zeros", out=True), 128, 128], (1, 1),
             f"test_reshape.py test_new_axis_indexing[{ex}, {ix}]: 128x128, tile 128x128")

    ca = "test_cat:"
    for ax in [0, 1, -1]:
        case(f"cat2_axis{ax}".replace("-", "m"), ca + "cat2",
             [A((8,), "i32", init="zeros", out=True), ax], (1,), f"test_cat.py test_cat[{ax}]")
    case("cat1", ca + "cat1", [A((4,), "i32", init="zeros", out=True)], (1,),
         "test_cat.py test_cat_with_one_tile")

    ex = "test_extract:"
    for dt, um in [("f32", True), ("f16", False)]:
        case(f"extract_1d_{dt}_{'method' if um else 'function'}", ex + "extract_1d",
             [A((128,), dt), A((128,), dt, init="zeros", out=True), 128, um], (1,),
             f"test_extract.py test_extract_1d[use_method={um}, {dt}, tile=128, shape=(128,)]")
    case("extract_2d_bf16", ex + "extract_2d",
         [A((128, 128), "bf16"), A((128, 128), "bf16", init="zeros", out=True), 128, 128],
         (1,), "test_extract.py test_extract_2d[bf16, tile=(128, 128), shape=(128, 128)]")

    ins = "test_insert:"
    for idx, dt, um in [(0, "f32", True), (3, "f16", False)]:
        case(f"insert_1d_{dt}_idx{idx}", ins + "insert_1d",
             [A((128,), dt), A((128,), dt, init="zeros", out=True), 128, 32, idx, um], (1,),
             f"test_insert.py test_insert_1d[use_method={um}, {dt}, idx={idx}, sub=32,"
             " tile=128, shape=(128,)]")
    case("insert_2d_f32", ins + "insert_2d",
         [A((128, 128), "f32"), A((128, 128), "f32", init="zeros", out=True), 128, 128, 64,
          32, 1, 2], (1,), "test_insert.py test_insert_2d[f32]: tile 128x128, sub 64x32 at"
         " (1, 2)")
    case("insert_0d_bf16", ins + "insert_0d",
         [A((128,), "bf16"), A((128,), "bf16", init="zeros", out=True), 128, 7], (1,),
         "test_insert.py test_insert_0d[bf16]: tile 128, idx 7")
    case("insert_dynamic_index_f32", ins + "insert_dynamic_index",
         [A((128,), "f32"), A((1,), "i32", init="range:0:4"),
          A((128,), "f32", init="zeros", out=True), 128, 32], (1,),
         "test_insert.py test_insert_dynamic_index[f32]: tile 128, sub 32, index drawn from"
         " [0, 4)")

    sl = "test_array_slice:"
    for n, (a, b), dt in [(16, (2, 7), "f32"), (64, (4, 4), "i16"), (64, (4, 5), "u8")]:
        case(f"slice_copy_1d_{dt}_{n}_{a}_{b}", sl + "slice_copy_1d",
             [A((n,), dt), A((n,), dt, init="zeros", out=True), a, b, 8], (1,),
             f"test_array_slice.py test_slice_1d[({a}, {b}), {dt}, shape=({n},)]: TILE 8")
    case("slice_copy_static_extent_i64", sl + "slice_copy_static_extent",
         [A((32,), "i64"), A((32,), "i64", init="zeros", out=True)], (1,),
         "test_array_slice.py test_slice_constant_bounds_static_extent[i64]")
    for shape, dt, nc in [((12, 16), "f32", False), ((64, 128), "f16", True),
                          ((12, 16), "i8", True)]:
        st = noncontig(shape) if nc else None
        case(f"slice_copy_2d_{dt}_{shape[0]}x{shape[1]}{'_noncontig' if nc else ''}",
             sl + "slice_copy_2d",
             [A(shape, dt, strides=st), A(shape, dt, init="zeros", out=True), 4, 15, 4, 8], (1,),
             f"test_array_slice.py test_slice_2d[noncontiguous={nc}, {dt}, shape={shape}]:"
             " start 4, stop 15, tiles 4x8" + (" (x has strides (2N, 2))" if nc else ""))
    for shape, dt, nc in [((8, 16, 32), "f32", True), ((16, 32, 64), "i32", False)]:
        st = noncontig(shape) if nc else None
        case(f"slice_copy_3d_{dt}_{'x'.join(map(str, shape))}{'_noncontig' if nc else ''}",
             sl + "slice_copy_3d",
             [A(shape, dt, strides=st), A(shape, dt, init="zeros", out=True), 4, 14, 4, 4, 8],
             (1,), f"test_array_slice.py test_slice_3d[noncontiguous={nc}, {dt},"
             f" shape={shape}]: start 4, stop 14, tiles 4x4x8")
    for dt, nc in [("f32", False), ("bf16", True)]:
        st = noncontig((12, 16)) if nc else None
        case(f"slice_ragged_copy_2d_{dt}{'_noncontig' if nc else ''}", sl + "ragged_copy_2d",
             [A((12, 16), dt, strides=st), A((12, 16), dt, init="zeros", out=True),
              A((4,), "i32", init="iota"), 4, 8], (3, 2),
             f"test_array_slice.py test_ragged_copy_2d[noncontiguous={nc}, {dt}]: M=12 N=16,"
             " tiles 4x8, 3 segments; indptr here is iota [0, 1, 2, 3] (segments of one row)"
             " instead of the test's [0, 4, 7, 12]")
    for dt, nc in [("i32", False), ("f16", True)]:
        case(f"slice_chained_copy_{dt}{'_noncontig' if nc else ''}", sl + "chained_slice_copy",
             [A((20,), dt, strides=(2,) if nc else None), A((20,), dt, init="zeros", out=True),
              8], (1,), f"test_array_slice.py test_chained_slice[noncontiguous={nc}, {dt}]")

    rm = "test_raw_array_memory:"
    for n, tile, dt in [(256, 64, "f32"), (128, 128, "i8")]:
        case(f"raw_copy_1d_{dt}_{n}_t{tile}", rm + "copy_via_raw_array_memory_1d",
             [A((n,), dt), A((n,), dt, init="zeros", out=True), tile], (cdiv(n, tile),),
             f"test_raw_array_memory.py test_copy_via_raw_array_memory_1d[{dt}, tile={tile},"
             f" shape=({n},)]")
    case("raw_scalar_load_store", rm + "scalar_load_store_via_raw_array_memory",
         [A((1,), "f32"), A((1,), "f32", init="zeros", out=True)], (1,),
         "test_raw_array_memory.py test_scalar_load_store_via_get_raw_memory")
    case("raw_load_offset_with_padding_value", rm + "load_offset_with_padding_value",
         [A((8,), "f32"), A((8,), "f32", init="zeros", out=True), -1.5], (1,),
         "test_raw_array_memory.py test_load_offset_with_padding_value")
    case("raw_load_store_offset_with_latency", rm + "load_store_offset_with_latency",
         [A((64,), "f32"), A((64,), "f32", init="zeros", out=True), 64], (1,),
         "test_raw_array_memory.py test_load_store_offset_with_latency")
    case("raw_sparse_2d_copy_gather_scatter", rm + "sparse_2d_copy_gather_scatter",
         [A((8, 8), "f32"), A((8, 8), "f32", init="zeros", out=True),
          A((8,), "i64", init="range:0:8"), A((8,), "i64", init="range:0:8"), 8], (1,),
         "test_raw_array_memory.py test_2d_sparse_load_offset_vs_gather_scatter (gather"
         " half): 8x8, 8 (row, col) pairs drawn from [0, 8)")
    case("raw_sparse_2d_copy_load_offset", rm + "sparse_2d_copy_load_offset",
         [A((8, 8), "f32"), A((8, 8), "f32", init="zeros", out=True),
          A((8,), "i64", init="range:0:64"), 8], (1,),
         "test_raw_array_memory.py test_2d_sparse_load_offset_vs_gather_scatter (offset"
         " half): 8x8, 8 offsets drawn from [0, 64)")
    case("raw_interleave_load_store_gather_scatter_offset",
         rm + "interleave_load_store_gather_scatter_offset", [A((16,), "f32", out=True)], (1,),
         "test_raw_array_memory.py test_interleave_load_store_gather_scatter_offset_ordering:"
         " 16 f32 (ordering of tile, gather/scatter and offset accesses to one array)")


def define_cases_misc():
    ta = "test_tuple_arguments:"
    case("tuple_scalar_arg", ta + "kernel_scalar_tuple",
         [A((8,), "i32"), A((8,), "i32", init="zeros", out=True), T(3, 7)], (1,),
         "test_tuple_arguments.py test_tuple_scalar_arg: addends (3, 7)")
    case("tuple_array_arg", ta + "kernel_array_tuple",
         [T(A((4, 4), "f32"), A((4, 4), "f32")), A((4, 4), "f32", init="zeros", out=True)], (1,),
         "test_tuple_arguments.py test_tuple_array_arg: a pair of 4x4 f32")
    case("tuple_mixed_arg", ta + "kernel_mixed_tuple",
         [T(A((8,), "i32"), 5), A((8,), "i32", init="zeros", out=True)], (1,),
         "test_tuple_arguments.py test_tuple_mixed_arg: (array, 5)")
    for ann, tag in [("tuple[ct.IndexedWithInt64, ct.IndexedWithInt64]", "both_i64"),
                     ("tuple[ct.IndexedWithInt64, ct.Array]", "first_i64")]:
        case(f"tuple_i64_index_{tag}", ta + f"make_i64_index_tuple_kernel({ann})",
             [T(A((16,), "f32"), A((16,), "f32")), A((16,), "f32", init="zeros", out=True)], (1,),
             f"test_tuple_arguments.py test_tuple_i64_index_arg[{tag}]: arrays indexed with"
             " int64 (their shape and stride parameters are i64)")
    for ann, vals, tag in [("tuple[ct.ScalarInt64, int]", (2**33 + 7, 5), "i64_first"),
                           ("tuple[int, ct.ScalarInt64]", (5, 2**33 + 7), "i32_first")]:
        case(f"tuple_mixed_scalar_{tag}", ta + f"make_mixed_scalar_kernel({ann})",
             [A((8,), "i64"), T(*vals), A((8,), "i64", init="zeros", out=True)], (1,),
             f"test_tuple_arguments.py test_mixed_scalar_tuple_arg[{tag}]: scalars {vals}")
    case("tuple_constant_arg", ta + "kernel_constant_tuple",
         [A((8,), "f32"), A((8,), "f32", init="zeros", out=True), (8,)], (1,),
         "test_tuple_arguments.py test_constant_tuple_arg: N=8")

    for v in [2**31, 2**63 - 1]:
        case(f"int64_kernel_arg_{v}", "test_int64_kernel_args:kernel_with_large_int",
             [A((1,), "f32", init="zeros", out=True), v], (1,),
             f"test_int64_kernel_args.py test_int64_kernel_arg_with_annotation[{v}]")

    lp = "test_loop_split:"
    case("loop_split_ge", lp + "split_ge_kernel", [A((10,), "i32", init="zeros", out=True)], (1,),
         "test_loop_split.py test_split_ge: 10 i32")
    case("loop_carried_condition", lp + "loop_carried_condition_kernel",
         [A((1,), "i32", init="zeros", out=True), 1], (1,),
         "test_loop_split.py test_loop_carried_condition: stop=1")
    for sp in [3, 0, 9]:
        case(f"loop_dynamic_split_boundary_{sp}", lp + "dynamic_split_boundary_kernel",
             [A((7,), "i32", init="zeros", out=True), sp], (1,),
             f"test_loop_split.py test_dynamic_split_boundary: 7 i32, split={sp} (the test"
             " uses 3)")

    fm = "test_fma:"
    for k in ["mul_add_kernel_local_var", "mul_add_kernel", "mul_sub_kernel", "add_mul_kernel",
              "sub_mul_kernel"]:
        case(f"fma_{k}", fm + f"ct.kernel({k})",
             [A((128, 32), "f32"), A((128, 32), "f32"), A((128, 32), "f32"),
              A((128, 32), "f32", out=True), 32, 32], (4,),
             f"test_fma.py test_fma[{k}]: 128x32 f32, TILE 32 (fused multiply-add)")
    case("fma_mul_add_same_operand", fm + "mul_add_same_operand_kernel",
         [A((128, 32), "f32"), A((128, 32), "f32", out=True), 32, 32], (4,),
         "test_fma.py test_fma_skip_when_new_op_uses_deleted_var: 128x32 f32, TILE 32")

    rg = "test_range:"
    case("range_stop", rg + "copy_range", [10, A((10,), "i32", init="zeros", out=True)], (1,),
         "test_range.py test_range_stop")
    case("range_start_stop", rg + "copy_range_2", [1, 11, A((10,), "i32", init="zeros",
                                                             out=True)], (1,),
         "test_range.py test_range_start_stop: 1..11")
    case("range_start_stop_step", rg + "copy_range_3",
         [1, 11, 2, A((5,), "i32", init="zeros", out=True)], (1,),
         "test_range.py test_range_start_stop_positive_step: 1..11 step 2")


def define_cases_misc2():
    hf = "test_helper_function:"
    xy = [A((512, 128), "f32"), A((512, 1), "f32"), A((512, 128), "f32", init="zeros", out=True)]
    for k, extra, test in [
            ("ct.kernel(main_kernel_calling_helper)", [], "test_helper_function_multiple_calls"),
            ("main_kernel_multiple_returns", [], "test_helper_function_multiple_returns"),
            ("main_kernel_keyword_args", [False], "test_helper_function_keyword_args"
                                                  "[main_kernel_keyword_args]"),
            ("main_kernel_keyword_args_default", [], "test_helper_function_keyword_args"
                                                     "[main_kernel_keyword_args_default]"),
            ("main_kernel_array_arguments_in_helper", [],
             "test_helper_function_array_arguments")]:
        name = k.replace("ct.kernel(", "").replace(")", "")
        case(f"helper_{name}", hf + k, [*xy, 16, 128, *extra], (32,),
             f"test_helper_function.py {test}: x 512x128, y 512x1 f32, tile 16")
    for er in [True, False]:
        case(f"helper_function_early_return_{str(er).lower()}",
             hf + "helper_function_early_return_kernel", [*xy, 16, 128, er], (32,),
             f"test_helper_function.py test_helper_function_early_return[{er}]")
    case("helper_recursive_calls", hf + "main_kernel_recursive_calls",
         [A((), "f32"), A((), "f32", init="zeros", out=True), 109], (1,),
         "test_helper_function.py test_accept_reasonable_recursion: 0-d f32, N=109 (109"
         " inlined recursive calls)")

    cm = "test_code_motion:"
    for k in ["simple_yes", "indvar_no", "sideeff_no", "ifelse_yes", "ifelse_indvar_no",
              "ifelse_sideeff_no", "nested_loops_yes_yes_yes", "nested_loops_no_yes_yes",
              "entire_loop_yes", "ifelse_cond_indvar_no", "ifelse_carry_no",
              "carried_from_nested_loop_no"]:
        case(f"code_motion_{k}", cm + k,
             [A((3,), "f32", init="zeros", out=True), A((3,), "i32", out=True), 4.0], (1,),
             f"test_code_motion.py test_hoisting[{k}]: x of 3 f32, a of 3 i32, t=4.0 (sqrt)",
             ulp=1)

    tb = "test_torch_backward:"
    case("relu_forward", tb + "relu_forward",
         [A((5,), "f32"), A((5,), "f32", init="zeros", out=True), 16], (1,),
         "test_torch_backward.py test_backward_relu (forward): 5 f32, TILE 16 (ragged)")
    case("relu_backward", tb + "relu_backward",
         [A((5,), "f32"), A((5,), "f32", out=True), 16], (1,),
         "test_torch_backward.py test_backward_relu (backward): 5 f32, TILE 16 (ragged)")

    to = "test_token_order:"
    for k in ["store_buffer", "store_buffer_alternative", "serialized_for_loop",
              "serialized_while_loop"]:
        case(f"token_order_{k}", to + f"ct.kernel(TestMemoryBehavior.{k})",
             [A((1024,), "i32", init="zeros", out=True), 1024], (1,),
             f"test_token_order.py TestMemoryBehavior.test_memory_behavior[{k}]: 1024 i32")
    case("token_order_spinning_lock", to + "TestMemoryBehavior.spinning_lock",
         [A((), "f32", init="range:0:8", out=True), A((), "i32", init="zeros", out=True)], (64,),
         "test_token_order.py TestMemoryBehavior.test_spinning_lock with 64 blocks instead of"
         " 1024 (each takes a spin lock by atomic_cas and increments a 0-d f32)")


def view(shape, strides, buflen, elem, **kw):
    """A strided view (slice/permute of a torch tensor) of a buffer of buflen elements."""
    return A(shape, elem, strides=strides, buflen=buflen, **kw)


def define_cases_copy_moe():
    cp = "test_copy:"
    for n, step, tile, dt in [(225, 2, 64, "f32"), (128, 1, 128, "i16"), (225, 1, 64, "u8"),
                              (225, 2, 128, "f64")]:
        m = len(range(0, n, step))
        case(f"copy_1d_{dt}_{n}_step{step}_t{tile}", cp + "array_copy_1d",
             [view((m,), (step,), n, dt), view((m,), (step,), n, dt, init="zeros", out=True),
              tile], (cdiv(m, tile),),
             f"test_copy.py test_array_copy_1d[{dt}, stride_step={step}, tile={tile},"
             f" shape=({n},)]: x[::{step}] into y[::{step}]")
    for n, step, perm, tile, dt in [(192, 2, (1, 0), (64, 64), "f32"),
                                    (192, 1, (1, 0), (128, 128), "bf16"),
                                    (128, 2, (0, 1), (64, 64), "i8")]:
        m = len(range(0, n, step))
        st = (n * step, step)
        st = tuple(st[p] for p in perm)
        case(f"copy_2d_{dt}_{n}_step{step}_perm{perm[0]}{perm[1]}", cp + "array_copy_2d",
             [view((m, m), st, n * n, dt), view((m, m), st, n * n, dt, init="zeros", out=True),
              *tile], (cdiv(m, tile[0]), cdiv(m, tile[1])),
             f"test_copy.py test_array_copy_2d[{dt}, stride_step={step}, permute={perm},"
             f" tile={tile}, shape=({n}, {n})]")
    for step, perm, tile, dt in [(2, (2, 1, 0), (2, 64, 64), "f32"),
                                 (1, (2, 0, 1), (1, 128, 128), "f16"),
                                 (2, (0, 1, 2), (2, 64, 64), "i32")]:
        shape = (4, 128, 128)
        base = (4, 128, len(range(0, 128, step)))
        bst = (128 * 128, 128, step)
        sh = tuple(base[p] for p in perm)
        st = tuple(bst[p] for p in perm)
        pt = tuple(tile[p] for p in perm)
        case(f"copy_3d_{dt}_step{step}_perm{''.join(map(str, perm))}", cp + "array_copy_3d",
             [view(sh, st, 4 * 128 * 128, dt),
              view(sh, st, 4 * 128 * 128, dt, init="zeros", out=True), *pt],
             tuple(cdiv(a, b) for a, b in zip(sh, pt)),
             f"test_copy.py test_array_copy_3d[{dt}, stride_step={step}, permute={perm},"
             f" tile={tile}, shape={shape}]: x[:, :, ::{step}].permute({perm})")
    for pm in ["ZERO", "NEG_ZERO", "NAN", "POS_INF", "NEG_INF"]:
        case(f"copy_2d_with_padding_{pm.lower()}",
             cp + f"make_array_copy_2d_with_padding_kernel(PaddingMode.{pm})",
             [A((63, 63), "f32"), A((64, 64), "f32", out=True), 64, 64], (1, 1),
             f"test_copy.py test_array_copy_2d_with_padding[{pm}]: a 63x63 array loaded as a"
             " 64x64 tile into a 64x64 array")

    mo = "kernels.fused_moe:"
    for M, N, dt in [(16, 200, "f16"), (8, 64, "bf16")]:
        tn = 1 << (N - 1).bit_length()
        case(f"moe_silu_and_mul_{dt}_{M}x{N}", mo + "silu_and_mul_kernel",
             [view((M, N), (2 * N, 1), M * 2 * N, dt, init="finite"),
              view((M, N), (2 * N, 1), M * 2 * N, dt, init="finite"),
              A((M, N), dt, init="zeros", out=True), tn], (M,),
             f"kernels/fused_moe.py silu_and_mul_kernel as bench_moe.py invokes it: A and B are"
             f" the two halves of an {M}x{2 * N} array (here two buffers of that shape), TILE_N"
             f" {tn} over {N} columns (exp, approximate division)", ulp=4)
    T, K, E, N, topk, tm, tn, tk = 24, 64, 4, 48, 2, 16, 16, 32
    M = 64
    case("moe_fused_moe_f16", mo + "fused_moe_kernel",
         [A((T, K), "f16", init="range:-4:4"), A((E, N, K), "f16", init="range:-4:4"),
          A((T * topk, N), "f16", init="zeros", out=True), A((T * topk,), "f32", init="range:0:4"),
          A((M,), "i32", init="iota"), A((M // tm,), "i32", init=f"range:0:{E}"), topk, True,
          tm, tn, tk], (cdiv(M, tm) * cdiv(N, tn),),
         f"kernels/fused_moe.py fused_moe_kernel as bench_moe.py invokes it: {T} tokens, top-{topk},"
         f" {E} experts, N={N}, K={K}, tiles {tm}x{tn}x{tk}; sorted_token_ids is iota over {M}"
         f" slots (ids {T * topk}..{M - 1} are padding, out of bounds and masked), expert ids"
         " drawn from [0, 4), routing weights integer-valued")


def define_cases_views_typing():
    tv = "test_tiled_view:"
    for shape, ts, dt, tma in [(64, 64, "f32", False), ((225,), 128, "i8", True),
                               ((225,), 64, "bf16", False), (64, 128, "u32", True)]:
        n = shape[0] if isinstance(shape, tuple) else shape
        case(f"tiled_view_copy_1d_{dt}_{n}_t{ts}",
             tv + f"launched(test_tiled_view_copy_1d, {shape!r}, {ts}, None, {tma})",
             [A((n,), dt), A((n,), dt, init="zeros", out=True), ts], (cdiv(n, ts),),
             f"test_tiled_view.py test_tiled_view_copy_1d[allow_tma={tma}, {dt},"
             f" tile_size={ts}, shape={shape!r}]")
    for shape, ts, dt, nc in [((192, 134), (64, 64), "f32", True),
                              ((128, 256), (128, 128), "i32", False)]:
        case(f"tiled_view_copy_2d_{dt}_{shape[0]}x{shape[1]}{'_noncontig' if nc else ''}",
             tv + f"launched(test_tiled_view_copy_2d, {shape}, {ts}, None, {nc})",
             [A(shape, dt, strides=noncontig(shape) if nc else None),
              A(shape, dt, init="zeros", out=True), A((2,), "i32", init="zeros", out=True),
              *ts], (cdiv(shape[0], ts[0]), cdiv(shape[1], ts[1])),
             f"test_tiled_view.py test_tiled_view_copy_2d[{dt}, tile_size={ts}, shape={shape},"
             f" noncontiguous={nc}]")
    for pm in ["ZERO", "NEG_ZERO", "NAN", "POS_INF", "NEG_INF"]:
        case(f"tiled_view_padding_mode_{pm.lower()}",
             tv + f"launched(test_tiled_view_padding_mode, ct.PaddingMode.{pm})",
             [A((100,), "f32"), A((1,), "f32", init="zeros", out=True), 128], (1,),
             f"test_tiled_view.py test_tiled_view_padding_mode[{pm}]: tile 1 of 128 over 100"
             " elements is all padding")
    for src, dst in [((), (16, 16)), ((1, 16), (128, 16)), ((16, 1), (16, 64))]:
        xs = src if src else (1, 1)
        case(f"tiled_view_store_broadcast_{'x'.join(map(str, xs))}_to_"
             f"{'x'.join(map(str, dst))}",
             tv + f"launched(test_tiled_view_store_broadcast, {src}, {dst})",
             [A(xs, "f32"), A(dst, "f32", init="zeros", out=True)], (1,),
             f"test_tiled_view.py test_tiled_view_store_broadcast[{src}, {dst}]")
    for ux in [True, False]:
        case(f"tiled_view_ifelse_result_{str(ux).lower()}",
             tv + f"launched(test_tiled_view_ifelse_result, {ux})",
             [A((128,), "f32"), A((128,), "f32"), A((128,), "f32", init="zeros", out=True), 64,
              ux], (1,), f"test_tiled_view.py test_tiled_view_ifelse_result[{ux}]")
    case("tiled_view_loop_carried", tv + "launched(test_tiled_view_loop_carried)",
         [A((128,), "f32"), A((128,), "f32"), A((256,), "f32", init="zeros", out=True), 128],
         (1,), "test_tiled_view.py test_tiled_view_loop_carried")

    nt = "test_num_tiles:"
    case("num_tiles_0d", nt + "check_dim_0d", [A((5,), "i32", out=True)], (1,),
         "test_num_tiles.py test_num_tiles[tile_size=1, shape=(5,)]")
    case("num_tiles_1d", nt + "check_dim_1d", [A((5,), "i32", out=True), 2], (1,),
         "test_num_tiles.py test_num_tiles[tile_size=2, shape=(5,)]")
    for t in [1, 2]:
        case(f"num_tiles_2d_t{t}", nt + "check_dim_2d", [A((10, 10), "i32", out=True), t], (1,),
             f"test_num_tiles.py test_num_tiles[tile_size={t}, shape=(10, 10)]")

    for dt in ["i32", "f16", "i8"]:
        case(f"arange_dynamic_start_step_{dt}", "test_generate:arange_dynamic_start_step",
             [A((128,), dt, init="zeros", out=True), 1, 64], (2,),
             f"test_generate.py test_arange_dynamic_start_step[{dt}, tile=64, shape=(128,)]:"
             " step=1")

    gv = "test_global_variables:"
    case("global_use_global_variable", gv + "kernel_use_global_variable",
         [A((128,), "f32"), A((128,), "f32"), A((128,), "f32", init="zeros", out=True)], (1,),
         "test_global_variables.py test_use_global_variable: 128 f32")
    case("global_argument_over_global_variable", gv + "kernel_argument_over_global_variable",
         [A((128,), "f32"), A((128,), "f32"), A((128,), "f32", init="zeros", out=True), 64],
         (2,), "test_global_variables.py test_kernel_argument_over_global_variable: 128 f32,"
         " global_int argument 64")

    lt = "test_loose_typing:"
    for k, t, dt, n in [("propagate_constant_int_then_promote", 5, "i32", 4),
                        ("propagate_constant_float_then_promote", 5, "f32", 4),
                        ("pack_tuple_then_getitem_and_promote", 11, "i32", 4),
                        ("pack_nested_tuple_then_getitem_and_promote", 11, "i32", 4),
                        ("propagate_constant_int_through_if_else_then_promote", 5, "i32", 4),
                        ("different_constants_in_if_else_then_promote", 5, "i32", 4),
                        ("combine_loose_and_strict_int", 5, "i32", 4)]:
        case(f"loose_{k}", lt + k, [t, A((n,), dt, init="zeros", out=True)], (1,),
             f"test_loose_typing.py test_{k}: t={t}")
    case("loose_call_float_and_store", lt + "call_float_and_store",
         [A((2,), "f16", init="zeros", out=True)], (1,),
         "test_loose_typing.py test_float_constructor_produces_loosely_typed_constant")


# --------------------------------------------------------------------------------------
# The bench set (`--set bench`, tests/data/differential/bench): the kernels cuTile's
# benchmarks (bench_*.py) launch, at the tile sizes they launch them with
# (benchmark_tuning.json and the benchmarks' fixed tiles), on small ragged problems so that
# the emulator runs them in seconds. `scripts/bench-static.sh` compares our and NVIDIA's
# code for them (registers, spills, shared memory, tensor-core instructions per loop).
# --------------------------------------------------------------------------------------

def define_cases_bench():
    km = "kernels.matmul:"
    # matmul_kernel: bench_matmul.py's tuning space has tm, tn in {128, 256}, tk in
    # {32, 64, 128}. f32 inputs go through tf32 (the kernel casts them); float8 is not
    # benchmarked with this kernel, but ct.mma takes it (f32 accumulator, C in f32).
    # Integer-valued inputs keep every product and sum exact.
    for tm, tn, tk in [(128, 128, 64), (128, 256, 64), (256, 128, 64)]:
        M, N, K = tm + 72, tn - 40, 2 * tk - 8
        for dt, cdt in [("f16", "f16"), ("bf16", "bf16"), ("f32", "f32"), ("f8e4m3", "f32")]:
            tag = {"f32": "tf32"}.get(dt, dt)
            case(f"matmul_{tag}_{tm}x{tn}x{tk}", km + "matmul_kernel",
                 [A((M, K), dt, init="range:-4:4"), A((K, N), dt, init="range:-4:4"),
                  A((M, N), cdt, init="zeros", out=True), tm, tn, tk],
                 (cdiv(M, tm) * cdiv(N, tn),),
                 f"kernels/matmul.py matmul_kernel (bench_matmul.py's kernel) at tiles"
                 f" {tm}x{tn}x{tk}, {dt} in{' (as tf32)' if dt == 'f32' else ''}, {cdt} out,"
                 f" on a ragged {M}x{N}x{K} problem (integer-valued inputs: exact)",
                 gpu="sm_120" if dt.startswith("f8") else "sm_80")
    # batch_matmul_kernel: bench_matmul.py's bench_batch_matmul (C in f32; float8 inputs,
    # B200 tuned 256x256x128), and f16 inputs at 128x256x128. One ragged output tile a
    # batch; 128x256: two batches, two K steps; 256x256: one batch, one ragged K step (the
    # emulator takes seconds for each step of such a block; f16 at 256x256x128 was left
    # out for that).
    # The same kernel as cuTile's own test suite specialises it: f16 C, every dimension
    # (and so every stride) divisible by 16, tiles 128x256x128; two batches, two K steps.
    case("batch_matmul_f16_f16out_128x256x128", km + "batch_matmul_kernel",
         [A((2, 256, 256), "f16", init="range:-4:4"), A((2, 256, 512), "f16", init="range:-4:4"),
          A((2, 256, 512), "f16", init="zeros", out=True), 128, 256, 128],
         (2, 2, 2),
         "kernels/matmul.py batch_matmul_kernel as cuTile's tests specialise it: f16 in and"
         " out, every dimension divisible by 16, tiles 128x256x128, batch 2, 256x512x256"
         " (integer-valued inputs: exact in f32; the f16 result rounds the same on both)")
    for dt, (tm, tn, tk) in [("f16", (128, 256, 128)), ("f8e4m3", (256, 256, 128))]:
        big = tm * tn >= 256 * 256
        b, M, N, K = (1 if big else 2), tm - 28, tn - 44, tk + (-28 if big else 72)
        case(f"batch_matmul_{dt}_{tm}x{tn}x{tk}", km + "batch_matmul_kernel",
             [A((b, M, K), dt, init="range:-4:4"), A((b, K, N), dt, init="range:-4:4"),
              A((b, M, N), "f32", init="zeros", out=True), tm, tn, tk],
             (b, cdiv(M, tm), cdiv(N, tn)),
             f"kernels/matmul.py batch_matmul_kernel as bench_matmul.py launches it, tiles"
             f" {tm}x{tn}x{tk}, {dt} in, f32 out, batch {b}, ragged {M}x{N}x{K}"
             " (integer-valued inputs: exact)",
             gpu="sm_120" if dt.startswith("f8") else "sm_80")

    # fmha_kernel at head dim 128 as bench_attention.py launches it: tiles 128x128
    # (prefill, causal; occupancy 2) and 64x256 (decode: one query, input_pos k_len-1, not
    # causal; occupancy 4), the tuned configurations of benchmark_tuning.json. (f16, causal,
    # 128x128 with EVEN_K is ../repro's fmha_d128_causal_128x128.)
    at = "kernels.attention:"
    d = 128
    for name, dt, b, qh, kh, ql, kl, causal, (tm, tn), occ in [
            ("f16_causal_128x128_ragged", "f16", 1, 1, 1, 200, 200, True, (128, 128), 2),
            ("f16_full_128x128_ragged", "f16", 1, 1, 1, 100, 200, False, (128, 128), 2),
            ("bf16_gqa_causal_128x128", "bf16", 1, 2, 1, 128, 128, True, (128, 128), 2),
            ("f16_decode_64x256", "f16", 2, 1, 1, 1, 512, False, (64, 256), 4),
            ("bf16_gqa_decode_64x256_ragged", "bf16", 1, 2, 1, 1, 200, False, (64, 256), 4)]:
        pos = 0 if ql == kl else kl - 1
        even_k = kl % tn == 0
        case(f"fmha_d128_{name}", at + f"fmha_kernel.replace_hints(occupancy={occ})",
             [A((b, qh, ql, d), dt, init="range:-2:3"), A((b, kh, kl, d), dt, init="range:-2:3"),
              A((b, kh, kl, d), dt, init="range:-2:3"),
              A((b, qh, ql, d), dt, init="zeros", out=True), 1 / math.sqrt(d), pos, d, qh,
              tm, tn, qh // kh, causal, even_k], (cdiv(ql, tm), b * qh),
             f"kernels/attention.py fmha_kernel as bench_attention.py launches it: head dim"
             f" {d}, tiles {tm}x{tn}, occupancy {occ}, {dt}, batch {b}, {qh} query heads,"
             f" {kh} key heads, q_len {ql}, k_len {kl}, causal={causal}, EVEN_K={even_k},"
             f" input_pos {pos} (exp2, approximate division)", ulp=8)

    # FFT as bench_fft.py launches it: N = 16*16*16, the packed kernel (kernels/fft.py,
    # BS=2 rows a block, D=64) and the reference kernel (kernels/fft_ref.py, a block a
    # row), complex32 (f16) and complex64 (f32); batch 4 (complex64 packed: 2) instead of
    # 16K. The factor matrices are inputs like any other: small integers here.
    F0 = F1 = F2 = 16
    N = F0 * F1 * F2
    for dt, tag in [("f16", "c32"), ("f32", "c64")]:
        w = [A((F0, F0, 2), dt, init="range:-1:2"), A((F1, F1, 2), dt, init="range:-1:2"),
             A((F2, F2, 2), dt, init="range:-1:2"), A((F0, F1 * F2, 2), dt, init="range:-1:2"),
             A((F1, F2, 2), dt, init="range:-1:2")]
        batch, BS, D = (4 if dt == "f16" else 2), 2, 64
        case(f"fft_{tag}", "kernels.fft:fft_kernel",
             [A((batch, N * 2 // D, D), dt, init="range:-1:2"),
              A((batch, N * 2 // D, D), dt, init="zeros", out=True), *w,
              N, F0, F1, F2, BS, D], (cdiv(batch, BS),),
             f"kernels/fft.py fft_kernel as bench_fft.py's cutile_fft launches it: N={N}"
             f" ({F0}x{F1}x{F2}), BS={BS}, D={D}, {tag} as {dt} pairs, batch {batch};"
             " factors and data drawn from {-1, 0, 1}", ulp=2 if dt == "f16" else 0)
        w = [A(a.shape, dt, init="range:-1:2") for a in w]
        batch = 2
        case(f"fft_ref_{tag}", "kernels.fft_ref:fft_kernel",
             [A((batch, N, 2), dt, init="range:-1:2"),
              A((batch, N, 2), dt, init="zeros", out=True), *w, N, F0, F1, F2], (batch,),
             f"kernels/fft_ref.py fft_kernel as bench_fft.py's cutile_fft_ref (FFT_IMPL=ref)"
             f" launches it: N={N} ({F0}x{F1}x{F2}), {tag} as {dt} pairs, batch {batch};"
             " factors and data drawn from {-1, 0, 1}", ulp=2 if dt == "f16" else 0)

    # fused_moe_kernel at bench_moe.py's tiles 128x128x64: its first call (f16, the
    # tokens replicated top-k times, no routing weight) and its second (bf16, one replica,
    # output scaled by the routing weight).
    mo = "kernels.fused_moe:fused_moe_kernel"
    tm, tn, tk = 128, 128, 64
    for dt, T, K, E, N, topk, replicas, weighted in [("f16", 40, 200, 4, 192, 2, 2, False),
                                                     ("bf16", 80, 136, 4, 200, 1, 1, True)]:
        M = 2 * tm
        case(f"fused_moe_{dt}_{tm}x{tn}x{tk}{'_weighted' if weighted else ''}", mo,
             [A((T, K), dt, init="range:-4:4"), A((E, N, K), dt, init="range:-4:4"),
              A((T * replicas, N), dt, init="zeros", out=True),
              A((T * replicas,), dt, init="range:0:4"), A((M,), "i32", init="iota"),
              A((M // tm,), "i32", init=f"range:0:{E}"), replicas, weighted, tm, tn, tk],
             (cdiv(M, tm) * cdiv(N, tn),),
             f"kernels/fused_moe.py fused_moe_kernel as bench_moe.py invokes it"
             f" ({'second' if weighted else 'first'} call): tiles {tm}x{tn}x{tk}, {dt},"
             f" A {T}x{K}, {E} experts of {N}x{K}, {replicas} replica(s) a token,"
             f" mul_routed_weight={weighted}; sorted_token_ids is iota over {M} slots (ids"
             f" {T * replicas}..{M - 1} are padding: out of bounds, masked), expert ids drawn"
             " from the experts, integer-valued data (exact)")


# --------------------------------------------------------------------------------------
# Export.
# --------------------------------------------------------------------------------------

class _Launched(Exception):
    pass


def launched(test_fn, *args, nth=0, **kwargs):
    """The kernel a test function launches (its nth `ct.launch`), for kernels that a
    test declares locally: the test runs against the stub torch until it launches."""
    import cuda.tile as ct
    seen = []

    def fake_launch(stream, grid, kernel, kernel_args, *a, **kw):
        seen.append(kernel)
        if len(seen) > nth:
            raise _Launched()

    saved = ct.launch
    ct.launch = fake_launch
    try:
        test_fn(*args, **kwargs)
    except _Launched:
        pass
    finally:
        ct.launch = saved
    if len(seen) <= nth:
        raise RuntimeError(f"{test_fn.__name__} launched {len(seen)} kernels")
    return seen[nth]


# The bytecode carries debug locations: the directory and name of each function's
# source file, as cuTile's front end gets it from `inspect.getfile`. The export gives that
# front end a view of `inspect` whose `getfile` answers paths relative to the scratch
# directory the tests are imported from ("cutile/test/test_atomic.py") or to cuTile's
# own package ("cuda/tile/_stub.py", for methods cuTile implements in Python), so that no
# path of the exporting machine ends up in the bytecode and the output does not depend on
# where the tests or cuTile were.
_WORK = None


def _portable_path(path):
    import cuda.tile
    path = str(path)
    if not os.path.isabs(path):
        return path
    real = os.path.realpath(path)
    package_root = os.path.dirname(os.path.dirname(os.path.realpath(cuda.tile.__file__)))
    for root in (_WORK, package_root):
        if real.startswith(root + os.sep):
            return os.path.relpath(real, root)
    return os.path.basename(path)


def install_portable_debug_paths():
    import inspect
    from cuda.tile._passes import ast2hir

    class _Inspect:
        def __getattr__(self, name):
            return getattr(inspect, name)

        @staticmethod
        def getfile(obj):
            return _portable_path(inspect.getfile(obj))

    ast2hir.inspect = _Inspect()


def lookup_kernel(ref, case_name="kernel"):
    """`module:attr`, `module:Class.attr`, or `module:expression` evaluated in the test
    module (a kernel factory call, or `launched(test_function, params...)`)."""
    mod, attr = ref.split(":", 1)
    obj = importlib.import_module(mod)
    if "(" in attr:
        # Kernels built from source text (the elementwise tests' templates) are written to
        # a directory of the case's own (relative to the working directory), and the tests'
        # kernel caches are emptied, so that no two kernels share a source file.
        if isinstance(getattr(obj, "kernel_cache", None), dict):
            obj.kernel_cache.clear()
        tmp = pathlib.Path("generated", case_name)
        tmp.mkdir(parents=True, exist_ok=True)
        return eval(attr, {**vars(obj), "launched": launched, "TMP": tmp})
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def assign_pointers(args):
    base = 1 << 20
    for a in walk_arrays(args):
        a.ptr = base
        nbytes = a.length * ELEM[a.elem][1]
        base += (nbytes + 255) // 256 * 256 + 256


def walk_arrays(args):
    for a in args:
        if isinstance(a, A):
            yield a
        elif isinstance(a, (tuple, list)):
            yield from walk_arrays(a)


def scalar_ty(dtype):
    name = str(dtype)
    m = re.search(r"'(\w+)'", name)
    name = m.group(1) if m else name
    return {"bool_": "i1", "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32",
            "int64": "i64", "uint8": "i8", "uint16": "i16", "uint32": "i32", "uint64": "i64",
            "float16": "f16", "bfloat16": "bf16", "float32": "f32",
            "float64": "f64"}[name]


def flatten(constraint, arg, comp):
    """JSON argument entries of one Python argument, per the cutile_python calling
    convention: an array is its base pointer, then its shape, then its strides (each in
    the array's index type); a scalar is one parameter; a constant is none; a tuple is
    its elements in order."""
    out = []
    if isinstance(constraint, comp.ConstantConstraint):
        return out
    if isinstance(constraint, comp.ArrayConstraint):
        assert isinstance(arg, A), (constraint, arg)
        ity = scalar_ty(constraint.index_dtype)
        elem = {"u8": "i8", "u16": "i16", "u32": "i32", "u64": "i64"}.get(arg.elem, arg.elem)
        out.append({"buffer": {"elem": elem, "len": arg.length, "init": arg.init,
                               "output": bool(arg.out)}})
        for d in arg.shape:
            out.append({"scalar": {"ty": ity, "value": d}})
        for s in arg.strides:
            out.append({"scalar": {"ty": ity, "value": s}})
        return out
    if isinstance(constraint, comp.ScalarConstraint):
        ty = scalar_ty(constraint.dtype)
        v = arg
        if ty == "i1":
            v = 1 if arg else 0
        elif ty == "f32":
            v = struct.unpack("<f", struct.pack("<f", float(arg)))[0]  # exactly an f32
        elif ty.startswith("f"):
            v = float(arg)
        else:
            v = int(arg)
        out.append({"scalar": {"ty": ty, "value": v}})
        return out
    if isinstance(constraint, comp.TupleConstraint):
        for c, a in zip(constraint.items, arg):
            out.extend(flatten(c, a, comp))
        return out
    raise NotImplementedError(f"constraint {constraint!r}")


def retype_narrow_floats(constraint, arg, comp, ct):
    """bfloat16 arrays were specialised as float16, float8 ones as int8 (the fake arrays'
    typestr has no name for them): give their constraints the real element type."""
    real = {"bf16": ct.bfloat16, "f8e4m3": ct.float8_e4m3fn, "f8e5m2": ct.float8_e5m2}
    if isinstance(constraint, comp.ArrayConstraint) and isinstance(arg, A) \
            and arg.elem in real:
        return dataclasses.replace(constraint, dtype=real[arg.elem])
    if isinstance(constraint, comp.TupleConstraint):
        return comp.TupleConstraint(
            [retype_narrow_floats(c, a, comp, ct) for c, a in zip(constraint.items, arg)])
    return constraint


def disasm_params(disasm, path):
    text = subprocess.run([disasm, path], check=True, capture_output=True,
                          text=True).stdout
    m = re.search(r"entry @(\w+)\((.*?)\)\s*(optimization_hints|\{)", text, re.S)
    params = re.findall(r"%\w+: tile<([^>]*>?)>", m.group(2)) if m.group(2).strip() else []
    return m.group(1), params


def param_matches(entry, ty):
    if "buffer" in entry:
        elem = {"f8e4m3": "f8E4M3FN", "f8e5m2": "f8E5M2"}.get(entry["buffer"]["elem"],
                                                             entry["buffer"]["elem"])
        return ty == f"ptr<{elem}>" or (
            entry["buffer"]["elem"] == "i1" and ty == "ptr<i1>")
    return ty == entry["scalar"]["ty"]


def export(case_, outdir, ct, comp, disasm=None, tileiras=None):
    kernel = lookup_kernel(case_.kernel, case_.name)
    assign_pointers(case_.args)
    has_tuple = any(isinstance(a, tuple) for a in case_.args)
    cconv = (comp.CallingConvention.cutile_python_v2() if has_tuple
             else comp.CallingConvention.cutile_python_v1())
    sig = comp.KernelSignature.from_kernel_args(kernel, case_.args, cconv)
    params = tuple(retype_narrow_floats(c, a, comp, ct)
                   for c, a in zip(sig.parameters, case_.args))
    if params != sig.parameters:
        sig = comp.KernelSignature(params, cconv).with_mangled_symbol(
            kernel._annotated_function.pyfunc.__name__)
    io = BytesIO()
    comp.export_kernel(kernel, [sig], io, gpu_code=case_.gpu,
                       output_format="tileir_bytecode", bytecode_version="13.4")
    args = []
    for c, a in zip(sig.parameters, case_.args):
        args.extend(flatten(c, a, comp))
    tileir = os.path.join(outdir, case_.name + ".tileir")
    with open(tileir, "wb") as f:
        f.write(io.getvalue())
    if disasm:
        entry, tys = disasm_params(disasm, tileir)
        assert entry == sig.symbol, (entry, sig.symbol)
        if len(tys) != len(args) or not all(param_matches(e, t) for e, t in zip(args, tys)):
            raise RuntimeError(f"{case_.name}: parameters {tys} do not match {args}")
    if tileiras:
        subprocess.run([tileiras, "--gpu-name", case_.gpu, tileir, "-o", os.devnull],
                       check=True, capture_output=True)
    doc = {"entry": sig.symbol, "grid": list(case_.grid), "args": args, "ulp": case_.ulp,
           "note": case_.note}
    with open(os.path.join(outdir, case_.name + ".json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tests", required=True,
                   help="cutile-python's test directory, or a .tar.xz holding cutile/test")
    p.add_argument("--set", choices=["cutile", "bench"], default="cutile",
                   help="which case table: cutile (the tests' kernels, default) or bench"
                   " (the benchmarks' kernels at their large tiles)")
    p.add_argument("--out", help="output folder (default: tests/data/differential/SET)")
    p.add_argument("--disasm", help="tileirdisasm, to check each entry signature")
    p.add_argument("--check", help="NVIDIA tileiras, to check each case compiles for its"
                   " target (sm_80; float8 cases sm_120)")
    p.add_argument("--only", help="regular expression: export only matching case names")
    p.add_argument("--keep-going", action="store_true")
    opts = p.parse_args()
    if opts.out is None:
        opts.out = os.path.join(root, "tests/data/differential", opts.set)

    install_fake_driver()
    install_stub_modules()
    # Work in a scratch directory holding cutile/test (see _relocate_code).
    global _WORK
    _WORK = os.path.realpath(tempfile.mkdtemp(prefix="cutile-export-"))
    if opts.tests.endswith((".tar.xz", ".tar.gz", ".tar")):
        import tarfile
        with tarfile.open(opts.tests) as tf:
            tf.extractall(_WORK)
    else:
        import shutil
        shutil.copytree(opts.tests, os.path.join(_WORK, "cutile", "test"))
    opts.out = os.path.abspath(opts.out)
    for tool in ("disasm", "check"):
        if getattr(opts, tool) and os.sep in getattr(opts, tool):
            setattr(opts, tool, os.path.abspath(getattr(opts, tool)))
    os.chdir(_WORK)
    sys.path.insert(0, os.path.join(_WORK, "cutile", "test"))
    install_portable_debug_paths()
    import cuda.tile as ct
    import cuda.tile.compilation as comp

    if opts.set == "bench":
        define_cases_bench()
    else:
        define_cases()
        define_cases_atomic()
        define_cases_reduction()
        define_cases_scan_softmax_select()
        define_cases_mma()
        define_cases_gather_scatter()
        define_cases_elementwise()
        define_cases_memory()
        define_cases_misc()
        define_cases_misc2()
        define_cases_copy_moe()
        define_cases_views_typing()
    os.makedirs(opts.out, exist_ok=True)
    names = set()
    failed = []
    done = 0
    for c in CASES:
        assert c.name not in names, c.name
        names.add(c.name)
        if opts.only and not re.search(opts.only, c.name):
            continue
        try:
            export(c, opts.out, ct, comp, opts.disasm, opts.check)
            print("ok  ", c.name, flush=True)
            done += 1
        except Exception as e:  # noqa: BLE001
            print("FAIL", c.name, type(e).__name__, str(e).strip().splitlines()[-1:],
                  flush=True)
            failed.append(c.name)
            if not opts.keep_going:
                raise
    if not opts.only and not failed:
        # A full run owns the directory's cases: drop those no longer in the table.
        for f in sorted(os.listdir(opts.out)):
            stem, ext = os.path.splitext(f)
            if ext in (".tileir", ".json") and stem not in names:
                os.remove(os.path.join(opts.out, f))
                print("removed stale", f)
    print(f"{done} cases exported, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
