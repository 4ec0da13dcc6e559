# SPDX-License-Identifier: Apache-2.0
"""cuTile kernels moving 8-bit element tiles (i8, f8E4M3FN, f8E5M2, bool)
through tensor views, most exported more than once: `*_d16` assumes every
length and row stride divisible by 16 elements (so a thread moves 16 bytes
per 128-bit access), `*_d4` by 4 (32-bit accesses), `*_d1` assumes nothing
about lengths (accesses must then narrow so that none straddles the end). gen.py exports them to TileIR bytecode;
tests/lower_vector8.rs runs them in the PTX emulator against CPU references
written from these docstrings.

Conventions are those of the reference corpus: ct.load pads out-of-bounds
elements (zero unless a padding mode is named), ct.store writes only
in-bounds elements, arrays are C-contiguous with 16-byte aligned bases.
"""
import cuda.tile as ct
from cuda.tile.compilation import ArrayConstraint

KERNELS = []
T = 2048
R, C = 32, 64


def C_(dtype, ndim, div):
    return ArrayConstraint(dtype, ndim, index_dtype=ct.int32, stride_lower_bound_incl=0,
                           alias_groups=(), may_alias_internally=False,
                           stride_constant=(None,) * (ndim - 1) + (1,),
                           stride_divisible_by=(div,) * (ndim - 1) + (1,),
                           shape_divisible_by=div, base_addr_divisible_by=16)


def export(k, sig, divs=(16, 1)):
    """Registers kernel k once per divisibility of lengths in divs."""
    for div in divs:
        KERNELS.append(dict(name=f"{k._pyfunc.__name__}_d{div}", kernel=k,
                            params=[C_(dt, nd, div) for dt, nd in sig]))
    return k


i8, i32, e4m3, e5m2 = ct.int8, ct.int32, ct.float8_e4m3fn, ct.float8_e5m2


@ct.kernel
def add_i8(a, b, c):
    """c[i] = a[i] + b[i] wrapping modulo 256 (i8). Grid (cdiv(n, 2048), 1, 1)."""
    x = ct.load(a, index=(ct.bid(0),), shape=(T,))
    y = ct.load(b, index=(ct.bid(0),), shape=(T,))
    ct.store(c, index=(ct.bid(0),), tile=x + y)


export(add_i8, [(i8, 1)] * 3, (16, 4, 1))


@ct.kernel
def widen_narrow_i8(a, x, y, z):
    """y[i] = i32(a[i]) + x[i] (a sign-extended); z[i] = i8(x[i]) - a[i] (x
    truncated to its low byte, wrapping). Grid (cdiv(n, 2048), 1, 1)."""
    p = ct.load(a, index=(ct.bid(0),), shape=(T,))
    q = ct.load(x, index=(ct.bid(0),), shape=(T,))
    ct.store(y, index=(ct.bid(0),), tile=ct.astype(p, i32) + q)
    ct.store(z, index=(ct.bid(0),), tile=ct.astype(q, i8) - p)


export(widen_narrow_i8, [(i8, 1), (i32, 1), (i32, 1), (i8, 1)])


@ct.kernel
def copy_f8_2d(a, b):
    """b[i, j] = a[i, j] (f8E4M3FN bits copied). a, b: [M, N];
    grid (cdiv(M, 32), cdiv(N, 64), 1), block (bm, bn) copies a 32 x 64 tile."""
    t = ct.load(a, index=(ct.bid(0), ct.bid(1)), shape=(R, C))
    ct.store(b, index=(ct.bid(0), ct.bid(1)), tile=t)


export(copy_f8_2d, [(e4m3, 2)] * 2)


@ct.kernel
def pad_f8(a, out):
    """out[i] = a[i] for i < len(a), NaN (0x7e, f8E5M2) for len(a) <= i <
    len(out) (the load's NaN padding). Grid (cdiv(len(out), 2048), 1, 1)."""
    t = ct.load(a, index=(ct.bid(0),), shape=(T,), padding_mode=ct.PaddingMode.NAN)
    ct.store(out, index=(ct.bid(0),), tile=t)


export(pad_f8, [(e5m2, 1)] * 2, (16, 4, 1))


@ct.kernel
def select_bool(a, b, m, lt, out):
    """lt[i] = a[i] < b[i] (bool, stored as a byte 0 or 1); out[i] = a[i]
    where m[i] (a byte, true when non-zero) else b[i] (i8 compared signed).
    Grid (cdiv(n, 2048), 1, 1)."""
    x = ct.load(a, index=(ct.bid(0),), shape=(T,))
    y = ct.load(b, index=(ct.bid(0),), shape=(T,))
    k = ct.load(m, index=(ct.bid(0),), shape=(T,))
    ct.store(lt, index=(ct.bid(0),), tile=x < y)
    ct.store(out, index=(ct.bid(0),), tile=ct.where(k, x, y))


export(select_bool, [(i8, 1), (i8, 1), (ct.bool_, 1), (ct.bool_, 1), (i8, 1)])


@ct.kernel
def pad_neg_inf_f8(a, out):
    """out[i] = a[i] for i < len(a), -inf (0xfc, f8E5M2) beyond (the load's
    NEG_INF padding). Grid (cdiv(len(out), 2048), 1, 1)."""
    t = ct.load(a, index=(ct.bid(0),), shape=(T,), padding_mode=ct.PaddingMode.NEG_INF)
    ct.store(out, index=(ct.bid(0),), tile=t)


export(pad_neg_inf_f8, [(e5m2, 1)] * 2, (16,))


@ct.kernel
def pad_inf_e4m3(a, out):
    """Loads f8E4M3FN with infinity padding, which that type cannot hold:
    refused (as NVIDIA's tileiras refuses it)."""
    t = ct.load(a, index=(ct.bid(0),), shape=(T,), padding_mode=ct.PaddingMode.POS_INF)
    ct.store(out, index=(ct.bid(0),), tile=t)


export(pad_inf_e4m3, [(e4m3, 1)] * 2, (16,))
