#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the kernels of the TMA hint tests (tests/tma.rs): cuTile's matmul
(128x128 tiles of f16, K by 64, zero padding) with its loads' `allow_tma`
hint false, and with it true.

Run with the Python that has cuTile (`cuda-tile`) installed:

    python gen.py        # rewrites *.tileir here
"""

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


def matmul(allow_tma):
    tm, tn, tk = 128, 128, 64

    @ct.kernel
    def k(a, b, c):
        acc = ct.zeros((tm, tn), ct.float32)
        for kk in range(ct.num_tiles(a, 1, shape=(tm, tk))):
            x = ct.load(a, index=(ct.bid(0), kk), shape=(tm, tk),
                        padding_mode=ct.PaddingMode.ZERO, allow_tma=allow_tma)
            w = ct.load(b, index=(kk, ct.bid(1)), shape=(tk, tn),
                        padding_mode=ct.PaddingMode.ZERO, allow_tma=allow_tma)
            acc = ct.mma(x, w, acc)
        ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc)
    return k


def main():
    for allow in (False, True):
        name = f"matmul_f16_allow_tma_{str(allow).lower()}"
        sig = KernelSignature([contiguous(ct.float16, 2), contiguous(ct.float16, 2),
                               contiguous(ct.float32, 2)],
                              CallingConvention.cutile_python_v1(), symbol="k")
        path = os.path.join(HERE, f"{name}.tileir")
        export_kernel(matmul(allow), [sig], path, output_format="tileir_bytecode",
                      bytecode_version="13.3")
        relative_paths(path, [HERE, os.path.dirname(os.path.dirname(os.path.dirname(ct.__file__)))])


if __name__ == "__main__":
    main()
