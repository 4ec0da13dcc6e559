# SPDX-License-Identifier: Apache-2.0
"""cuTile kernels for matrix-multiply shapes the reference corpus lacks: a
fused epilogue (bias and ReLU), a bf16 matmul with a GELU-style epilogue, an
attention kernel (two matmuls around an online softmax), block-scaled matmuls
(mma_scaled: e5m2, small tiles, batched, f4), f4 arrays, an f8 print, a bool cast. gen.py
exports each to TileIR bytecode; tests/lower_kernels.rs and
tests/lower_mma_scaled.rs run them in the emulator against these docstrings.

Conventions are those of the reference corpus: ct.load pads out-of-bounds
elements with zero (padding_mode=ZERO), ct.store writes only in-bounds
elements, arrays are C-contiguous with 16-byte aligned bases.
"""
import cuda.tile as ct
from cuda.tile.compilation import ArrayConstraint, ScalarConstraint

KERNELS = []


def kernel(params, version="13.3"):
    def deco(k):
        KERNELS.append(dict(name=k._pyfunc.__name__, kernel=k, params=params, version=version))
        return k
    return deco


def C(dtype, ndim):
    elems16 = max(1, 128 // dtype.bitwidth)
    return ArrayConstraint(dtype, ndim, index_dtype=ct.int32, stride_lower_bound_incl=0,
                           alias_groups=(), may_alias_internally=False,
                           stride_constant=(None,) * (ndim - 1) + (1,),
                           stride_divisible_by=(elems16,) * (ndim - 1) + (1,),
                           base_addr_divisible_by=16)


f16, bf16, f32 = ct.float16, ct.bfloat16, ct.float32
ZERO = ct.PaddingMode.ZERO
BM, BN, BK = 64, 64, 32


@kernel([C(f16, 2), C(f16, 2), C(f32, 1), C(f32, 2)])
@ct.kernel
def matmul_bias_relu_f16(a, b, bias, c):
    """c[i, j] = max(0, sum_k a[i, k] * b[k, j] + bias[j]) (f16 in, f32 accumulate and out).

    a: [M, K], b: [K, N], bias: [N], c: [M, N]. Grid (cdiv(M, 64), cdiv(N, 64), 1);
    block (bm, bn) computes c[64 bm : +64, 64 bn : +64] with a K loop of cdiv(K, 32) steps.
    """
    acc = ct.zeros((BM, BN), f32)
    for k in range(ct.num_tiles(a, 1, shape=(BM, BK))):
        x = ct.load(a, index=(ct.bid(0), k), shape=(BM, BK), padding_mode=ZERO)
        y = ct.load(b, index=(k, ct.bid(1)), shape=(BK, BN), padding_mode=ZERO)
        acc = ct.mma(x, y, acc)
    bv = ct.load(bias, index=(ct.bid(1),), shape=(BN,), padding_mode=ZERO)
    acc = acc + ct.reshape(bv, (1, BN))
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=ct.maximum(acc, 0.0))


@kernel([C(bf16, 2), C(bf16, 2), C(bf16, 2)])
@ct.kernel
def matmul_bf16_sigmoid_gate(a, b, c):
    """c[i, j] = bf16(s * sigmoid(s)) with s = sum_k a[i, k] * b[k, j] (bf16 in, f32 acc).

    sigmoid(s) = 1 / (1 + exp(-s)). a: [M, K], b: [K, N], c: [M, N] (bf16, rounded to
    nearest even once at the store). Grid (cdiv(M, 64), cdiv(N, 64), 1), K loop of
    cdiv(K, 32) steps.
    """
    acc = ct.zeros((BM, BN), f32)
    for k in range(ct.num_tiles(a, 1, shape=(BM, BK))):
        x = ct.load(a, index=(ct.bid(0), k), shape=(BM, BK), padding_mode=ZERO)
        y = ct.load(b, index=(k, ct.bid(1)), shape=(BK, BN), padding_mode=ZERO)
        acc = ct.mma(x, y, acc)
    gate = 1.0 / (1.0 + ct.exp(-acc))
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=ct.astype(acc * gate, bf16))


AM, AN, AD = 64, 64, 64


@kernel([C(f16, 2), C(f16, 2), C(f16, 2), C(f32, 2), ScalarConstraint(f32)])
@ct.kernel
def attention_f16(q, k, v, o, scale):
    """o[i, :] = sum_j p[i, j] v[j, :] with p[i, :] = softmax_j(scale * q[i, :] . k[j, :]).

    q: [Sq, 64], k: [Sk, 64], v: [Sk, 64] (f16), o: [Sq, 64] (f32). Grid (cdiv(Sq, 64), 1, 1);
    block bm handles rows [64 bm, 64 bm + 64). Keys are visited in blocks of 64 with an online
    softmax (running max m and sum l; earlier partial sums rescaled by exp(m_old - m_new));
    keys j >= Sk are masked out. The probabilities are rounded to f16 before the second
    matmul (f32 accumulation); the row sum l uses the unrounded f32 probabilities.
    """
    qt = ct.load(q, index=(ct.bid(0), 0), shape=(AM, AD), padding_mode=ZERO)
    m = ct.full((AM, 1), -1.0e30, f32)
    l = ct.zeros((AM, 1), f32)
    acc = ct.zeros((AM, AD), f32)
    sk = k.shape[0]
    for j in range(ct.num_tiles(k, 0, shape=(AN, AD))):
        kt = ct.load(k, index=(j, 0), shape=(AN, AD), padding_mode=ZERO)
        s = ct.mma(qt, ct.transpose(kt), ct.zeros((AM, AN), f32)) * scale
        cols = ct.arange(AN, dtype=ct.int32) + j * AN
        s = ct.where(ct.reshape(cols < sk, (1, AN)), s, -1.0e30)
        m_new = ct.maximum(m, ct.max(s, axis=1, keepdims=True))
        p = ct.exp(s - m_new)
        alpha = ct.exp(m - m_new)
        l = l * alpha + ct.sum(p, axis=1, keepdims=True)
        vt = ct.load(v, index=(j, 0), shape=(AN, AD), padding_mode=ZERO)
        acc = ct.mma(ct.astype(p, f16), vt, acc * alpha)
        m = m_new
    ct.store(o, index=(ct.bid(0), 0), tile=acc / l)


e4m3, e5m2, e8m0 = ct.float8_e4m3fn, ct.float8_e5m2, ct.float8_e8m0fnu
SM, SN, SK = 64, 64, 64


@kernel([C(e5m2, 2), C(e8m0, 2), C(e5m2, 2), C(e8m0, 2), C(f32, 2)])
@ct.kernel
def mma_scaled_e5m2(a, a_scale, b, b_scale, c):
    """c[i, j] = sum_k a[i, k] * 2**(a_scale[i, k // 32] - 127) * b[k, j] * 2**(b_scale[k // 32, j] - 127).

    a: [M, K], b: [K, N] (f8E5M2), a_scale: [M, K / 32], b_scale: [K / 32, N] (f8E8M0FNU
    exponents), c: [M, N] (f32); K a multiple of 64, M and N any. Grid (cdiv(M, 64),
    cdiv(N, 64), 1); block (bm, bn) computes its 64 x 64 tile of c with a K loop of K / 64
    steps (out-of-bounds operands and scales read as zero).
    """
    acc = ct.zeros((SM, SN), f32)
    for k in range(ct.num_tiles(a, 1, shape=(SM, SK))):
        x = ct.load(a, index=(ct.bid(0), k), shape=(SM, SK), padding_mode=ZERO)
        xs = ct.load(a_scale, index=(ct.bid(0), k), shape=(SM, SK // 32), padding_mode=ZERO)
        y = ct.load(b, index=(k, ct.bid(1)), shape=(SK, SN), padding_mode=ZERO)
        ys = ct.load(b_scale, index=(k, ct.bid(1)), shape=(SK // 32, SN), padding_mode=ZERO)
        acc = ct.mma_scaled(x, xs, y, ys, acc)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc)


TM8, TN16 = 8, 16


@kernel([C(e4m3, 2), C(e8m0, 2), C(e4m3, 2), C(e8m0, 2), C(f32, 2)])
@ct.kernel
def mma_scaled_e4m3_8x16(a, a_scale, b, b_scale, c):
    """c[i, j] = sum_k a[i, k] * 2**(a_scale[i, k // 32] - 127) * b[k, j] * 2**(b_scale[k // 32, j] - 127).

    As mma_scaled_e5m2 with f8E4M3FN operands and 8 x 16 tiles of c (a shape no tensor-core
    engine takes): grid (cdiv(M, 8), cdiv(N, 16), 1), K a multiple of 64, K loop of K / 64
    steps.
    """
    acc = ct.zeros((TM8, TN16), f32)
    for k in range(ct.num_tiles(a, 1, shape=(TM8, SK))):
        x = ct.load(a, index=(ct.bid(0), k), shape=(TM8, SK), padding_mode=ZERO)
        xs = ct.load(a_scale, index=(ct.bid(0), k), shape=(TM8, SK // 32), padding_mode=ZERO)
        y = ct.load(b, index=(k, ct.bid(1)), shape=(SK, TN16), padding_mode=ZERO)
        ys = ct.load(b_scale, index=(k, ct.bid(1)), shape=(SK // 32, TN16), padding_mode=ZERO)
        acc = ct.mma_scaled(x, xs, y, ys, acc)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc)


@kernel([C(e8m0, 2), C(e8m0, 2), C(f32, 2)])
@ct.kernel
def mma_scaled_f4(a_scale, b_scale, c):
    """c = ones(64, 64) (f4E2M1FN) scaled by a_scale [64, 4] times ones(64, 64) scaled by
    b_scale [4, 64] (block 16): c[i, j] = sum_k 2**(a_scale[i, k // 16] - 127) *
    2**(b_scale[k // 16, j] - 127). The f4 operands are constants (splat ones), dequantized
    with their scales like loaded ones.
    """
    x = ct.ones((64, 64), ct.float4_e2m1fn)
    y = ct.ones((64, 64), ct.float4_e2m1fn)
    xs = ct.load(a_scale, index=(0, 0), shape=(64, 4))
    ys = ct.load(b_scale, index=(0, 0), shape=(4, 64))
    acc = ct.mma_scaled(x, xs, y, ys, ct.zeros((64, 64), f32))
    ct.store(c, index=(0, 0), tile=acc)


BB, BTM, BTN = 2, 32, 16


@kernel([C(e4m3, 3), C(e8m0, 3), C(e4m3, 3), C(e8m0, 3), C(f32, 3)])
@ct.kernel
def mma_scaled_batched(a, a_scale, b, b_scale, c):
    """c[h, i, j] = sum_k a[h, i, k] * 2**(a_scale[h, i, k // 32] - 127) * b[h, k, j] * 2**(b_scale[h, k // 32, j] - 127).

    Batched (3-D tiles): a: [H, M, K], b: [H, K, N] (f8E4M3FN), a_scale: [H, M, K / 32],
    b_scale: [H, K / 32, N] (f8E8M0FNU), c: [H, M, N] (f32); H a multiple of 2, K of 64.
    Grid (cdiv(M, 32), cdiv(N, 16), H / 2); block (bm, bn, bh) computes c[2 bh : +2,
    32 bm : +32, 16 bn : +16] with a K loop of K / 64 steps.
    """
    acc = ct.zeros((BB, BTM, BTN), f32)
    for k in range(ct.num_tiles(a, 2, shape=(BB, BTM, SK))):
        x = ct.load(a, index=(ct.bid(2), ct.bid(0), k), shape=(BB, BTM, SK), padding_mode=ZERO)
        xs = ct.load(a_scale, index=(ct.bid(2), ct.bid(0), k), shape=(BB, BTM, SK // 32),
                     padding_mode=ZERO)
        y = ct.load(b, index=(ct.bid(2), k, ct.bid(1)), shape=(BB, SK, BTN), padding_mode=ZERO)
        ys = ct.load(b_scale, index=(ct.bid(2), k, ct.bid(1)), shape=(BB, SK // 32, BTN),
                     padding_mode=ZERO)
        acc = ct.mma_scaled(x, xs, y, ys, acc)
    ct.store(c, index=(ct.bid(2), ct.bid(0), ct.bid(1)), tile=acc)


u8, f4, e5m3 = ct.uint8, ct.float4_e2m1fn, ct.float8_e5m3fnu
FM, FN, FK = 64, 64, 64


@kernel([C(u8, 2), C(e8m0, 2), C(u8, 2), C(e8m0, 2), C(f32, 2)])
@ct.kernel
def mma_scaled_f4_e8m0(a, a_scale, b, b_scale, c):
    """c[i, j] = sum_k a[i, k] * 2**(a_scale[i, k // 32] - 127) * b[k, j] * 2**(b_scale[k // 32, j] - 127).

    a: [M, K], b: [K, N] (f4E2M1FN) held as bytes, two elements a byte (element 2q of a row
    in the low nibble of byte q): arrays a: [M, K / 2] and b: [K, N / 2] of uint8, unpacked
    in the kernel. a_scale: [M, K / 32], b_scale: [K / 32, N] (f8E8M0FNU exponents), c: [M, N]
    (f32); K a multiple of 32, N even. Grid (cdiv(M, 64), cdiv(N, 64), 1); block (bm, bn)
    computes its 64 x 64 tile of c with a K loop of cdiv(K, 64) steps (out-of-bounds operand
    bytes and scales read as zero).
    """
    acc = ct.zeros((FM, FN), f32)
    for k in range(ct.num_tiles(a, 1, shape=(FM, FK // 2))):
        xb = ct.load(a, index=(ct.bid(0), k), shape=(FM, FK // 2), padding_mode=ZERO)
        x = ct.reshape(ct.unpack_from_bytes(ct.reshape(xb, (FM * FK // 2,)), f4), (FM, FK))
        xs = ct.load(a_scale, index=(ct.bid(0), k), shape=(FM, FK // 32), padding_mode=ZERO)
        yb = ct.load(b, index=(k, ct.bid(1)), shape=(FK, FN // 2), padding_mode=ZERO)
        y = ct.reshape(ct.unpack_from_bytes(ct.reshape(yb, (FK * FN // 2,)), f4), (FK, FN))
        ys = ct.load(b_scale, index=(k, ct.bid(1)), shape=(FK // 32, FN), padding_mode=ZERO)
        acc = ct.mma_scaled(x, xs, y, ys, acc)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc)


@kernel([C(u8, 2), C(e4m3, 2), C(u8, 2), C(e4m3, 2), C(f32, 2)])
@ct.kernel
def mma_scaled_f4_e4m3(a, a_scale, b, b_scale, c):
    """c[i, j] = sum_k a[i, k] * a_scale[i, k // 16] * b[k, j] * b_scale[k // 16, j].

    As mma_scaled_f4_e8m0 with f8E4M3FN scales in blocks of 16: a_scale: [M, K / 16],
    b_scale: [K / 16, N]; K a multiple of 16.
    """
    acc = ct.zeros((FM, FN), f32)
    for k in range(ct.num_tiles(a, 1, shape=(FM, FK // 2))):
        xb = ct.load(a, index=(ct.bid(0), k), shape=(FM, FK // 2), padding_mode=ZERO)
        x = ct.reshape(ct.unpack_from_bytes(ct.reshape(xb, (FM * FK // 2,)), f4), (FM, FK))
        xs = ct.load(a_scale, index=(ct.bid(0), k), shape=(FM, FK // 16), padding_mode=ZERO)
        yb = ct.load(b, index=(k, ct.bid(1)), shape=(FK, FN // 2), padding_mode=ZERO)
        y = ct.reshape(ct.unpack_from_bytes(ct.reshape(yb, (FK * FN // 2,)), f4), (FK, FN))
        ys = ct.load(b_scale, index=(k, ct.bid(1)), shape=(FK // 16, FN), padding_mode=ZERO)
        acc = ct.mma_scaled(x, xs, y, ys, acc)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc)


@kernel([C(u8, 2), C(e5m3, 2), C(u8, 2), C(e5m3, 2), C(f32, 2)], version="13.4")
@ct.kernel
def mma_scaled_f4_e5m3(a, a_scale, b, b_scale, c):
    """c[i, j] = sum_k a[i, k] * a_scale[i, k // 32] * b[k, j] * b_scale[k // 32, j].

    As mma_scaled_f4_e8m0 with f8E5M3FNU scales (unsigned, 5 exponent bits with bias 15,
    3 mantissa bits, 0xFF NaN) in blocks of 32 (bytecode 13.4, which has that type).
    """
    acc = ct.zeros((FM, FN), f32)
    for k in range(ct.num_tiles(a, 1, shape=(FM, FK // 2))):
        xb = ct.load(a, index=(ct.bid(0), k), shape=(FM, FK // 2), padding_mode=ZERO)
        x = ct.reshape(ct.unpack_from_bytes(ct.reshape(xb, (FM * FK // 2,)), f4), (FM, FK))
        xs = ct.load(a_scale, index=(ct.bid(0), k), shape=(FM, FK // 32), padding_mode=ZERO)
        yb = ct.load(b, index=(k, ct.bid(1)), shape=(FK, FN // 2), padding_mode=ZERO)
        y = ct.reshape(ct.unpack_from_bytes(ct.reshape(yb, (FK * FN // 2,)), f4), (FK, FN))
        ys = ct.load(b_scale, index=(k, ct.bid(1)), shape=(FK // 32, FN), padding_mode=ZERO)
        acc = ct.mma_scaled(x, xs, y, ys, acc)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc)


@kernel([C(f4, 2), C(f32, 2), C(f4, 2)])
@ct.kernel
def f4_copy(a, c, d):
    """c[i, j] = f32(a[i, j]) and d[i, j] = a[i, j] for f4E2M1FN arrays a and d [M, N] (two
    elements a byte in memory, element j of a row in the low nibble of byte j / 2 when j is
    even) and c [M, N] (f32). Grid (cdiv(M, 32), cdiv(N, 64), 1); out-of-bounds elements of
    a read as -0 and are not stored.
    """
    x = ct.load(a, index=(ct.bid(0), ct.bid(1)), shape=(32, 64), padding_mode=ct.PaddingMode.NEG_ZERO)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=ct.astype(x, f32))
    ct.store(d, index=(ct.bid(0), ct.bid(1)), tile=x)


@kernel([C(f4, 1), C(f32, 1)])
@ct.kernel
def f4_nan_padding(a, c):
    """c[i] = f32(a[i]) for a 64-element tile of an f4E2M1FN array padded with NaN, which
    f4E2M1FN cannot hold: a valid program neither this compiler nor NVIDIA's compiles.
    """
    x = ct.load(a, index=(0,), shape=(64,), padding_mode=ct.PaddingMode.NAN)
    ct.store(c, index=(0,), tile=ct.astype(x, f32))


@kernel([C(f4, 2), C(e8m0, 2), C(f4, 2), C(e8m0, 2), C(f32, 2)])
@ct.kernel
def mma_scaled_f4_view(a, a_scale, b, b_scale, c):
    """As mma_scaled_f4_e8m0 with a: [M, K] and b: [K, N] f4E2M1FN arrays loaded directly
    (two elements a byte in memory, as there).
    """
    acc = ct.zeros((FM, FN), f32)
    for k in range(ct.num_tiles(a, 1, shape=(FM, FK))):
        x = ct.load(a, index=(ct.bid(0), k), shape=(FM, FK), padding_mode=ZERO)
        xs = ct.load(a_scale, index=(ct.bid(0), k), shape=(FM, FK // 32), padding_mode=ZERO)
        y = ct.load(b, index=(k, ct.bid(1)), shape=(FK, FN), padding_mode=ZERO)
        ys = ct.load(b_scale, index=(k, ct.bid(1)), shape=(FK // 32, FN), padding_mode=ZERO)
        acc = ct.mma_scaled(x, xs, y, ys, acc)
    ct.store(c, index=(ct.bid(0), ct.bid(1)), tile=acc)


@kernel([C(e4m3, 1)])
@ct.kernel
def print_e4m3(a):
    """Prints the first 16 elements of an f8E4M3FN array: "[v0, ..., v15]" with each
    value (exact in f64) as "%f", then a newline, as NVIDIA's tileiras prints them.
    """
    x = ct.load(a, index=(0,), shape=(16,))
    ct.printf("%f\n", x)


@kernel([C(f32, 1), C(ct.bool_, 1)])
@ct.kernel
def f32_to_bool(a, c):
    """c[i] = bool(a[i]) for the first 16 elements: an ftoi from f32 to i1 (unsigned),
    which NVIDIA's tileiras compiles as a[i] != 0 (NaN true), as NumPy's bool does.
    """
    x = ct.load(a, index=(0,), shape=(16,))
    ct.store(c, index=(0,), tile=ct.astype(x, ct.bool_))
