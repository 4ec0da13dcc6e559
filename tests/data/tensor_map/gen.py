#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the kernels of the tensor-map round-trip tests (tests/tensor_map.rs):
each loads one tile of an array `x` (the box) whose load NVIDIA's tileiras
turns into a TMA copy, so its host callback builds one tensor map for `x`.

Run with the Python that has cuTile (`cuda-tile`) installed:

    python gen.py        # rewrites *.tileir and index.json here

`index.json` lists each kernel: its padding and its array parameters, each
with element type, element bits and the tile loaded from it (outermost first,
as cuTile writes shapes).
"""

import json
import os
import sys

import cuda.tile as ct
from cuda.tile.compilation import ArrayConstraint, CallingConvention, KernelSignature, export_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from debug_paths import relative_paths  # noqa: E402



def contiguous(dtype, ndim):
    """C-contiguous, 16-byte aligned array with 16-byte multiple strides."""
    elems16 = max(1, 128 // dtype.bitwidth)
    return ArrayConstraint(dtype, ndim, index_dtype=ct.int32, stride_lower_bound_incl=0,
                           alias_groups=(), may_alias_internally=False,
                           stride_constant=(None,) * (ndim - 1) + (1,),
                           stride_divisible_by=(elems16,) * (ndim - 1) + (1,),
                           base_addr_divisible_by=16)


def sum_kernel(box, pad):
    """One tile at the origin, summed."""
    idx = (0,) * len(box)

    @ct.kernel
    def k(x, y):
        t = ct.load(x, index=idx, shape=box, padding_mode=pad)
        ct.store(y, index=(ct.bid(0),), tile=ct.reshape(ct.sum(ct.astype(t, ct.float32)), (1,)))
    return k


def mma_kernel(tm, tn, tk, acc_dtype):
    """C = A @ B over K tiles (zero padding): A's and B's loads feed the
    tensor cores, whose operands TMA writes swizzled."""
    @ct.kernel
    def k(a, b, c):
        acc = ct.zeros((tm, tn), acc_dtype)
        for kk in range(ct.num_tiles(a, 1, shape=(tm, tk))):
            x = ct.load(a, index=(ct.bid(0), kk), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
            w = ct.load(b, index=(kk, ct.bid(1)), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(x, w, acc)
        ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc)
    return k


KERNELS = [
    # ranks 1 to 5
    ("float16", (256,), "zero"),
    ("float16", (8, 64), "zero"),
    ("float16", (4, 8, 64), "zero"),
    ("float16", (2, 4, 8, 64), "zero"),
    ("float16", (2, 2, 4, 8, 64), "zero"),
    ("float32", (2, 4, 2, 4, 32), "zero"),
    ("int8", (4, 2, 4, 16, 128), "zero"),
    # element types
    ("bfloat16", (64, 64), "zero"),
    ("float32", (16, 128), "zero"),
    ("float64", (16, 32), "zero"),
    ("tfloat32", (32, 32), "zero"),
    ("int8", (16, 128), "zero"),
    ("uint8", (16, 64), "zero"),
    ("int16", (16, 64), "zero"),
    ("uint16", (16, 64), "zero"),
    ("int32", (16, 32), "zero"),
    ("uint32", (16, 32), "zero"),
    ("int64", (8, 16), "zero"),
    ("uint64", (8, 16), "zero"),
    ("float8_e4m3fn", (64, 128), "zero"),
    ("float8_e5m2", (16, 64), "zero"),
    # inner box of 16, 32, 64, 128 and 256 bytes (swizzle modes)
    ("float16", (64, 8), "zero"),
    ("float16", (64, 16), "zero"),
    ("float16", (64, 32), "zero"),
    ("float16", (64, 128), "zero"),
    ("float32", (128, 4), "zero"),
    ("float32", (32, 8, 16), "zero"),
    # undetermined padding (NVIDIA uses TMA only for this and zero padding)
    ("float32", (16, 128), "undetermined"),
    ("bfloat16", (4, 16, 64), "undetermined"),
    # operands of matrix products (swizzled): (a, b, c, tile m, n, k)
    ("float16", (64, 64, 16), "mma"),
    ("float16", (64, 64, 32), "mma"),
    ("float16", (64, 128, 64), "mma"),
    ("bfloat16", (128, 64, 64), "mma"),
    ("float32", (64, 64, 32), "mma"),
    ("tfloat32", (64, 64, 16), "mma"),
    ("float8_e4m3fn", (64, 64, 128), "mma"),
    ("int8", (64, 64, 64), "mma"),
    ("float64", (64, 32, 16), "mma"),
]


def main():
    index = []
    for dtname, box, pad in KERNELS:
        dt = getattr(ct, dtname)
        name = f"{dtname}_{'x'.join(map(str, box))}_{pad}"
        if pad == "mma":
            tm, tn, tk = box
            acc = {"int8": ct.int32, "float64": ct.float64}.get(dtname, ct.float32)
            kernel = mma_kernel(tm, tn, tk, acc)
            arrays = [(dt, (tm, tk)), (dt, (tk, tn)), (acc, (tm, tn))]
        else:
            mode = {"zero": ct.PaddingMode.ZERO, "undetermined": ct.PaddingMode.UNDETERMINED}[pad]
            kernel = sum_kernel(box, mode)
            arrays = [(dt, box), (ct.float32, (1,))]
        sig = KernelSignature([contiguous(t, len(tile)) for t, tile in arrays],
                              CallingConvention.cutile_python_v1(), symbol="k")
        export_kernel(kernel, [sig], os.path.join(HERE, f"{name}.tileir"),
                      output_format="tileir_bytecode", bytecode_version="13.3")
        relative_paths(os.path.join(HERE, f"{name}.tileir"),
                       [HERE, os.path.dirname(os.path.dirname(os.path.dirname(ct.__file__)))])
        index.append({"name": name, "kind": "mma" if pad == "mma" else "sum",
                      "arrays": [{"elem": str(t), "bits": t.bitwidth, "tile": list(tile)}
                                 for t, tile in arrays]})
    with open(os.path.join(HERE, "index.json"), "w") as f:
        json.dump(index, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
